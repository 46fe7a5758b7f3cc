// ABI negotiation with a plugin's entry point, and the checks on the function table it answers with.
#pragma once

#include <cstdint>

#include "discovery/plugin_record.h"

namespace ephost {

// Offers the host's range [EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION] and a host table
// owned by `record`, then checks the answer. On success fills record.abi_version, record.plugin and
// record.host_api (whose abi_version is then the negotiated one). Throws PluginSkipped with the reason
// otherwise; record.host_api_storage is then still owned by the record, because the plugin may keep the
// pointer until it is unloaded.
void negotiate_plugin(EphostPluginNegotiateFn entry, PluginRecord& record);

// "" when `table` is usable at `abi_version`, otherwise why not.
std::string plugin_table_problem(const EphostPlugin* table, uint32_t abi_version);

}  // namespace ephost
