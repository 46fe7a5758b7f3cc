// Host placement on a device (plugin ABI 3), through the fakedev test plugin: a chain of device nodes
// runs with exactly one copy in per graph input and one copy out per graph output, constant
// initializers go to the device once when the session is created, a graph split device -> CPU ->
// device has copies exactly at the two crossings, and the partition report lists those copies. The
// copies are counted by the plugin itself (fakedev_count), the results compared with the CPU plugin's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "device_support.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

// The CPU plugin's outputs for `inputs`, the reference for every device run.
std::vector<std::vector<float>> cpu_outputs(Ephost::Env& env, const std::string& model, const std::vector<std::string>& in_names,
                                            std::vector<std::vector<float>> inputs,
                                            const std::vector<std::string>& out_names) {
  Ephost::Session cpu(env, model.data(), model.size(), options_with({"cpu"}));
  std::vector<Ephost::Tensor> in;
  for (auto& v : inputs) in.push_back(host_tensor(v));
  std::vector<std::vector<float>> out;
  for (const auto& t : cpu.run(in_names, in, out_names)) out.push_back(t.to_vector<float>());
  return out;
}

// One entry of a report's "copies", as "value from->to when [consumers]".
std::string describe_copy(const json& c) {
  std::string s = c["value"].get<std::string>() + " " + c["from"].get<std::string>() + "->" + c["to"].get<std::string>() +
                  " " + c["when"].get<std::string>() + " [";
  for (const auto& n : c["consumers"]) s += n.get<std::string>() + ";";
  return s + "]";
}

std::multiset<std::string> copies_of(const json& report) {
  std::multiset<std::string> out;
  for (const auto& c : report["graphs"][0]["copies"]) out.insert(describe_copy(c));
  return out;
}

class DevicePlacementTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_env_.fake().ok()) << "fakedev's test hooks not found"; }
  FakeDevEnv fake_env_;
  const FakeDevHooks& fake() { return fake_env_.fake(); }
  Ephost::Env& env() { return fake_env_.env(); }
};

// mode=kernels: one kernel per node; mode=fused: the five nodes are one compiled group.
INSTANTIATE_TEST_SUITE_P(Modes, DevicePlacementTest, ::testing::Values("kernels", "fused"));

TEST_P(DevicePlacementTest, DeviceOnlyChainCopiesEachInputInAndEachOutputOutOncePerRun) {
  const std::string mode = GetParam();
  const std::string model = device_chain_model().bytes();
  const long live_before = fake().live();
  fake().reset();
  {
    Ephost::Session s(env(), model.data(), model.size(),
                      options_with({"fakedev"}, {{"ep.fakedev.mode", mode}, {"session.disable_cpu_ep_fallback", "1"}}));
    // Session creation uploads the two constant initializers, and nothing else moves.
    EXPECT_EQ(fake().h2d(), 2) << "c1 and c2 are uploaded once, when the session is created";
    EXPECT_EQ(fake().d2h(), 0);
    EXPECT_EQ(fake().kernels(), 0);

    const json report = json::parse(s.partition_report_json());
    for (const auto& [node, provider] : node_providers(report)) EXPECT_EQ(provider, "fakedev") << node;
    for (const auto& [node, device] : node_devices(report)) EXPECT_EQ(device, "fakedev:0") << node;
    EXPECT_EQ(copies_of(report),
              (std::multiset<std::string>{"x host->fakedev:0 every run [" +
                                              std::string(mode == "fused" ? "fakedev_fused_test_0;]" : "add1;add2;]"),
                                          "z host->fakedev:0 every run [" +
                                              std::string(mode == "fused" ? "fakedev_fused_test_0;]" : "mul1;]"),
                                          "c1 host->fakedev:0 once (constant initializer) [" +
                                              std::string(mode == "fused" ? "fakedev_fused_test_0;]" : "add1;]"),
                                          "c2 host->fakedev:0 once (constant initializer) [" +
                                              std::string(mode == "fused" ? "fakedev_fused_test_0;]" : "mul2;]")}))
        << report["graphs"][0]["copies"].dump(2);
    EXPECT_EQ(report["graphs"][0]["outputs_copied_to_host"],
              json::parse(R"([{"value":"y1","from":"fakedev:0"},{"value":"y2","from":"fakedev:0"}])"));
    EXPECT_EQ(report["copies_planned"], 4);

    const long kernels_per_run = mode == "fused" ? 1 : 5;
    constexpr int kRuns = 4;
    for (int run = 0; run < kRuns; ++run) {
      std::vector<float> x = input_values(run), z = input_values(run + 7);
      const auto want = cpu_outputs(env(), model, {"x", "z"}, {x, z}, {"y1", "y2"});
      const long h2d = fake().h2d(), d2h = fake().d2h(), kernels = fake().kernels();
      auto out = s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
      EXPECT_EQ(fake().h2d() - h2d, 2) << "run " << run << ": one copy in per graph input (x is read twice)";
      EXPECT_EQ(fake().d2h() - d2h, 2) << "run " << run << ": one copy out per graph output";
      EXPECT_EQ(fake().d2d(), 0);
      EXPECT_EQ(fake().kernels() - kernels, kernels_per_run);
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(location_of(out[0]), "host");
      expect_same_floats(out[0].to_vector<float>(), want[0], "y1, run " + std::to_string(run));
      expect_same_floats(out[1].to_vector<float>(), want[1], "y2, run " + std::to_string(run));
    }
    EXPECT_EQ(fake().h2d(), 2 + 2 * kRuns) << "the initializers were not uploaded again";
  }
  EXPECT_EQ(fake().live(), live_before) << "device memory left allocated after the session is released";
}

TEST_P(DevicePlacementTest, SecondDeviceOfThePluginRunsTheChainInItsOwnMemory) {
  const std::string model = device_chain_model().bytes();
  Ephost::SessionOptions o;
  o.append_provider_for_device("fakedev", 1, {{"mode", GetParam()}});
  fake().reset();
  Ephost::Session s(env(), model.data(), model.size(), o);
  const json report = json::parse(s.partition_report_json());
  for (const auto& [node, device] : node_devices(report)) EXPECT_EQ(device, "fakedev:1") << node;
  EXPECT_EQ(report["providers"][0]["device"]["label"], "fakedev:1");
  EXPECT_EQ(report["providers"][0]["device"]["type"], "npu");
  EXPECT_EQ(report["providers"][0]["device"]["memory"], "device");
  std::vector<float> x = input_values(1), z = input_values(2);
  const auto want = cpu_outputs(env(), model, {"x", "z"}, {x, z}, {"y1", "y2"});
  const long h2d = fake().h2d(), d2h = fake().d2h();
  auto out = s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  EXPECT_EQ(fake().h2d() - h2d, 2);
  EXPECT_EQ(fake().d2h() - d2h, 2);
  expect_same_floats(out[0].to_vector<float>(), want[0], "y1");
  expect_same_floats(out[1].to_vector<float>(), want[1], "y2");
}

TEST_P(DevicePlacementTest, SplitDeviceCpuDeviceCopiesExactlyAtTheTwoCrossings) {
  const std::string mode = GetParam();
  const std::string model = split_model().bytes();
  fake().reset();
  Ephost::Session s(env(), model.data(), model.size(),
                    options_with({"fakedev"}, {{"ep.fakedev.claim", "Add,Relu"}, {"ep.fakedev.mode", mode}}));
  EXPECT_EQ(fake().h2d(), 1) << "c1 (read on the device) is uploaded once; c2 is read on the host";

  const json report = json::parse(s.partition_report_json());
  const auto providers = node_providers(report);
  EXPECT_EQ(providers.at("add"), "fakedev");
  EXPECT_EQ(providers.at("mul"), "cpu");
  EXPECT_EQ(providers.at("sub"), "cpu");
  EXPECT_EQ(providers.at("relu"), "fakedev");
  const std::string add = mode == "fused" ? "fakedev_fused_test_0" : "add", relu = mode == "fused" ? "fakedev_fused_test_1" : "relu";
  EXPECT_EQ(copies_of(report), (std::multiset<std::string>{
                                   "x host->fakedev:0 every run [" + add + ";]",
                                   "c1 host->fakedev:0 once (constant initializer) [" + add + ";]",
                                   "a fakedev:0->host every run [mul;sub;]",  // crossing 1: one copy, two readers
                                   "n host->fakedev:0 every run [" + relu + ";]",  // crossing 2
                               }))
      << report["graphs"][0]["copies"].dump(2);
  EXPECT_EQ(report["graphs"][0]["outputs_copied_to_host"], json::parse(R"([{"value":"y","from":"fakedev:0"}])"));

  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = input_values(run);
    const auto want = cpu_outputs(env(), model, {"x"}, {x}, {"y"});
    const long h2d = fake().h2d(), d2h = fake().d2h(), kernels = fake().kernels();
    auto out = s.run({"x"}, {host_tensor(x)}, {"y"});
    EXPECT_EQ(fake().h2d() - h2d, 2) << "x in, n back to the device";
    EXPECT_EQ(fake().d2h() - d2h, 2) << "a to the host, y out";
    EXPECT_EQ(fake().kernels() - kernels, 2) << "add and relu";
    expect_same_floats(out[0].to_vector<float>(), want[0], "y, run " + std::to_string(run));
  }
}

}  // namespace
