#include "discovery/negotiation.h"

#include <fmt/format.h>

#include <cstddef>

#include "abi/host_api.h"
#include "discovery/plugin_call.h"

namespace ephost {
namespace {

// Size of EphostPlugin as ABI 1 defines it: every table must cover at least that much.
constexpr size_t kAbi1PluginTableSize = offsetof(EphostPlugin, context_load) + sizeof(EphostPlugin::context_load);

}  // namespace

std::string plugin_table_problem(const EphostPlugin* table, uint32_t abi_version) {
  if (table == nullptr) return "negotiation returned no function table (plugin is NULL)";
  if (table->struct_size < kAbi1PluginTableSize)
    return fmt::format("function table too small: struct_size {} bytes, ABI 1 needs at least {}", table->struct_size,
                       kAbi1PluginTableSize);
  if (table->abi_version != abi_version)
    return fmt::format("function table says ABI {} but negotiation answered ABI {}", table->abi_version,
                       abi_version);
  const struct {
    const char* name;
    bool present;
  } required[] = {{"describe", table->describe != nullptr},
                  {"provider_create", table->provider_create != nullptr},
                  {"provider_release", table->provider_release != nullptr},
                  {"get_capability", table->get_capability != nullptr}};
  for (const auto& member : required)
    if (!member.present) return fmt::format("function table lacks required member '{}'", member.name);
  return {};
}

void negotiate_plugin(EphostPluginNegotiateFn entry, PluginRecord& record) {
  if (entry == nullptr) throw PluginSkipped("no entry point: the negotiation function is NULL");
  record.host_api_storage = std::make_unique<EphostHostApi>(make_host_api(EPHOST_PLUGIN_ABI_VERSION));
  const EphostHostApi& api = *record.host_api_storage;

  EphostPluginNegotiation negotiation{};
  negotiation.struct_size = sizeof(EphostPluginNegotiation);
  negotiation.host_min_abi_version = EPHOST_PLUGIN_ABI_MIN_VERSION;
  negotiation.host_max_abi_version = EPHOST_PLUGIN_ABI_VERSION;
  negotiation.host_api = &api;
  EphostStatus* status = call_plugin("negotiation", [&] { return entry(&negotiation); });
  if (status != nullptr) throw PluginSkipped("negotiation failed: " + take_status_text(api, status));

  uint32_t version = negotiation.plugin_abi_version;
  if (version < EPHOST_PLUGIN_ABI_MIN_VERSION || version > EPHOST_PLUGIN_ABI_VERSION)
    throw PluginSkipped(fmt::format("plugin answered ABI {}, host speaks {}..{}", version,
                                    EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION));
  std::string problem = plugin_table_problem(negotiation.plugin, version);
  if (!problem.empty()) throw PluginSkipped(problem);

  // In place: the plugin already holds this address.
  *record.host_api_storage = make_host_api(version);
  record.host_api_storage->abi_version = version;
  record.host_api = record.host_api_storage.get();
  record.plugin = negotiation.plugin;
  record.abi_version = version;
}

}  // namespace ephost
