// What crosses to a provider host process (isolation/crossing_values.h): tensors of numbers only. A
// claim touching a tensor sequence (or a string tensor, an optional, a subgraph) is refused when an isolated provider makes it,
// saying why in the partition report, and the node runs on the next provider (the CPU plugin): the runs
// succeed instead of failing each time at the compute. In process the same claims stand.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

using json = nlohmann::json;

// x[2,3] -> a = Add(x, x) [alpha]; a also crosses as f = Identity(a) [alpha, a float tensor];
// through a sequence: y = SequenceAt(Identity(SequenceConstruct(a)), 0). The Identity of the sequence is
// alpha's claim that cannot cross. (String tensors are refused by the same check, but the CPU plugin has
// no Identity of strings to take such a node, so they are not in this model.)
std::string crossing_model() {
  ephost_test::ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  for (const char* out : {"f", "y"}) m.output(out, onnx::TensorProto::FLOAT, {2, 3});
  auto* pos = m.proto().mutable_graph()->add_initializer();
  pos->set_name("pos");
  pos->set_data_type(onnx::TensorProto::INT64);
  pos->add_int64_data(0);
  m.node("Add", {"x", "x"}, {"a"}, "add");
  m.node("Identity", {"a"}, {"f"}, "identity_float");
  m.node("SequenceConstruct", {"a"}, {"seq"}, "construct");
  m.node("Identity", {"seq"}, {"seq2"}, "identity_sequence");
  m.node("SequenceAt", {"seq2", "pos"}, {"y"}, "at");
  return m.bytes();
}

class ProviderIsolationValues : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(dir_, {"ephost_test_alpha"});
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    model_ = crossing_model();
  }
  Ephost::Session session(const std::string& isolation) {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", isolation);
    o.set_optimization_level(EPHOST_OPT_DISABLE_ALL);  // the Identity nodes stay
    o.append_provider("alpha", {{"identity", "1"}});
    return Ephost::Session(*env_, model_.data(), model_.size(), o);
  }
  static std::map<std::string, std::string> providers_of(const json& report) {
    std::map<std::string, std::string> out;
    for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
    return out;
  }

  ephost_test::TempDir dir_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_;
};

TEST_F(ProviderIsolationValues, SequenceClaimIsRefusedAndRunsOnTheCpuPlugin) {
  Ephost::Session s = session("process");
  const json report = json::parse(s.partition_report_json());
  const auto providers = providers_of(report);
  EXPECT_EQ(providers.at("add"), "alpha") << report.dump(2);
  EXPECT_EQ(providers.at("identity_float"), "alpha") << "a float tensor crosses";
  EXPECT_EQ(providers.at("identity_sequence"), "cpu");
  std::map<std::string, std::string> reasons;
  for (const auto& note : report["graphs"][0]["refused_claims"])
    if (note["provider"] == "alpha" && note["refused"].get<bool>())
      for (const auto& n : note["nodes"]) reasons[n] = note["reason"];
  ASSERT_EQ(reasons.size(), 1u) << report["graphs"][0]["refused_claims"].dump(2);
  EXPECT_NE(reasons["identity_sequence"].find("reads 'seq', a tensor sequence, which does not cross to a provider "
                                              "host process"), std::string::npos) << reasons["identity_sequence"];
  EXPECT_NE(reasons["identity_sequence"].find("ep.alpha.isolation=in_process"), std::string::npos);

  std::vector<float> x = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f};
  for (int r = 0; r < 2; ++r) {
    const auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())},
                           {"f", "y"});
    ASSERT_EQ(out.size(), 2u);
    for (const auto& t : out) {
      const std::vector<float> v = t.to_vector<float>();
      ASSERT_EQ(v.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(v[i], 2 * x[i]) << i;
    }
  }
}

TEST_F(ProviderIsolationValues, InProcessTheSameClaimsStand) {
  const json report = json::parse(session("in_process").partition_report_json());
  const auto providers = providers_of(report);
  EXPECT_EQ(providers.at("identity_sequence"), "alpha") << report.dump(2);
}

}  // namespace
