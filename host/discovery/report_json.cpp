#include "discovery/report_json.h"

#include <nlohmann/json.hpp>

namespace ephost {

std::string discovery_report_json(const std::vector<const PluginRecord*>& records) {
  nlohmann::json report = nlohmann::json::array();
  for (const PluginRecord* r : records) {
    report.push_back({{"path", r->path},
                      {"name", r->name},
                      {"vendor", r->vendor},
                      {"version", r->version},
                      {"device_type", r->device_type},
                      {"context_source_keys", r->context_source_keys},
                      {"sdk_version", r->sdk_version},
                      {"hardware_architecture", r->hardware_architecture},
                      {"driver_version", r->driver_version},
                      {"default_priority", r->default_priority},
                      {"abi_version", r->abi_version},
                      {"loaded", r->loaded},
                      {"reason", r->reason},
                      {"builtin", r->builtin},
                      {"probed_by", r->probed_by},
                      {"probe_outcome", r->probe_outcome}});
  }
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ephost
