// An ABI-2 plugin (alpha_abi2: alpha built to speak at most plugin ABI 2, no devices) loaded beside an
// ABI-3 device plugin (fakedev) works unchanged: it negotiates ABI 2 and gets the ABI-2 host table, it
// is asked for nodes and runs its kernels on host memory only (its kernels read inputs with
// kernel_input, which refuses device memory), values cross to and from the device around it, and the
// outputs are the CPU plugin's. What alpha_abi2 saw is its own record (plugin_call_record.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "device_support.h"
#include "ephost/ephost_plugin.h"
#include "plugin_call_record.h"
#include "plugin_call_rules.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

size_t count_calls(const std::vector<PluginCall>& calls, const std::string& function) {
  return static_cast<size_t>(
      std::count_if(calls.begin(), calls.end(), [&](const PluginCall& c) { return c.function == function; }));
}

TEST(DeviceAbiMix, AbiTwoPluginBesideFakedevRunsOnHostMemoryUnchanged) {
  PluginCallRecording record;  // before the env: it sees negotiation
  {
    FakeDevEnv fake_env({"ephost_test_alpha_abi2"});
    ASSERT_TRUE(fake_env.fake().ok());
    Ephost::Env& env = fake_env.env();
    const FakeDevHooks& fake = fake_env.fake();

    // Negotiated versions, in the report and as the plugin saw them.
    std::map<std::string, uint32_t> abi;
    for (const EphostPluginReport& r : env.plugin_reports())
      if (r.loaded) abi[r.name] = r.abi_version;
    EXPECT_EQ(abi["alpha_abi2"], 2u);
    EXPECT_EQ(abi["fakedev"], EPHOST_PLUGIN_ABI_VERSION);
    EXPECT_TRUE(EphostPluginAbiIncludes(abi["fakedev"], EPHOST_PLUGIN_ABI_DEVICES));
    const json report_json = json::parse(env.plugin_report_json());
    for (const auto& r : report_json)
      if (r["name"] == "alpha_abi2") {
        EXPECT_EQ(r["abi_version"], 2) << r.dump(2);
      }
    const auto negotiate = record.calls("alpha_abi2");
    ASSERT_GE(negotiate.size(), 2u);
    EXPECT_EQ(negotiate[0].function, "negotiate");
    EXPECT_EQ(negotiate[0].version, 2u);
    EXPECT_EQ(negotiate[1].function, "describe");
    EXPECT_EQ(negotiate[1].host_api_size, EphostHostApiSize(2)) << "alpha_abi2 gets the ABI-2 host table";
    // Only fakedev has devices.
    const auto devices = env.devices();
    ASSERT_EQ(devices.size(), 2u);
    for (const auto& d : devices) EXPECT_STREQ(d.plugin, "fakedev");

    // x -> Add [fakedev] -> Mul [alpha_abi2] -> Sub [cpu] -> Relu [fakedev] (split_model), priority order:
    // fakedev (150) takes Add and Relu, alpha_abi2 (100) takes Mul (its Add is taken), the CPU Sub.
    const std::string model = split_model().bytes();
    Ephost::Session s(env, model.data(), model.size(), options_with({}, {{"ep.fakedev.claim", "Add,Relu"}}));
    const json report = json::parse(s.partition_report_json());
    const auto providers = node_providers(report);
    EXPECT_EQ(providers.at("add"), "fakedev");
    EXPECT_EQ(providers.at("mul"), "alpha_abi2");
    EXPECT_EQ(providers.at("sub"), "cpu");
    EXPECT_EQ(providers.at("relu"), "fakedev");
    const auto devices_of = node_devices(report);
    EXPECT_EQ(devices_of.at("mul"), "") << "alpha_abi2 runs on no device: host memory";
    for (const auto& p : report["providers"])
      if (p["name"] == "alpha_abi2") {
        EXPECT_FALSE(p.contains("device")) << p.dump();
      }
    // a goes to the host once, for both host readers (alpha_abi2's Mul and the CPU's Sub).
    bool a_to_host = false;
    for (const auto& c : report["graphs"][0]["copies"])
      if (c["value"] == "a") {
        a_to_host = true;
        EXPECT_EQ(c["to"], "host");
        EXPECT_EQ(c["consumers"], json::parse(R"(["mul","sub"])"));
      }
    EXPECT_TRUE(a_to_host) << report["graphs"][0]["copies"].dump(2);

    Ephost::Session cpu(env, model.data(), model.size(), options_with({"cpu"}));
    constexpr int kRuns = 3;
    const size_t computes_before = count_calls(record.calls("alpha_abi2"), "kernel_compute");
    for (int run = 0; run < kRuns; ++run) {
      std::vector<float> x = input_values(run);
      const long h2d = fake.h2d(), d2h = fake.d2h();
      auto got = s.run({"x"}, {host_tensor(x)}, {"y"});
      EXPECT_EQ(fake.h2d() - h2d, 2) << "x in, n back";
      EXPECT_EQ(fake.d2h() - d2h, 2) << "a out, y out";
      auto want = cpu.run({"x"}, {host_tensor(x)}, {"y"});
      expect_same_floats(got[0].to_vector<float>(), want[0].to_vector<float>(), "y");
    }
    const auto calls = record.calls("alpha_abi2");
    EXPECT_EQ(count_calls(calls, "kernel_compute") - computes_before, static_cast<size_t>(kRuns))
        << "alpha_abi2's Mul kernel ran once per run";
    for (const auto& c : calls) EXPECT_FALSE(c.failed) << c.function << " failed";

    // With a device tensor bound as x, alpha_abi2 still sees host memory (a is copied for it).
    Ephost::Tensor xd = env.device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    std::vector<float> x = input_values(9);
    xd.copy_from(host_tensor(x));
    Ephost::Session::IoBinding b(s);
    b.bind_input("x", xd).bind_output_to_device("y", "fakedev", 0);
    b.run();
    expect_same_floats(read_back(b.output("y")), cpu.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>(),
                       "y (bound)");
  }
  // The whole history obeys the plugin lifecycle rules (alpha_abi2 is a recording plugin).
  for (const std::string& problem : lifecycle_violations(record.calls())) ADD_FAILURE() << problem;
}

// An ABI-2 plugin has no devices: naming one of its devices, or making a tensor on it, is refused.
TEST(DeviceAbiMix, AbiTwoPluginHasNoDevicesToName) {
  FakeDevEnv fake_env({"ephost_test_alpha_abi2"});
  const std::string model = split_model().bytes();
  CallResult r = catch_result([&] {
    Ephost::Session s(fake_env.env(), model.data(), model.size(), options_with({"alpha_abi2:0"}));
  });
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "provider 'alpha_abi2:0': plugin 'alpha_abi2' drives no device of its own");
  r = catch_result([&] { fake_env.env().device_tensor("alpha_abi2", 0, EPHOST_ELEMENT_FLOAT, {2}); });
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "plugin 'alpha_abi2' drives no device of its own");
}

}  // namespace
