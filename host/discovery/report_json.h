// The discovery report as JSON (the API's report and `ephost plugins`).
#pragma once

#include <string>
#include <vector>

#include "discovery/plugin_record.h"

namespace ephost {

// A JSON array with one object per record, in discovery order: path, name, vendor, version, device_type,
// context_source_keys[], sdk_version, hardware_architecture, driver_version, default_priority,
// abi_version, loaded (usable), in_process (loaded in process; false for a usable plugin not needed yet:
// lazy loading), reason, builtin, probed_by, probe_outcome, cached (the verdict came from the registry
// cache), probed_at (unix seconds; null when never probed: the built-in plugin, files skipped before a
// probe), age_s (how old the verdict is; null likewise), probed_again (why a verdict the cache had for
// this very file was not used: verdict_freshness.h; "" otherwise), devices[] (when it drives some: the loaded
// plugin's own, or those its probe saw while it is not loaded). Invalid UTF-8 from a plugin is replaced,
// never thrown.
std::string discovery_report_json(const std::vector<const PluginRecord*>& records);

}  // namespace ephost
