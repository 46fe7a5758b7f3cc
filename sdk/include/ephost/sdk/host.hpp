// ephost plugin SDK — the host's function table this plugin was given, and the plugin ABI version it
// negotiated, which decides what of that table the SDK may use.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstdint>

#include "ephost/ephost_plugin.h"

namespace ephost::sdk {

// The host's table, set once by the generated entry point before anything else runs.
inline const EphostHostApi*& host_api_slot() {
  static const EphostHostApi* api = nullptr;
  return api;
}
inline const EphostHostApi& host() { return *host_api_slot(); }

// The plugin ABI version this plugin answered in negotiation (0 before it), set by the generated entry
// point. What the SDK may use of the host table depends on it alone (EphostPluginAbiIncludes).
inline uint32_t& negotiated_abi_version_slot() {
  static uint32_t version = 0;
  return version;
}
inline uint32_t negotiated_abi_version() { return negotiated_abi_version_slot(); }

// True when the host offers plugin ABI 2 (sequence and optional values). Against an older host the
// SDK negotiates ABI 1: nodes with such values are never claimed for it, so kernels never see them.
inline bool host_has_values() {
  return EphostPluginAbiIncludes(negotiated_abi_version(), EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES);
}

// True when the host offers plugin ABI 3 (devices, device memory, streams). Against an older host a
// device plugin has no devices: it negotiates ABI 1 or 2 and its providers use host memory.
inline bool host_has_devices() {
  return EphostPluginAbiIncludes(negotiated_abi_version(), EPHOST_PLUGIN_ABI_DEVICES);
}

// True when the host takes profile spans from inside a step (plugin ABI 4). Against an older host the
// SDK's profiling helpers answer "off" and report nothing: the step keeps its one span.
inline bool host_has_profile_spans() {
  return EphostPluginAbiIncludes(negotiated_abi_version(), EPHOST_PLUGIN_ABI_PROFILE_SPANS);
}

// True when the host offers plugin ABI 4 (run control: kernel_run_check). Against an older host a
// kernel cannot learn that its run should stop: it runs to the end, as it did before.
inline bool host_has_run_control() {
  return EphostPluginAbiIncludes(negotiated_abi_version(), EPHOST_PLUGIN_ABI_RUN_CONTROL);
}

// True when the host takes "done with this initializer" (plugin ABI 5: value_initializer_done).
// Against an older host the host keeps every initializer, as it did before.
inline bool host_has_initializer_release() {
  return EphostPluginAbiIncludes(negotiated_abi_version(), EPHOST_PLUGIN_ABI_INITIALIZER_RELEASE);
}

// The provider whose compile or kernel_create runs on this thread (the SDK's glue sets it around those
// calls), or NULL: what initializer_done (graph.hpp) names as the provider that is done.
inline EphostProvider*& current_provider_slot() {
  thread_local EphostProvider* provider = nullptr;
  return provider;
}
class CurrentProviderScope {
 public:
  explicit CurrentProviderScope(EphostProvider* provider) : outer_(current_provider_slot()) {
    current_provider_slot() = provider;
  }
  ~CurrentProviderScope() { current_provider_slot() = outer_; }
  CurrentProviderScope(const CurrentProviderScope&) = delete;
  CurrentProviderScope& operator=(const CurrentProviderScope&) = delete;

 private:
  EphostProvider* outer_;
};

}  // namespace ephost::sdk
