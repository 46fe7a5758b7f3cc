// Discovery's side of ONNX Runtime plugin EPs (host/ort_ep/): recognizing such a library among the
// plugin candidates and adopting it into a PluginRecord, as negotiation and describe do for an ephost
// plugin. Used by the probe (in the scanner's child process, under the same timeout and crash isolation)
// and by the loads in process (eager and lazy).
#pragma once

#include "discovery/plugin_library.h"
#include "discovery/plugin_record.h"

namespace ephost {

// When `library` is an ONNX Runtime plugin EP: creates its factories and asks for its devices
// (ort_ep::OrtEpLibrary), fills `record` (name, vendor, version, sdk_version naming the API it asked
// for, devices, `ort`) and returns true. Returns false for any other library (an ephost plugin, or one
// that is neither: negotiation then says what it lacks). Throws PluginSkipped for an ONNX Runtime
// provider-bridge library and for a plugin EP that cannot be served, saying why.
bool adopt_if_ort_plugin_ep(const PluginLibrary& library, PluginRecord& record);

}  // namespace ephost
