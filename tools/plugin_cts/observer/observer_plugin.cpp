// The observer plugin (observer.h): the plugin observer (tools/plugin_observer) in front of the plugin
// under test, its calls kept for the kit and counted.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "observer.h"
#include "plugin_interposer.h"

namespace {

using ephost::observer::PluginCall;

// Every call, kept for the lifecycle rules.
struct Calls {
  std::mutex mutex;
  std::vector<PluginCall> calls;
};
Calls& kept() {
  static Calls* c = new Calls;  // never destroyed: calls may come at process exit
  return *c;
}
void keep(PluginCall call) {
  std::lock_guard<std::mutex> lock(kept().mutex);
  kept().calls.push_back(std::move(call));
}

// The observer's names of the members EphostCtsObservation counts, in EphostCtsMember order.
const char* const kMemberNames[EPHOST_CTS_MEMBER_COUNT] = {
    "describe", "provider_create", "provider_release", "get_capability", "kernel_create", "kernel_compute",
    "kernel_release", "compile", "create_state", "compute", "release_state", "release", "on_run_start",
    "on_run_end", "context_emit", "context_judge", "context_load"};

EphostStatus* refuse(const EphostPluginNegotiation* n, const std::string& why) {
  return n->host_api->status_create(EPHOST_FAIL, ("ephost-plugin-cts observer: " + why).c_str());
}

}  // namespace

extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* n) {
  if (n == nullptr || n->host_api == nullptr) return nullptr;
  const char* path = std::getenv(EPHOST_CTS_TARGET_ENV);
  if (path == nullptr || *path == '\0') return refuse(n, std::string(EPHOST_CTS_TARGET_ENV) + " names no plugin");
  // Kept loaded for the process: the host may call the table until it unloads the observer.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return refuse(n, std::string("cannot load ") + path + ": " + dlerror());
  auto entry = reinterpret_cast<EphostPluginNegotiateFn>(dlsym(library, EPHOST_PLUGIN_ENTRY_POINT));
  if (entry == nullptr) return refuse(n, std::string(path) + " exports no " + EPHOST_PLUGIN_ENTRY_POINT);
  EphostStatus* status = entry(n);
  if (status != nullptr || n->plugin == nullptr) return status;
  ephost::observer::ObserverOptions options;
  options.plugin_name = "plugin under test";
  options.sink = &keep;
  n->plugin = ephost::observer::observe_plugin(n->plugin, n->host_api, options);
  return nullptr;
}

extern "C" EPHOST_EXPORT void ephost_cts_observation(EphostCtsObservation* out) {
  const ephost::observer::ObservedCounts counts = ephost::observer::observed_counts();
  for (int i = 0; i < EPHOST_CTS_MEMBER_COUNT; ++i) {
    auto calls = counts.calls.find(kMemberNames[i]);
    auto failures = counts.failures.find(kMemberNames[i]);
    out->calls[i] = calls == counts.calls.end() ? 0 : calls->second;
    out->failures[i] = failures == counts.failures.end() ? 0 : failures->second;
  }
  out->max_kernel_computes_in_flight = counts.max_kernel_computes_in_flight;
  out->max_computes_in_flight = counts.max_computes_in_flight;
  out->max_runs_in_flight = counts.max_runs_in_flight;
  out->run_ends_without_start = counts.run_ends_without_start;
}

extern "C" EPHOST_EXPORT void ephost_cts_calls(std::vector<PluginCall>* out) {
  {
    std::lock_guard<std::mutex> lock(kept().mutex);
    *out = kept().calls;
  }
  // Calls are kept as they return; two threads may keep them in the other order than they ticked.
  std::stable_sort(out->begin(), out->end(), [](const PluginCall& a, const PluginCall& b) { return a.end < b.end; });
}

extern "C" EPHOST_EXPORT void ephost_cts_set_judge_hook(EphostCtsJudgeHook hook, void* user) {
  if (hook == nullptr) {
    ephost::observer::set_judge_hook(nullptr);
    return;
  }
  ephost::observer::set_judge_hook([hook, user](const EphostHostApi* host, const EphostPlugin* plugin,
                                                EphostProvider* provider, const EphostNode* node, const void* blob,
                                                size_t size) { hook(user, host, plugin, provider, node, blob, size); });
}
