#include "discovery/negotiation.h"

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "plugin_abi/host_api.h"
#include "discovery/plugin_call.h"

namespace ephost {
namespace {

// The host table a plugin is given lives as long as the process, one per entry point. A plugin keeps
// one pointer to it in a global, but a library (and the built-in CPU plugin) is shared by every Env
// that loads it: a table owned by one Env's record would dangle in the others once that Env is gone.
// Tables are never freed (a few hundred bytes per plugin library), so no Env's end can pull one away.
std::mutex& negotiation_mutex() {
  static std::mutex m;
  return m;
}
EphostHostApi& table_for(EphostPluginNegotiateFn entry) {
  static auto* tables = new std::map<EphostPluginNegotiateFn, std::unique_ptr<EphostHostApi>>();
  auto& slot = (*tables)[entry];
  if (!slot) slot = std::make_unique<EphostHostApi>(make_host_api(EPHOST_PLUGIN_ABI_VERSION));
  return *slot;
}

// Whether this host speaks plugin ABI `version`: it includes the oldest version the host accepts, and
// the newest the host speaks includes it.
bool host_speaks(uint32_t version) {
  return EphostPluginAbiIncludes(version, EPHOST_PLUGIN_ABI_MIN_VERSION) &&
         EphostPluginAbiIncludes(EPHOST_PLUGIN_ABI_VERSION, version);
}

}  // namespace

std::string plugin_table_problem(const EphostPlugin* table, uint32_t abi_version) {
  if (table == nullptr) return "negotiation returned no function table (plugin is NULL)";
  // A table carries at least every member of the version it speaks.
  const uint32_t needed = EphostPluginSize(abi_version);
  if (table->struct_size < needed)
    return fmt::format("function table too small: struct_size {} bytes, ABI {} needs at least {}", table->struct_size,
                       abi_version, needed);
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
  // Envs may discover plugins concurrently; one negotiation at a time keeps each table's update whole.
  std::lock_guard<std::mutex> lock(negotiation_mutex());
  EphostHostApi& table = table_for(entry);
  const EphostHostApi& api = table;

  EphostPluginNegotiation negotiation{};
  negotiation.struct_size = sizeof(EphostPluginNegotiation);
  negotiation.host_min_abi_version = EPHOST_PLUGIN_ABI_MIN_VERSION;
  negotiation.host_max_abi_version = EPHOST_PLUGIN_ABI_VERSION;
  negotiation.host_api = &api;
  EphostStatus* status = call_plugin("negotiation", [&] { return entry(&negotiation); });
  if (status != nullptr) throw PluginSkipped("negotiation failed: " + take_status_text(api, status));

  uint32_t version = negotiation.plugin_abi_version;
  if (!host_speaks(version))
    throw PluginSkipped(fmt::format("plugin answered ABI {}, host speaks {}..{}", version,
                                    EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION));
  std::string problem = plugin_table_problem(negotiation.plugin, version);
  if (!problem.empty()) throw PluginSkipped(problem);

  // In place, cut to the negotiated version: the plugin already holds this address. A library loaded
  // again (another Env) answers the same version, so a table that already says it is left untouched
  // while that Env's plugin uses it.
  if (table.abi_version != version) table = make_host_api(version);
  record.host_api = &table;
  record.plugin = negotiation.plugin;
  record.abi_version = version;
}

}  // namespace ephost
