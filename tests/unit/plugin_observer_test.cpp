// The plugin observer (tools/plugin_observer/plugin_interposer.h) on a hand-made plugin table: every
// member the plugin fills, the ABI 3 device calls included, is recorded with its handles and result and
// counted, and passed on unchanged; members the plugin leaves NULL stay NULL.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "plugin_call_rules.h"
#include "plugin_interposer.h"

namespace {

using ephost::observer::PluginCall;

std::vector<PluginCall>& recorded() {
  static std::vector<PluginCall> calls;
  return calls;
}
void keep(PluginCall call) { recorded().push_back(std::move(call)); }

int device_memory[64];
int stream_object;
int provider_object;
int copies_passed_on = 0;

EphostStatus* provider_create_for_device(uint32_t, const char* const*, const char* const*, size_t,
                                         EphostProvider** out) {
  *out = reinterpret_cast<EphostProvider*>(&provider_object);
  return nullptr;
}
void provider_release(EphostProvider*) {}
EphostStatus* device_allocate(uint32_t, int32_t, uint64_t, EphostDeviceBuffer* out) {
  out->handle = device_memory;
  out->offset = 16;
  return nullptr;
}
void device_free(uint32_t, int32_t, EphostDeviceBuffer) {}
EphostStatus* copy_to_device(uint32_t, EphostStream*, const void*, EphostDeviceBuffer, uint64_t) {
  ++copies_passed_on;
  return nullptr;
}
// A failing call: the observer counts it as a failure and hands the status back unchanged.
EphostStatus* copy_to_host(uint32_t, EphostStream*, EphostDeviceBuffer, void*, uint64_t) {
  return reinterpret_cast<EphostStatus*>(&stream_object);
}
EphostStatus* stream_create(uint32_t, EphostStream** out) {
  *out = reinterpret_cast<EphostStream*>(&stream_object);
  return nullptr;
}
void stream_release(EphostStream*) {}

TEST(PluginObserver, RecordsAndCountsDeviceCallsAndPassesThemOn) {
  EphostPlugin plugin{};
  plugin.struct_size = sizeof(EphostPlugin);
  plugin.abi_version = 3;
  plugin.provider_create_for_device = &provider_create_for_device;
  plugin.provider_release = &provider_release;
  plugin.device_allocate = &device_allocate;
  plugin.device_free = &device_free;
  plugin.copy_to_device = &copy_to_device;
  plugin.copy_to_host = &copy_to_host;
  plugin.stream_create = &stream_create;
  plugin.stream_release = &stream_release;
  EphostHostApi host{};
  ephost::observer::ObserverOptions options;
  options.plugin_name = "handmade";
  options.sink = &keep;
  const EphostPlugin* observed = ephost::observer::observe_plugin(&plugin, &host, options);
  ASSERT_NE(observed, &plugin);
  EXPECT_EQ(observed->get_capability, nullptr);  // NULL stays NULL
  EXPECT_EQ(observed->stream_synchronize, nullptr);
  EXPECT_NE(observed->copy_to_device, &copy_to_device);

  EphostProvider* provider = nullptr;
  ASSERT_EQ(observed->provider_create_for_device(1, nullptr, nullptr, 0, &provider), nullptr);
  EphostStream* stream = nullptr;
  ASSERT_EQ(observed->stream_create(1, &stream), nullptr);
  EphostDeviceBuffer buffer{};
  ASSERT_EQ(observed->device_allocate(1, 0, 256, &buffer), nullptr);
  EXPECT_EQ(buffer.handle, device_memory);
  char host_bytes[8] = {};
  EXPECT_EQ(observed->copy_to_device(1, stream, host_bytes, buffer, 8), nullptr);
  EXPECT_EQ(copies_passed_on, 1);
  EXPECT_EQ(observed->copy_to_host(1, stream, buffer, host_bytes, 8), reinterpret_cast<EphostStatus*>(&stream_object));
  observed->device_free(1, 0, buffer);
  observed->stream_release(stream);
  observed->provider_release(provider);

  const std::vector<PluginCall>& calls = recorded();
  ASSERT_EQ(calls.size(), 8u) << ephost::observer::describe_calls(calls);
  EXPECT_EQ(calls[0].function, "provider_create_for_device");
  EXPECT_EQ(calls[0].device, 1u);
  EXPECT_EQ(calls[0].made, &provider_object);
  EXPECT_EQ(calls[1].function, "stream_create");
  EXPECT_EQ(calls[1].made, &stream_object);
  EXPECT_EQ(calls[2].function, "device_allocate");
  EXPECT_EQ(calls[2].bytes, 256u);
  EXPECT_EQ(calls[2].made, device_memory);
  EXPECT_EQ(calls[2].offset, 16u);
  EXPECT_EQ(calls[3].function, "copy_to_device");
  EXPECT_EQ(calls[3].stream, &stream_object);
  EXPECT_FALSE(calls[3].failed);
  EXPECT_EQ(calls[4].function, "copy_to_host");
  EXPECT_TRUE(calls[4].failed);
  EXPECT_EQ(calls[5].function, "device_free");
  EXPECT_EQ(calls[5].object, device_memory);
  EXPECT_EQ(calls[6].function, "stream_release");
  EXPECT_EQ(calls[7].function, "provider_release");
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].plugin, "handmade");
    EXPECT_LT(calls[i].begin, calls[i].end);
    if (i > 0) {
      EXPECT_GT(calls[i].begin, calls[i - 1].end);
    }
  }
  // The device provider is a provider to the lifecycle rules: made, then released.
  EXPECT_TRUE(ephost::observer::lifecycle_violations(calls).empty())
      << ephost::observer::lifecycle_violations(calls).front();

  const ephost::observer::ObservedCounts counts = ephost::observer::observed_counts();
  EXPECT_EQ(counts.calls.at("copy_to_device"), 1u);
  EXPECT_EQ(counts.calls.at("copy_to_host"), 1u);
  EXPECT_EQ(counts.failures.at("copy_to_host"), 1u);
  EXPECT_EQ(counts.failures.count("copy_to_device"), 0u);
  EXPECT_EQ(counts.live_device_buffers, 0);
  ephost::observer::reset_observed_counts();
  EXPECT_TRUE(ephost::observer::observed_counts().calls.empty());
}

}  // namespace
