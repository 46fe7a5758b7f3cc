// A plugin that misbehaves at run time gets a clear error naming the provider and node, never a crash,
// and the session stays usable (alpha's `misbehave` option injects the faults).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

class PluginFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(dir_, {"ephost_test_alpha"});
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    bytes_ = ephost_test::chain_model(2, 3).bytes();
  }
  std::unique_ptr<Ephost::Session> session(const std::string& misbehave) {
    Ephost::SessionOptions o;
    o.append_provider("alpha", {{"misbehave", misbehave}});
    return std::make_unique<Ephost::Session>(*env_, bytes_.data(), bytes_.size(), o);
  }
  Ephost::Exception run_error(const Ephost::Session& s) {
    try {
      s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6)}, {"y"});
    } catch (const Ephost::Exception& e) {
      return e;
    }
    ADD_FAILURE() << "run succeeded";
    return Ephost::Exception(EPHOST_OK, "");
  }
  ephost_test::TempDir dir_;
  std::unique_ptr<Ephost::Env> env_;
  std::string bytes_;
  std::vector<float> x_ = std::vector<float>(6, 0.25f);
};

TEST_F(PluginFaults, KernelErrorNamesProviderAndNodeAndSessionSurvives) {
  auto s = session("fail_compute");
  for (int i = 0; i < 2; ++i) {  // the same clear error every time: nothing was left half-done
    Ephost::Exception e = run_error(*s);
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL);
    EXPECT_NE(e.message().find("provider 'alpha'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'add'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("injected compute failure"), std::string::npos) << e.message();
  }
}

TEST_F(PluginFaults, KernelThatSkipsItsOutputIsCaught) {
  auto s = session("skip_output");
  Ephost::Exception e = run_error(*s);
  EXPECT_EQ(e.code(), EPHOST_EP_FAIL);
  EXPECT_NE(e.message().find("without writing output 0"), std::string::npos) << e.message();
}

TEST_F(PluginFaults, FailingCapabilityIsReportedAndCpuTakesOver) {
  auto s = session("fail_capability");
  auto report = nlohmann::json::parse(s->partition_report_json());
  bool reported = false;
  for (const auto& n : report["graphs"][0]["refused_claims"])
    reported = reported || n["reason"].get<std::string>().find("injected get_capability failure") != std::string::npos;
  EXPECT_TRUE(reported) << report.dump(2);
  for (const auto& n : report["graphs"][0]["nodes"]) EXPECT_EQ(n["provider"], "cpu");
  auto y = s->run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6)}, {"y"})[0].to_vector<float>();
  auto e = ephost_test::chain_expected(x_, 3);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], e[i], 1e-5f);
}

TEST_F(PluginFaults, FailingKernelCreationFailsTheSessionClearly) {
  try {
    session("fail_create_kernel");
    FAIL() << "session created";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL);
    EXPECT_NE(e.message().find("kernel_create for node 'add'"), std::string::npos) << e.message();
  }
}

TEST_F(PluginFaults, BadProviderOptionIsReported) {
  try {
    session("explode");
    FAIL() << "session created";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("unknown misbehave value 'explode'"), std::string::npos) << e.message();
  }
}

}  // namespace
