#include "recording_plugin.hpp"

#include <algorithm>

#include "plugin_call_record.h"
#include "plugin_interposer.h"

#ifndef EPHOST_TEST_PLUGIN_MAX_ABI
#define EPHOST_TEST_PLUGIN_MAX_ABI EPHOST_PLUGIN_ABI_VERSION
#endif

namespace ephost_test::recording {

namespace {

using ephost::observer::ObservedCall;

ephost::observer::ObserverOptions options(const char* plugin_name) {
  ephost::observer::ObserverOptions o;
  o.plugin_name = plugin_name;
  o.sink = &record_plugin_call;
  o.clock = &plugin_call_clock_tick;
  return o;
}

// Records "unload" when the library's static destructors run (dlclose).
struct UnloadRecorder {
  const char* plugin = nullptr;
  ~UnloadRecorder() {
    if (plugin == nullptr) return;  // never negotiated
    ObservedCall call("unload");
    call.done();
  }
} g_unload;

}  // namespace

EphostStatus* negotiate(const char* plugin_name, EphostPluginNegotiateFn sdk_entry, EphostPluginNegotiation* n) {
  ephost::observer::set_observer_options(options(plugin_name));
  g_unload.plugin = plugin_name;
  ObservedCall call("negotiate");
  if (n == nullptr || n->host_api == nullptr) return call.done(sdk_entry(n));
  call->offered_min = n->host_min_abi_version;
  call->offered_max = n->host_max_abi_version;
  call->host_api_size = n->host_api->struct_size;
  // A plugin built for an older ABI knows no newer one: the SDK sees the offer capped there.
  const uint32_t offered_max = n->host_max_abi_version;
  n->host_max_abi_version = std::min<uint32_t>(offered_max, EPHOST_TEST_PLUGIN_MAX_ABI);
  EphostStatus* status = sdk_entry(n);
  n->host_max_abi_version = offered_max;
  if (status == nullptr && n->plugin != nullptr) {
    n->plugin = ephost::observer::observe_plugin(n->plugin, n->host_api, options(plugin_name));
    call->version = n->plugin_abi_version;
  }
  return call.done(status);
}

}  // namespace ephost_test::recording
