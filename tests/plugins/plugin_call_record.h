// What the host did to the test plugins, as they saw it (Vulkan-Loader's test ICD records what the
// loader did to it the same way): every call through their function tables (EphostPlugin, and the
// compute units compile hands out), with its order, its thread, the handles it was given and made,
// what it returned; the negotiation, and the library's unloading.
//
// The test plugins write it (recording_plugin.hpp); integration tests read it. It lives in this
// shared library, which both link, and not in a plugin: a plugin library comes and goes with the env
// that loads it while the record stays, so a test sees the unloading itself and what came before it.
// Calls are kept only while a test holds a PluginCallRecording, one at a time: nothing is carried
// from one test into the next, and a process that merely loads a test plugin (the `ephost` command
// in the CLI tests) keeps nothing.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#define EPHOST_TEST_RECORD_EXPORT __attribute__((visibility("default")))

namespace ephost_test {

struct PluginCall {
  std::string plugin;    // the test plugin's name ("alpha", "beta", ...)
  // The member of EphostPlugin called ("describe", "provider_create", "kernel_compute", "compile",
  // "on_run_end", "context_load", ...), of an EphostComputeInfo compile or context_load made
  // ("create_state", "compute", "release_state", "release"), or "negotiate" (the entry point) and
  // "unload" (the library's static destructors ran: dlclose).
  std::string function;
  uint64_t begin = 0;  // when the call started and when it returned, on one clock that every call
  uint64_t end = 0;    // ticks: two calls overlapped when each began before the other returned
  std::thread::id thread;
  bool failed = false;  // it returned an error status

  const void* object = nullptr;    // the handle called on: provider, kernel, or compute unit (its `user`)
  const void* provider = nullptr;  // the provider a kernel or compute unit is made by (kernel_create, compile,
                                   // context_load)
  const void* state = nullptr;     // compute, release_state: the state handed in
  const void* made = nullptr;      // what the call made: provider, kernel, compute unit or state
  std::string name;  // compile, context_emit: the fused group; get_capability: the graph
  std::string node;  // kernel_create, kernel_compute: the node (read through the host at the time of the
                     // call); get_capability: the node owning the graph ("" for a main graph);
                     // context_judge, context_load: the EPContext node
  std::vector<std::pair<std::string, std::string>> options;  // provider_create

  // negotiate: the range the host offered, the version answered; describe: the host table's
  // abi_version at that time. Both: the host table's struct_size.
  uint32_t offered_min = 0, offered_max = 0, version = 0, host_api_size = 0;
  uint32_t info_size = 0;  // describe: EphostPluginInfo::struct_size as the host set it
  int32_t verdict = -1;    // context_judge: the EphostContextVerdict answered
};

// The record's clock: every call takes one tick when it starts and one when it returns.
EPHOST_TEST_RECORD_EXPORT uint64_t plugin_call_clock_tick();
// Adds a finished call to the record (kept only while a PluginCallRecording exists).
EPHOST_TEST_RECORD_EXPORT void record_plugin_call(PluginCall call);

// A test's recording: from construction to destruction the plugins' calls are kept. Only one may
// exist at a time (a second is a test bug, and aborts).
class EPHOST_TEST_RECORD_EXPORT PluginCallRecording {
 public:
  PluginCallRecording();
  ~PluginCallRecording();
  PluginCallRecording(const PluginCallRecording&) = delete;
  PluginCallRecording& operator=(const PluginCallRecording&) = delete;

  // The calls so far, in the order they returned; all plugins', or one plugin's.
  std::vector<PluginCall> calls() const;
  std::vector<PluginCall> calls(const std::string& plugin) const;
};

}  // namespace ephost_test
