// What the host did to the test plugins, as they saw it (Vulkan-Loader's test ICD records what the
// loader did to it the same way): every call through their function tables (EphostPlugin, the ABI 3
// device calls, and the compute units compile hands out), with its order, its thread, the handles it
// was given and made, what it returned; the negotiation, and the library's unloading. The calls are
// recorded by the plugin observer (tools/plugin_observer/plugin_interposer.h) each test plugin puts in
// front of its own table.
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
#include <vector>

#include "plugin_call.h"

#define EPHOST_TEST_RECORD_EXPORT __attribute__((visibility("default")))

namespace ephost_test {

// One call, as the plugin observer records it (tools/plugin_observer/plugin_call.h).
using ephost::observer::PluginCall;

// The record's clock: every call takes one tick when it starts and one when it returns.
EPHOST_TEST_RECORD_EXPORT uint64_t plugin_call_clock_tick();
// Adds a finished call to the record (kept only while a PluginCallRecording exists), and to the file
// $EPHOST_TEST_CALL_JOURNAL names, when set, as a line
// "<plugin> <function>", in any process: how a test counts the calls of a plugin in a provider host.
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
