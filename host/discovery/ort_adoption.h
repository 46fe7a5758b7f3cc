// Discovery's side of ONNX Runtime plugin EPs (host/ort_ep/): recognizing such a library among the
// plugin candidates and adopting it into a PluginRecord, as negotiation and describe do for an ephost
// plugin. Used by the probe (in the scanner's child process, under the same timeout and crash isolation)
// and by the loads in process (eager and lazy).
#pragma once

#include "discovery/plugin_library.h"
#include "discovery/plugin_record.h"

namespace ephost {

// When `library` is an ONNX Runtime plugin EP: creates its factories and asks for their devices
// (ort_ep::OrtEpLibrary, made once for the whole library) and makes one provider per factory served:
// `record` (its path and canonical_path set) becomes the first factory's, and a record for each further
// factory is appended to `siblings` (same path, library and `ort`). Each says its factory's name, vendor,
// version, sdk_version naming the API asked for, devices and `ort_factory`. Returns true then; false for
// any other library (an ephost plugin, or one that is neither: negotiation then says what it lacks).
// Throws PluginSkipped for an ONNX Runtime provider-bridge library and for a plugin EP that cannot be
// served, saying why.
bool adopt_if_ort_plugin_ep(const std::shared_ptr<PluginLibrary>& library, PluginRecord& record,
                            std::vector<std::unique_ptr<PluginRecord>>& siblings);

}  // namespace ephost
