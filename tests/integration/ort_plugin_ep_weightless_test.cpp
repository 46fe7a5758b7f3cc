// Weightless EPContext modes asked of an ONNX Runtime plugin EP (API 29) as ONNX Runtime asks them:
// ep.<name>.enable_weightless_mode ("1" EXTERNAL_ONLY, "2" ALL) must be listed by the EP device's metadata
// ("weightless_support") before the EP is created, reaches the EP as "ep.enable_weightless_mode" with the
// deprecated "ep.enable_weightless" switch, and must be included in what OrtEp::GetWeightlessSupport answers
// before the EP compiles. The test EP "ortadd" states "all" in its metadata, answers what its option
// weightless_support says (ALL by default), and records the entries it saw in its compile_log.
#include <gtest/gtest.h>

#include <string>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ort_test_plugins.h"
#include "test_support.h"

using ephost_test::TempDir;

namespace {

using ephost_test::install_ort_plugin;
using ephost_test::read_text;

class OrtPluginEpWeightless : public ::testing::Test {
 protected:
  void SetUp() override {
    install_ort_plugin(plugins_, "good");
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(4, 6).save(models_);
  }
  Ephost::SessionOptions options(const std::string& mode, const std::string& support = "") const {
    Ephost::SessionOptions o;
    std::vector<std::pair<std::string, std::string>> entries = {{"enable_weightless_mode", mode},
                                                                {"compile_log", log()}};
    if (!support.empty()) entries.emplace_back("weightless_support", support);
    o.append_provider("ortadd", entries);
    return o;
  }
  std::string log() const { return models_.file("compile.log"); }
  // The message of the failure creating a session with `o`, "" when it was created.
  std::string creation_failure(const Ephost::SessionOptions& o, EphostStatusCode* code = nullptr) const {
    try {
      Ephost::Session s(*env_, model_path_, o);
      return "";
    } catch (const Ephost::Exception& e) {
      if (code) *code = e.code();
      return e.what();
    }
  }

  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(OrtPluginEpWeightless, AModeTheEpSupportsReachesItAndItCompiles) {
  Ephost::Session s(*env_, model_path_, options("2"));
  EXPECT_EQ(ephost_test::assignment(s)["add"], "ortadd");
  ephost_test::expect_chain_output(s, 4, 6);
  EXPECT_EQ(read_text(log()), "graph\nweightless mode=2 enabled=1\n");
}

TEST_F(OrtPluginEpWeightless, AModeItsGetWeightlessSupportLeavesOutFailsBeforeItCompiles) {
  EphostStatusCode code = EPHOST_OK;
  const std::string why = creation_failure(options("2", "1"), &code);
  EXPECT_EQ(code, EPHOST_EP_FAIL) << why;
  EXPECT_NE(why.find("provider 'ortadd': weightless mode ALL was asked for (enable_weightless_mode), and its "
                     "GetWeightlessSupport answered EXTERNAL_ONLY (1)"),
            std::string::npos)
      << why;
  EXPECT_EQ(read_text(log()), "") << "Compile must not be called";
  // An EP that answers both modes compiles for either.
  Ephost::Session s(*env_, model_path_, options("2", "3"));
  ephost_test::expect_chain_output(s, 4, 6);
}

TEST_F(OrtPluginEpWeightless, AModeTheDeviceMetadataLeavesOutFailsBeforeTheEpIsCreated) {
  EphostStatusCode code = EPHOST_OK;
  const std::string why = creation_failure(options("1"), &code);
  EXPECT_NE(why.find("weightless mode EXTERNAL_ONLY was asked for (enable_weightless_mode=1), and its device's "
                     "metadata (weightless_supported_modes / weightless_support) says it supports ALL"),
            std::string::npos)
      << why;
}

TEST_F(OrtPluginEpWeightless, AnUnknownModeIsRefused) {
  for (const std::string& mode : {"3", "0x2", "", "all"}) {
    EphostStatusCode code = EPHOST_OK;
    const std::string why = creation_failure(options(mode), &code);
    EXPECT_NE(why.find("option enable_weightless_mode is '" + mode + "'"), std::string::npos) << why;
  }
  // "0" asks for none: no check, the EP sees the switch off.
  Ephost::Session s(*env_, model_path_, options("0", "0"));
  ephost_test::expect_chain_output(s, 4, 6);
  EXPECT_EQ(read_text(log()), "graph\nweightless mode=0 enabled=0\n");
}

}  // namespace
