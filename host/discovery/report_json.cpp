#include "discovery/report_json.h"

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "discovery/verdict_freshness.h"
#include "ort_ep/library.h"

namespace ephost {
namespace {

nlohmann::json pairs_json(const OrtKeyValuePairs& pairs) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < pairs.keys.size() && i < pairs.values.size(); ++i) out[pairs.keys[i]] = pairs.values[i];
  return out;
}

// The metadata and options an ONNX Runtime plugin EP's factory gave its device `index` (CreateEpDevice), as
// onnxruntime.get_ep_devices() shows them, and the EP's name. `factory`: the record's (ort_factory).
void add_ort_ep_device_fields(const ort_ep::OrtEpLibrary& library, uint32_t factory, uint32_t index,
                              nlohmann::json& device) {
  const std::vector<const OrtEpDevice*> served = library.served_devices(factory);
  if (index >= served.size()) return;
  device["ep_name"] = served[index]->ep_name;
  device["ep_metadata"] = pairs_json(served[index]->ep_metadata);
  device["ep_options"] = pairs_json(served[index]->ep_options);
}

}  // namespace

std::string discovery_report_json(const std::vector<const PluginRecord*>& records) {
  nlohmann::json report = nlohmann::json::array();
  const int64_t now = unix_now_s();
  for (const PluginRecord* r : records) {
    nlohmann::json devices = nlohmann::json::array();
    // A plugin not loaded in process yet (lazy loading) shows the devices its probe saw.
    const bool in_process = r->in_process.load(std::memory_order_acquire);
    if (!in_process) {
      uint32_t index = 0;
      for (const ProbedDevice& d : r->probed_devices) {
        devices.push_back({{"index", index},
                           {"label", r->name + ":" + std::to_string(index)},
                           {"type", d.type},
                           {"vendor", d.vendor},
                           {"name", d.name},
                           {"driver_version", d.driver_version},
                           {"hardware_architecture", d.hardware_architecture},
                           {"memory_bytes", d.memory_bytes},
                           {"host_memory_usable", d.host_memory_usable},
                           {"memory_kinds", d.memory_kinds}});
        ++index;
      }
    }
    if (in_process)
      for (const auto& d : r->devices) {
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
      // An ONNX Runtime plugin EP's device: the metadata and options its factory gave it (CreateEpDevice).
      if (r->ort) add_ort_ep_device_fields(*r->ort, r->ort_factory, d->index(), devices.back());
      }
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
                      {"loaded", r->loaded.load(std::memory_order_acquire)},
                      // false for a usable plugin whose code nothing in this process needed yet (lazy loading)
                      {"in_process", in_process},
                      {"reason", r->skip_reason()},
                      {"builtin", r->builtin},
                      {"probed_by", r->probed_by},
                      {"probe_outcome", r->probe_outcome},
                      // the verdict came from the registry cache, probed at probed_at, age_s ago
                      {"cached", r->probed_by == "registry"},
                      {"probed_at", nullptr},
                      {"age_s", nullptr},
                      {"probed_again", r->reprobe_reason}};
    if (r->probed_at != 0) {
      entry["probed_at"] = r->probed_at;
      entry["age_s"] = now > r->probed_at ? now - r->probed_at : 0;
    }
    // Plugin ABI 3: the devices a plugin drives (listed only for plugins that have some).
    if (!devices.empty()) entry["devices"] = devices;
    // Host devices it cannot use, and why (ONNX Runtime plugin EPs that say so).
    if (!r->unsupported_devices.empty()) entry["unsupported_devices"] = r->unsupported_devices;
    report.push_back(std::move(entry));
  }
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ephost
