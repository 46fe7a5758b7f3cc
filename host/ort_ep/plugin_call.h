// One call into an ONNX Runtime plugin EP's code, made as every door to plugin code makes it
// (core/plugin_call.h): marked for the fault reporter, fenced against C++ exceptions, and its status read
// only when it is one the host made (ort_objects.h: take_status).
#pragma once

#include <optional>
#include <string>

#include "core/plugin_fault.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {

// Runs `fn`, a plugin call returning OrtStatus*, marked as `call` of `plugin` (library `library`; the
// strings must outlive the call). Nothing on success; the plugin's code and message otherwise.
template <typename Fn>
std::optional<StatusReading> call_plugin(const char* plugin, const char* library, const char* call, Fn&& fn) {
  OrtStatus* status = nullptr;
  try {
    PluginCallScope scope(plugin, library, call);
    status = fn();
  } catch (const std::exception& e) {
    return StatusReading{ORT_RUNTIME_EXCEPTION, std::string("threw a C++ exception across the ABI: ") + e.what()};
  } catch (...) {
    return StatusReading{ORT_RUNTIME_EXCEPTION, "threw a C++ exception across the ABI"};
  }
  if (!status) return std::nullopt;
  return take_status(status);
}

// The same for a call that returns no status (a release, a getter); exceptions are swallowed.
template <typename Fn>
void call_plugin_void(const char* plugin, const char* library, const char* call, Fn&& fn) noexcept {
  try {
    PluginCallScope scope(plugin, library, call);
    fn();
  } catch (...) {
  }
}

// "ORT_FAIL", "ORT_NOT_IMPLEMENTED", ... for messages.
const char* error_code_name(OrtErrorCode code);

}  // namespace ephost::ort_ep
