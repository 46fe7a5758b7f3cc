#include "discovery/report_json.h"

#include <nlohmann/json.hpp>

#include "core/device.h"

namespace ephost {

std::string discovery_report_json(const std::vector<const PluginRecord*>& records) {
  nlohmann::json report = nlohmann::json::array();
  for (const PluginRecord* r : records) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : r->devices)
      devices.push_back({{"index", d->index()},
                         {"label", d->label()},
                         {"type", device_type_name(d->type())},
                         {"vendor", d->vendor()},
                         {"name", d->name()},
                         {"driver_version", d->driver_version()},
                         {"hardware_architecture", d->hardware_architecture()},
                         {"memory_bytes", d->memory_bytes()},
                         {"host_memory_usable", d->host_memory_usable()},
                         {"memory_kinds", d->memory_kinds()}});
    nlohmann::json entry = {{"path", r->path},
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
                      {"probe_outcome", r->probe_outcome}};
    // Plugin ABI 3: the devices a plugin drives (listed only for plugins that have some).
    if (!r->devices.empty()) entry["devices"] = devices;
    report.push_back(std::move(entry));
  }
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ephost
