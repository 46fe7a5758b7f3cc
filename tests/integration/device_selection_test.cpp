// session.ep_selection_policy, as ephost_session_options_keys.h documents it, with real plugins:
// fakedev (priority 150; a GPU and an NPU device; Add, Mul, Relu or its `claim`), alpha (100, CPU; Add
// and Mul), beta (50, CPU; chains of Add, Mul, Relu). max_coverage asks every candidate's
// get_capability first and ranks by the nodes each would take, ties by default priority;
// prefer_cpu/gpu/npu put the plugins with a device of that type first, on that device, and a bare
// "fakedev" means that device. The partition report's "selection" says why each got its place.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "device_support.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

class DeviceSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override { model_ = split_model().bytes(); }  // add, mul, sub, relu
  json report(const Ephost::SessionOptions& o) {
    Ephost::Session s(env_.env(), model_.data(), model_.size(), o);
    // Whatever the order, the numbers are right.
    std::vector<float> x = input_values(2);
    Ephost::Session cpu(env_.env(), model_.data(), model_.size(), options_with({"cpu"}));
    expect_same_floats(s.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>(),
                       cpu.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>(), "y");
    return json::parse(s.partition_report_json());
  }
  static std::vector<std::string> provider_order(const json& r) {
    std::vector<std::string> out;
    for (const auto& p : r["providers"])
      out.push_back(p["name"].get<std::string>() + (p.contains("device") ? "@" + p["device"]["label"].get<std::string>() : ""));
    return out;
  }
  static std::vector<std::string> reasons(const json& r) {
    std::vector<std::string> out;
    for (const auto& c : r["selection"]["candidates"])
      out.push_back(c["provider"].get<std::string>() + ": " + c["reason"].get<std::string>());
    return out;
  }
  FakeDevEnv env_{{"ephost_test_alpha", "ephost_test_beta"}};
  std::string model_;
};

TEST_F(DeviceSelectionTest, DefaultOrderIsPriority) {
  const json r = report(options_with({}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:0", "alpha", "beta", "cpu"}));
  EXPECT_EQ(r["selection"]["policy"], "");
  EXPECT_EQ(reasons(r), (std::vector<std::string>{"fakedev:0: by default priority 150", "alpha: by default priority 100",
                                                   "beta: by default priority 50"}));
}

TEST_F(DeviceSelectionTest, MaxCoverageRanksByClaimedNodesAgainstPriority) {
  // fakedev claims Relu only (1 node), alpha Add and Mul (2), beta Add-Mul and Relu (3): the reverse of
  // their priorities.
  const json r = report(options_with({}, {{"session.ep_selection_policy", "max_coverage"}, {"ep.fakedev.claim", "Relu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"beta", "alpha", "fakedev@fakedev:0", "cpu"}));
  EXPECT_EQ(r["selection"]["policy"], "max_coverage");
  EXPECT_EQ(reasons(r), (std::vector<std::string>{"beta: would take 3 of 4 nodes: the most",
                                                   "alpha: would take 2 of 4 nodes",
                                                   "fakedev:0: would take 1 of 4 nodes"}));
  const auto& c = r["selection"]["candidates"];
  EXPECT_EQ(c[0]["claimed_nodes"], 3);
  EXPECT_EQ(c[0]["graph_nodes"], 4);
  EXPECT_EQ(c[0]["priority"], 50);
  EXPECT_EQ(c[2]["device_type"], "gpu");
  // beta, asked first, takes what it claimed.
  const auto providers = node_providers(r);
  EXPECT_EQ(providers.at("add"), "beta");
  EXPECT_EQ(providers.at("mul"), "beta");
  EXPECT_EQ(providers.at("relu"), "beta");
  EXPECT_EQ(providers.at("sub"), "cpu");
}

TEST_F(DeviceSelectionTest, MaxCoverageBreaksTiesByDefaultPriority) {
  // fakedev claims Add and Relu (2), alpha Add and Mul (2), beta none: a tie, fakedev (150) first.
  const json r = report(options_with({}, {{"session.ep_selection_policy", "max_coverage"},
                                          {"ep.fakedev.claim", "Add,Relu"},
                                          {"ep.beta.claim", "none"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:0", "alpha", "beta", "cpu"}));
  EXPECT_EQ(reasons(r), (std::vector<std::string>{
                            "fakedev:0: would take 2 of 4 nodes: the most",
                            "alpha: would take 2 of 4 nodes, as many as 'fakedev:0': after it by default priority "
                            "(100 <= 150)",
                            "beta: would take 0 of 4 nodes"}));
  const auto providers = node_providers(r);
  EXPECT_EQ(providers.at("add"), "fakedev");
  EXPECT_EQ(providers.at("mul"), "alpha");
  EXPECT_EQ(providers.at("relu"), "fakedev");
}

TEST_F(DeviceSelectionTest, MaxCoverageWithAllClaimingKeepsTheLargestFirst) {
  // fakedev 3 (Add, Mul, Relu), beta 3, alpha 2: fakedev and beta tie, fakedev first by priority.
  const json r = report(options_with({}, {{"session.ep_selection_policy", "max_coverage"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:0", "beta", "alpha", "cpu"}));
  EXPECT_EQ(reasons(r), (std::vector<std::string>{
                            "fakedev:0: would take 3 of 4 nodes: the most",
                            "beta: would take 3 of 4 nodes, as many as 'fakedev:0': after it by default priority "
                            "(50 <= 150)",
                            "alpha: would take 2 of 4 nodes"}));
}

TEST_F(DeviceSelectionTest, PreferNpuPicksTheNpuDeviceAndPutsItFirst) {
  const json r = report(options_with({}, {{"session.ep_selection_policy", "prefer_npu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:1", "alpha", "beta", "cpu"}));
  EXPECT_EQ(r["providers"][0]["device"]["type"], "npu");
  EXPECT_EQ(reasons(r), (std::vector<std::string>{
                            "fakedev:1: a npu provider (prefer_npu): first, by default priority 150",
                            "alpha: not a npu provider (cpu): after those, by default priority 100",
                            "beta: not a npu provider (cpu): after those, by default priority 50"}));
  for (const auto& [node, device] : node_devices(r))
    if (node_providers(r).at(node) == "fakedev") {
      EXPECT_EQ(device, "fakedev:1") << node;
    }
}

TEST_F(DeviceSelectionTest, PreferGpuPicksTheGpuDevice) {
  const json r = report(options_with({}, {{"session.ep_selection_policy", "prefer_gpu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:0", "alpha", "beta", "cpu"}));
  EXPECT_EQ(r["providers"][0]["device"]["type"], "gpu");
  EXPECT_EQ(reasons(r)[0], "fakedev:0: a gpu provider (prefer_gpu): first, by default priority 150");
}

TEST_F(DeviceSelectionTest, PreferCpuPutsCpuPluginsBeforeTheDevice) {
  const json r = report(options_with({}, {{"session.ep_selection_policy", "prefer_cpu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"alpha", "beta", "fakedev@fakedev:0", "cpu"}));
  EXPECT_EQ(reasons(r), (std::vector<std::string>{
                            "alpha: a cpu provider (prefer_cpu): first, by default priority 100",
                            "beta: a cpu provider (prefer_cpu): first, by default priority 50",
                            "fakedev:0: not a cpu provider (gpu): after those, by default priority 150"}));
  const auto providers = node_providers(r);
  EXPECT_EQ(providers.at("add"), "alpha");
  EXPECT_EQ(providers.at("mul"), "alpha");
  EXPECT_EQ(providers.at("relu"), "beta");
}

TEST_F(DeviceSelectionTest, BareNameInAListFollowsThePolicyAnIndexedNameDoesNot) {
  json r = report(options_with({"fakedev"}, {{"session.ep_selection_policy", "prefer_npu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:1", "cpu"}));
  EXPECT_EQ(r["selection"]["policy"], "listed");
  r = report(options_with({"fakedev:0"}, {{"session.ep_selection_policy", "prefer_npu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:0", "cpu"}));
  r = report(options_with({"alpha", "fakedev"}, {{"session.ep_selection_policy", "prefer_gpu"}}));
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"alpha", "fakedev@fakedev:0", "cpu"}))
      << "a listed order is kept";
  Ephost::SessionOptions o;
  o.append_provider_for_device("fakedev", 1);
  r = report(o);
  EXPECT_EQ(provider_order(r), (std::vector<std::string>{"fakedev@fakedev:1", "cpu"}));
}

TEST_F(DeviceSelectionTest, UnknownPolicyIsRefused) {
  const CallResult r = catch_result([&] {
    Ephost::Session s(env_.env(), model_.data(), model_.size(),
                      options_with({}, {{"session.ep_selection_policy", "prefer_tpu"}}));
  });
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT);
  EXPECT_EQ(r.message,
            "session.ep_selection_policy must be prefer_cpu, prefer_gpu, prefer_npu or max_coverage, found \"prefer_tpu\"");
}

}  // namespace
