// Test plugins that remember what the host did to them (plugin_call_record.h), through the plugin
// observer (tools/plugin_observer/plugin_interposer.h).
//
// A test plugin is written with the SDK as usual and ends with EPHOST_TEST_RECORDING_PLUGIN instead of
// EPHOST_DEFINE_PLUGIN. The SDK's entry point then stays inside the library; the exported one
// negotiates through it and hands the host a recording table in front of the SDK's: every call the
// host makes through the plugin ABI (and through the compute units compile and context_load hand
// out) is recorded with its result and passed on unchanged. What is recorded is what crossed the ABI,
// the contract the header states, not what the SDK made of it.
//
// A library built with EPHOST_TEST_PLUGIN_MAX_ABI=<n> speaks no newer plugin ABI than <n>, as a plugin
// built against an older header would.
#pragma once

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/plugin.hpp"

namespace ephost_test::recording {

// The exported entry point's work: records the negotiation, negotiates through `sdk_entry` and puts the
// recording table in front of the table it answers. `plugin_name` names the library's calls in the
// record (a string literal: it is read again when the library is unloaded).
EphostStatus* negotiate(const char* plugin_name, EphostPluginNegotiateFn sdk_entry, EphostPluginNegotiation* n);

}  // namespace ephost_test::recording

// EPHOST_DEFINE_PLUGIN, recorded. NAME: the plugin's name in the record; DESCRIBE, CREATE: as for
// EPHOST_DEFINE_PLUGIN.
#define EPHOST_TEST_RECORDING_PLUGIN(NAME, DESCRIBE, CREATE)                                                   \
  EPHOST_DEFINE_PLUGIN_ENTRY(ephost_test_sdk_negotiate, DESCRIBE, CREATE)                                      \
  extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation);         \
  extern "C" EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation) {                     \
    return ::ephost_test::recording::negotiate(NAME, &ephost_test_sdk_negotiate, negotiation);                 \
  }
