// Probe results as JSON, the form they take in the scanner protocol (plugin_scanner.h) and in the
// registry cache (registry_cache.h). Reading is strict: anything that is not exactly what writing
// produces is rejected, since both sources cross a trust boundary (another process, a file).
#pragma once

#include <nlohmann/json.hpp>

#include "discovery/plugin_probe.h"

namespace ephost {

nlohmann::json probe_result_to_json(const ProbeResult& result);

// Throws std::runtime_error saying which member is missing or of the wrong type.
ProbeResult probe_result_from_json(const nlohmann::json& json);

}  // namespace ephost
