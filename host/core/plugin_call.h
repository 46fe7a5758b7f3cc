// One call into a plugin's own code after discovery, as every door to plugin code makes it (the
// provider door, host/provider/, and the device calls, core/device.h): marked, so that a crash or hang
// inside it is reported naming the plugin, its library and the call (core/plugin_fault.h); fenced, so
// that a C++ exception a plugin throws across the ABI stops here; and its status read only when it is a
// status the host created. What went wrong comes back as a PluginCallFailure, which each door words
// for its callers.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include "core/plugin_fault.h"
#include "ephost/ephost_types.h"

namespace ephost {

struct PluginCallFailure {
  enum class Kind {
    kStatus,      // the plugin returned a status: `code` and `detail` (its message) are the plugin's
    kNotAStatus,  // it returned a pointer that is no live status; `detail` is the pointer, never read
    kThrew,       // it threw a C++ exception; `detail` is what() or "unknown exception"
  };
  Kind kind = Kind::kStatus;
  EphostStatusCode code = EPHOST_EP_FAIL;
  std::string detail;
};

// Reads and releases a status a plugin call returned (non-null).
PluginCallFailure failure_from_status(EphostStatus* status);

// Runs `fn`, a plugin call returning EphostStatus*, marked as `call` of `plugin` (library path
// `library`; the three strings must outlive the call). Returns nothing on success.
template <typename Fn>
std::optional<PluginCallFailure> run_plugin_call(const char* plugin, const char* library, const char* call, Fn&& fn) {
  EphostStatus* status = nullptr;
  try {
    PluginCallScope scope(plugin, library, call);
    status = fn();
  } catch (const std::exception& e) {
    return PluginCallFailure{PluginCallFailure::Kind::kThrew, EPHOST_RUNTIME_EXCEPTION, e.what()};
  } catch (...) {
    return PluginCallFailure{PluginCallFailure::Kind::kThrew, EPHOST_RUNTIME_EXCEPTION, "unknown exception"};
  }
  if (!status) return std::nullopt;
  return failure_from_status(status);
}

// Runs `fn`, a plugin call that returns nothing (a release), marked and fenced: whatever it throws is
// swallowed, since releases run in destructors and cannot be helped.
template <typename Fn>
void run_plugin_release(const char* plugin, const char* library, const char* call, Fn&& fn) noexcept {
  try {
    PluginCallScope scope(plugin, library, call);
    fn();
  } catch (...) {
  }
}

}  // namespace ephost
