// The plugin observer: an interposer that stands between the host and one plugin's function table.
// It hands the host a copy of the plugin's table (EphostPlugin, every ABI version, the ABI 3 device
// calls included, and the compute units compile and context_load hand out) whose members record each
// call and pass it on unchanged: what crossed the ABI, the contract ephost_plugin.h states, not what the
// plugin made of it.
//
// Each call becomes a PluginCall (plugin_call.h) handed to the sink the library chose, and is counted
// (calls, failures, computes and runs in flight, live device buffers). One library observes one plugin:
// the observer's state is per library, which links this one statically.
//
// Who uses it: the tests' recording plugins (tests/plugins/recording_plugin.hpp: the sink is the tests'
// call record), the fakedev test plugin (its device counters), and the conformance kit's observer
// plugin (tools/plugin_cts/observer: the kit reads the counts and runs the lifecycle rules,
// plugin_call_rules.h, on the calls).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "ephost/ephost_plugin.h"
#include "plugin_call.h"

namespace ephost::observer {

// Where finished calls go.
using CallSink = void (*)(PluginCall call);
// The clock calls are timed on: one tick when a call starts and one when it returns.
using CallClock = uint64_t (*)();

struct ObserverOptions {
  const char* plugin_name = "?";  // names the calls (read again at unloading: a string literal)
  CallSink sink = nullptr;        // nullptr: calls are counted, not kept
  CallClock clock = nullptr;      // nullptr: the observer's own
};

// Puts the observer in front of `target`, the table a plugin answered in negotiation; returns the
// table to hand the host instead (each member the plugin fills replaced by its observing twin, NULL
// staying NULL; only the plugin's struct_size bytes are read). Negotiating again with the same table
// returns the same observing table unchanged (another env loading the library again).
const EphostPlugin* observe_plugin(const EphostPlugin* target, const EphostHostApi* host, const ObserverOptions& options);

// The options observe_plugin was given last (or before it, set_observer_options): for calls the library
// records itself (negotiate, unload).
void set_observer_options(const ObserverOptions& options);

// One call being recorded, for the calls the library records itself: started when constructed, handed
// to the sink by done().
class ObservedCall {
 public:
  explicit ObservedCall(const char* function);
  PluginCall* operator->() { return &call_; }
  EphostStatus* done(EphostStatus* status);
  void done();

 private:
  PluginCall call_;
};

// What the observer counted since the library was loaded (or the last reset).
struct ObservedCounts {
  std::map<std::string, uint64_t> calls;     // by function
  std::map<std::string, uint64_t> failures;  // calls that returned an error status, by function
  uint64_t max_kernel_computes_in_flight = 0;
  uint64_t max_computes_in_flight = 0;  // compiled (and context-loaded) units
  uint64_t max_runs_in_flight = 0;      // between on_run_start and on_run_end, per provider
  uint64_t run_ends_without_start = 0;  // on_run_end on a provider with no run started
  int64_t live_device_buffers = 0;      // device_allocate successes less device_free calls (never reset)
};
ObservedCounts observed_counts();
// Counts start again from zero; the live device buffers stay (what is allocated stays allocated).
void reset_observed_counts();

// Runs `hook` once, at the start of the host's next context_judge, before the call is passed on: with
// the host's node and the plugin's provider, valid only there.
using JudgeHook = std::function<void(const EphostHostApi* host, const EphostPlugin* plugin, EphostProvider* provider,
                                     const EphostNode* context_node, const void* blob, size_t blob_size)>;
void set_judge_hook(JudgeHook hook);

}  // namespace ephost::observer
