#include "discovery/device_enumeration.h"

#include <fmt/format.h>

#include "core/device.h"
#include "discovery/plugin_call.h"

namespace ephost {
namespace {

// A plugin's answer about its own devices is bounded, so that a broken count cannot exhaust memory.
constexpr uint32_t kMaxDevicesPerPlugin = 64;

}  // namespace

std::string device_table_problem(const EphostPlugin& t) {
  const struct {
    const char* name;
    bool present;
  } required[] = {{"device_describe", t.device_describe != nullptr},
                  {"provider_create_for_device", t.provider_create_for_device != nullptr},
                  {"device_allocate", t.device_allocate != nullptr},
                  {"device_free", t.device_free != nullptr},
                  {"copy_to_device", t.copy_to_device != nullptr},
                  {"copy_to_host", t.copy_to_host != nullptr}};
  for (const auto& member : required)
    if (!member.present) return fmt::format("a device plugin (device_count set) lacks required member '{}'", member.name);
  const int streams = (t.stream_create != nullptr) + (t.stream_synchronize != nullptr) + (t.stream_release != nullptr);
  if (streams != 0 && streams != 3)
    return "stream_create, stream_synchronize and stream_release must be given together (or none of them)";
  return {};
}

void enumerate_devices(PluginRecord& record) {
  const EphostPlugin& table = *record.plugin;
  if (!EphostPluginAbiIncludes(record.abi_version, EPHOST_PLUGIN_ABI_DEVICES) || table.device_count == nullptr) return;
  const std::string problem = device_table_problem(table);
  if (!problem.empty()) throw PluginSkipped(problem);
  uint32_t count = 0;
  if (EphostStatus* status = call_plugin("device_count", [&] { return table.device_count(&count); }))
    throw PluginSkipped("device_count failed: " + take_status_text(*record.host_api, status));
  if (count > kMaxDevicesPerPlugin)
    throw PluginSkipped(fmt::format("device_count says {} devices; at most {} are supported", count,
                                    kMaxDevicesPerPlugin));
  for (uint32_t i = 0; i < count; ++i) {
    EphostDeviceInfo info{};
    info.struct_size = sizeof(EphostDeviceInfo);
    if (EphostStatus* status = call_plugin("device_describe", [&] { return table.device_describe(i, &info); }))
      throw PluginSkipped(fmt::format("device_describe({}) failed: {}", i, take_status_text(*record.host_api, status)));
    if (info.name == nullptr || *info.name == '\0')
      throw PluginSkipped(fmt::format("device {} has no name", i));
    if (info.device_type < EPHOST_DEVICE_CPU || info.device_type > EPHOST_DEVICE_ACCELERATOR)
      throw PluginSkipped(fmt::format("device {} ('{}') has unknown device type {}", i, info.name, info.device_type));
    if ((info.memory_kinds & EPHOST_MEMORY_KIND_BIT(EPHOST_MEMORY_DEVICE)) == 0 && !info.host_memory_usable)
      throw PluginSkipped(fmt::format("device {} ('{}') offers no device memory and cannot use host memory", i,
                                      info.name));
    record.devices.push_back(std::make_unique<Device>(record.plugin, record.name, record.path, i, info));
  }
}

}  // namespace ephost
