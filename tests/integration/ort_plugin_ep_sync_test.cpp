// An ONNX Runtime plugin EP's OrtEp::Sync (API 25). ONNX Runtime calls it from IOBinding's
// SynchronizeBoundInputs / SynchronizeBoundOutputs, for the EPs whose nodes read a graph input or write a
// graph output; ephost's runs do that themselves (bound inputs and outputs are ready when a run returns),
// for the EPs whose work the host cannot wait for through streams: before a run that reads a device tensor
// of the application's, and after every run, before the outputs an EP produced are handed over. The test EPs
// ("ortadd" on host memory, "ortdev" with memory of its own, with and without streams) append "sync" to
// the file their option sync_log names, and fail Sync with option fail_sync.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ort_test_plugins.h"
#include "test_support.h"

using ephost_test::TempDir;

namespace {

using ephost_test::install_ort_plugin;
using ephost_test::read_text;

constexpr int64_t kRows = 4, kCols = 6;

// x -> Add(c) -> Relu -> y: every node the test EPs', so they produce the graph's output.
std::string add_relu_model(const TempDir& dir) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {kRows, kCols}).output("y", onnx::TensorProto::FLOAT, {kRows, kCols});
  std::vector<float> c(kCols);
  for (int64_t i = 0; i < kCols; ++i) c[i] = 0.25f * static_cast<float>(i) - 0.5f;
  m.initializer("c", {kCols}, c);
  m.node("Add", {"x", "c"}, {"a"}, "add");
  m.node("Relu", {"a"}, {"y"}, "relu");
  return m.save(dir, "add_relu.onnx");
}

std::vector<float> input_values() { return ephost_test::ramp(kRows * kCols, 0.1f, -1.0f); }

std::vector<float> expected_output() {
  std::vector<float> x = input_values(), y(x.size());
  for (size_t k = 0; k < x.size(); ++k) y[k] = std::max(0.0f, x[k] + 0.25f * static_cast<float>(k % kCols) - 0.5f);
  return y;
}

void expect_output(const Ephost::Tensor& y) {
  const std::vector<float> got = y.to_vector<float>(), want = expected_output();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_FLOAT_EQ(got[k], want[k]) << "element " << k;
}

Ephost::Tensor run_once(const Ephost::Session& s) {
  std::vector<float> x = input_values();
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x.data(), x.size())}, {"y"});
  return out.at(0);
}

size_t syncs_in(const std::string& log) {
  const std::string text = read_text(log);
  size_t n = 0;
  for (size_t at = text.find("sync\n"); at != std::string::npos; at = text.find("sync\n", at + 1)) ++n;
  return n;
}

class OrtPluginEpSync : public ::testing::Test {
 protected:
  void start(const std::string& variant) {
    install_ort_plugin(plugins_, variant);
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = add_relu_model(models_);
  }
  Ephost::SessionOptions options(const std::string& ep, const std::string& isolation = "") const {
    Ephost::SessionOptions o;
    o.add_config("ep." + ep + ".sync_log", log());
    if (!isolation.empty()) o.add_config("session.provider_isolation", isolation);
    return o;
  }
  std::string log() const { return models_.file("sync.log"); }

  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(OrtPluginEpSync, AnEpThatProducesTheOutputIsSyncedOnceAfterEachRun) {
  start("good");
  Ephost::Session s(*env_, model_path_, options("ortadd"));
  EXPECT_EQ(ephost_test::assignment(s)["relu"], "ortadd");
  EXPECT_EQ(syncs_in(log()), 0u);  // not at creation
  expect_output(run_once(s));
  EXPECT_EQ(syncs_in(log()), 1u);
  expect_output(run_once(s));
  expect_output(run_once(s));
  EXPECT_EQ(syncs_in(log()), 3u);
}

TEST_F(OrtPluginEpSync, AnEpWhoseValuesOnlyOtherProvidersHandOverIsNotSynced) {
  start("good");
  const std::string chain = ephost_test::chain_model(kRows, kCols).save(models_, "chain.onnx");
  Ephost::Session s(*env_, chain, options("ortadd"));
  EXPECT_EQ(ephost_test::assignment(s)["relu"], "ortadd");
  EXPECT_EQ(ephost_test::assignment(s)["sigmoid"], "cpu");
  ephost_test::expect_chain_output(s, kRows, kCols);
  EXPECT_EQ(syncs_in(log()), 0u);
}

TEST_F(OrtPluginEpSync, ASyncThatFailsFailsTheRunNamingTheEp) {
  start("good");
  Ephost::SessionOptions o = options("ortadd");
  o.add_config("ep.ortadd.fail_sync", "1");
  Ephost::Session s(*env_, model_path_, o);
  try {
    run_once(s);
    FAIL() << "the run succeeded although the EP's Sync failed";
  } catch (const Ephost::Exception& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << what;
    EXPECT_NE(what.find("provider 'ortadd' Sync (after the run, before it hands over output 'y')"), std::string::npos)
        << what;
    EXPECT_NE(what.find("asked to fail (option fail_sync)"), std::string::npos) << what;
  }
  EXPECT_EQ(syncs_in(log()), 1u);
}

TEST_F(OrtPluginEpSync, AnIsolatedEpIsSyncedInItsProviderHost) {
  start("good");
  Ephost::Session s(*env_, model_path_, options("ortadd", "process"));
  expect_output(run_once(s));
  expect_output(run_once(s));
  EXPECT_EQ(syncs_in(log()), 2u);

  Ephost::SessionOptions o = options("ortadd", "process");
  o.add_config("ep.ortadd.fail_sync", "1");
  Ephost::Session failing(*env_, model_path_, o);
  try {
    run_once(failing);
    FAIL() << "the run succeeded although the isolated EP's Sync failed";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(std::string(e.what()).find("provider 'ortadd' Sync (after the run"), std::string::npos) << e.what();
  }
}

TEST_F(OrtPluginEpSync, ADeviceWithoutStreamsIsSyncedAlsoBeforeARunReadingTheApplicationsDeviceTensor) {
  start("own_device_nostreams");
  Ephost::Session s(*env_, model_path_, options("ortdev"));
  EXPECT_EQ(ephost_test::assignment(s)["add"], "ortdev");
  expect_output(run_once(s));  // a host input: synced after the run only
  EXPECT_EQ(syncs_in(log()), 1u);

  std::vector<float> x = input_values();
  Ephost::Tensor on_device = env_->device_tensor("ortdev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  on_device.copy_from(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x.data(), x.size()));
  Ephost::Session::IoBinding binding(s);
  binding.bind_input("x", on_device).bind_output_to_device("y", "", 0);
  binding.run();
  expect_output(binding.output("y"));
  EXPECT_EQ(syncs_in(log()), 3u);  // before the run and after it
}

TEST_F(OrtPluginEpSync, ADeviceWithStreamsIsWaitedForThroughThemNotSynced) {
  start("own_device");
  Ephost::Session s(*env_, model_path_, options("ortdev"));
  EXPECT_EQ(ephost_test::assignment(s)["add"], "ortdev");
  expect_output(run_once(s));
  EXPECT_EQ(syncs_in(log()), 0u);
}

}  // namespace
