// A provider host process restarted after a crash loads the EPContext cache instead of compiling
// again: the example compiling plugin (recording, samples/example_ep) runs isolated; its calls in the
// provider host are counted through the call journal (plugin_call_record.h). Whether the session
// generated the cache (ep.context_enable=1) or was created from a ctx model, the restarted process
// calls context_load, never compile, and the runs give the same outputs.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "example_isolated_test.h"
#include "test_support.h"
#include "provider_host_kill.h"

namespace {

class ProviderIsolationRestart : public ephost_test::ExampleIsolatedTest {
 protected:
  void expect_correct(const Ephost::Session& s) {
    std::vector<float> y = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6)}, {"y"})[0]
                               .to_vector<float>();
    const std::vector<float> want = ephost_test::chain_expected(x_, 3);
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5f) << i;
  }

  static long process_of(const Ephost::Session& s) { return ephost_test::provider_host_pid(s); }
  static void kill_provider_host(const Ephost::Session& s) { ephost_test::kill_provider_host(s); }
};

TEST_F(ProviderIsolationRestart, RestartLoadsTheContextTheSessionGenerated) {
  Ephost::SessionOptions o = isolated();
  o.add_config("ep.context_enable", "1");
  Ephost::Session s(*env_, model_, o);
  ASSERT_EQ(calls("compile"), 1) << s.partition_report_json();
  ASSERT_EQ(calls("context_emit"), 1);
  expect_correct(s);
  const long first = process_of(s);
  for (int restart = 1; restart <= 2; ++restart) {
    ASSERT_NO_FATAL_FAILURE(kill_provider_host(s));
    expect_correct(s);
    EXPECT_NE(process_of(s), first);
    EXPECT_EQ(calls("compile"), 1) << "restart " << restart << " compiled again";
    EXPECT_EQ(calls("context_load"), restart);
  }
  expect_correct(s);
  EXPECT_EQ(calls("context_load"), 2);
}

TEST_F(ProviderIsolationRestart, RestartLoadsTheContextOfACtxModel) {
  {
    Ephost::SessionOptions o = isolated();
    o.add_config("ep.context_enable", "1");
    Ephost::Session compile(*env_, model_, o);
  }
  ASSERT_EQ(calls("compile"), 1);
  Ephost::Session s(*env_, dir_.file("model_ctx.onnx"), isolated());
  EXPECT_EQ(calls("context_load"), 1) << s.ep_context_report_json();
  expect_correct(s);
  ASSERT_NO_FATAL_FAILURE(kill_provider_host(s));
  expect_correct(s);
  EXPECT_EQ(calls("compile"), 1);
  EXPECT_EQ(calls("context_load"), 2);
}

// Without a cache the restart compiles again, as before.
TEST_F(ProviderIsolationRestart, WithoutACacheTheRestartCompiles) {
  Ephost::Session s(*env_, model_, isolated());
  expect_correct(s);
  ASSERT_NO_FATAL_FAILURE(kill_provider_host(s));
  expect_correct(s);
  EXPECT_EQ(calls("compile"), 2);
  EXPECT_EQ(calls("context_load"), 0);
}

}  // namespace
