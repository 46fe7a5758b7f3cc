// Priority partitioning, first come first served and CPU fallback, end to end through the C API with
// real plugin libraries (alpha: Add/Mul single nodes, priority 100; beta: fused Add/Mul/Relu chains,
// priority 50) discovered from a temporary plugin directory.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "chain_check.h"
#include "test_support.h"

using ephost_test::expect_chain_output;
using ephost_test::TempDir;
using json = nlohmann::json;

namespace {

// node name -> provider, from the partition report's main graph.
std::map<std::string, std::string> assignment(const Ephost::Session& s) {
  json report = json::parse(s.partition_report_json());
  std::map<std::string, std::string> out;
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
  return out;
}

json refused_claims(const Ephost::Session& s) { return json::parse(s.partition_report_json())["graphs"][0]["refused_claims"]; }

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(plugins_, {"ephost_test_alpha", "ephost_test_beta"});
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(4, 6).save(models_);
  }
  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(PartitionTest, DefaultOrderIsPriorityThenCpu) {
  Ephost::Session s(*env_, model_path_);
  auto a = assignment(s);
  // alpha (priority 100) is asked first and takes Add and Mul; beta's chain is trimmed to Relu;
  // the CPU plugin takes what nobody claimed.
  EXPECT_EQ(a["add"], "alpha");
  EXPECT_EQ(a["mul"], "alpha");
  EXPECT_EQ(a["relu"], "beta");
  EXPECT_EQ(a["sub"], "cpu");
  EXPECT_EQ(a["sigmoid"], "cpu");
  // Beta's trimmed chain and the CPU plugin's claims on taken nodes are each reported once.
  json notes = refused_claims(s);
  ASSERT_EQ(notes.size(), 2u) << notes.dump(2);
  EXPECT_EQ(notes[0]["provider"], "beta");
  EXPECT_FALSE(notes[0]["refused"].get<bool>());
  EXPECT_NE(notes[0]["reason"].get<std::string>().find("already assigned to 'alpha'"), std::string::npos);
  EXPECT_EQ(notes[1]["provider"], "cpu");
  EXPECT_EQ(notes[1]["nodes"].size(), 3u);  // add, mul (alpha) and relu (beta)
  expect_chain_output(s, 4, 6);
}

TEST_F(PartitionTest, UserOrderWinsFirstComeFirstServed) {
  Ephost::SessionOptions o;
  o.append_provider("beta").append_provider("alpha");
  Ephost::Session s(*env_, model_path_, o);
  auto a = assignment(s);
  EXPECT_EQ(a["add"], "beta");
  EXPECT_EQ(a["mul"], "beta");
  EXPECT_EQ(a["relu"], "beta");
  EXPECT_EQ(a["sub"], "cpu");
  json notes = refused_claims(s);
  ASSERT_GE(notes.size(), 1u);
  bool alpha_refused = false;
  for (const auto& n : notes)
    alpha_refused = alpha_refused || (n["provider"] == "alpha" && n["refused"].get<bool>());
  EXPECT_TRUE(alpha_refused) << notes.dump();
  expect_chain_output(s, 4, 6);
}

TEST_F(PartitionTest, CpuFallbackTakesEverythingWhenPluginsClaimNothing) {
  Ephost::SessionOptions o;
  o.append_provider("beta", {{"claim", "none"}});
  Ephost::Session s(*env_, model_path_, o);
  for (const auto& [node, provider] : assignment(s)) EXPECT_EQ(provider, "cpu") << node;
  expect_chain_output(s, 4, 6);
}

TEST_F(PartitionTest, ProviderOptionsFromSessionConfig) {
  Ephost::SessionOptions o;
  o.append_provider("beta").add_config("ep.beta.claim", "none");
  Ephost::Session s(*env_, model_path_, o);
  EXPECT_EQ(assignment(s)["add"], "cpu");
}

TEST_F(PartitionTest, DisableCpuFallbackNamesTheLeftovers) {
  Ephost::SessionOptions o;
  o.append_provider("alpha").add_config("session.disable_cpu_ep_fallback", "1");
  try {
    Ephost::Session s(*env_, model_path_, o);
    FAIL() << "expected an error";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
    EXPECT_NE(e.message().find("'relu'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'sigmoid'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("disable_cpu_ep_fallback"), std::string::npos) << e.message();
  }
}

TEST_F(PartitionTest, DisableCpuFallbackWithFullCoverageRuns) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  m.initializer("c", {3}, {1, 2, 3});
  m.node("Add", {"x", "c"}, {"a"}, "add");
  m.node("Mul", {"a", "x"}, {"y"}, "mul");
  Ephost::SessionOptions o;
  o.append_provider("alpha").add_config("session.disable_cpu_ep_fallback", "1");
  std::string bytes = m.bytes();
  Ephost::Session s(*env_, bytes.data(), bytes.size(), o);
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), 6)}, {"y"});
  std::vector<float> y = out[0].to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], (x[i] + static_cast<float>(i % 3 + 1)) * x[i]);
}

TEST_F(PartitionTest, UnknownProviderListsWhatWasFound) {
  Ephost::SessionOptions o;
  o.append_provider("gamma");
  try {
    Ephost::Session s(*env_, model_path_, o);
    FAIL() << "expected an error";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("'gamma'"), std::string::npos);
    EXPECT_NE(e.message().find("alpha"), std::string::npos) << e.message();
  }
}

// Mul1 feeds Mul2 directly and through Sigmoid: fusing {Mul1, Mul2} would make a cycle with Sigmoid.
// Beta (told not to check for cycles itself) claims it anyway; the host refuses the group and reports
// why, and alpha then takes both Muls as single nodes.
TEST_F(PartitionTest, FusedGroupThatWouldCycleIsRefusedAndReported) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 2}).output("y", onnx::TensorProto::FLOAT, {2, 2});
  m.initializer("c", {2}, {2, 3});
  m.node("Mul", {"x", "c"}, {"m1"}, "mul1");
  m.node("Sigmoid", {"m1"}, {"s"}, "sigmoid");
  m.node("Mul", {"m1", "s"}, {"y"}, "mul2");
  Ephost::SessionOptions o;
  o.append_provider("beta", {{"check_cycles", "0"}}).append_provider("alpha");
  std::string bytes = m.bytes();
  Ephost::Session s(*env_, bytes.data(), bytes.size(), o);
  auto a = assignment(s);
  EXPECT_EQ(a["mul1"], "alpha");
  EXPECT_EQ(a["mul2"], "alpha");
  EXPECT_EQ(a["sigmoid"], "cpu");
  json notes = refused_claims(s);
  bool cycle_reported = false;
  for (const auto& n : notes)
    cycle_reported = cycle_reported || (n["provider"] == "beta" &&
                                        n["reason"].get<std::string>().find("cycle") != std::string::npos);
  EXPECT_TRUE(cycle_reported) << notes.dump(2);
  std::vector<float> x{1, -2, 3, -4};
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 2}, x.data(), 4)}, {"y"});
  std::vector<float> y = out[0].to_vector<float>();
  float c[2] = {2, 3};
  for (int i = 0; i < 4; ++i) {
    float m1 = x[i] * c[i % 2];
    EXPECT_NEAR(y[i], m1 * (1.0f / (1.0f + std::exp(-m1))), 1e-5f);
  }
}

}  // namespace
