// An EPContext (ctx) model whose EPContext node belongs to an isolated provider that fails too often:
// the example compiling plugin (recording, samples/example_ep) runs in a provider host process and
// its process is SIGKILLed three times (the provider's max_failures).
// - With the source model known (onnx_model_filename beside the ctx model, or
//   ep.context_source_model_path), the session plans again from the source model's nodes of that
//   partition: they run on the CPU plugin, with correct outputs, and the report says so.
// - With no source model (a ctx model shipped alone), the failure says so and what to do, the run
//   fails with EP_FAIL naming the plugin and the call, and the provider is restarted instead of falling
//   back: the next run succeeds through a new process.
// - 8 threads running one ctx-model session while its provider host is killed: every run succeeds with
//   correct outputs or fails with EP_FAIL; none hangs.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/filesystem.hpp>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include <onnx/onnx_pb.h>
#include "provider_host_kill.h"
#include "example_isolated_test.h"
#include "test_support.h"

namespace {

using json = nlohmann::json;

class ProviderIsolationCtxFallback : public ephost_test::ExampleIsolatedTest {
 protected:
  // Compiles the source model into model_ctx.onnx (contexts embedded when `embed`); returns its path.
  std::string make_ctx_model(bool embed) {
    Ephost::SessionOptions o = isolated();
    o.add_config(kEphostSessionOptionsEpContextEnable, "1");
    if (embed) o.add_config(kEphostSessionOptionsEpContextEmbedMode, "1");
    { Ephost::Session compile(*env_, model_, o); }
    return dir_.file("model_ctx.onnx");
  }


  std::vector<float> run(const Ephost::Session& s) const {
    return s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, const_cast<float*>(x_.data()), 6)}, {"y"})[0]
        .to_vector<float>();
  }
  bool correct(const std::vector<float>& y) const {
    const std::vector<float> want = ephost_test::chain_expected(x_, 3);
    if (y.size() != want.size()) return false;
    for (size_t i = 0; i < y.size(); ++i)
      if (std::abs(y[i] - want[i]) > 1e-5f) return false;
    return true;
  }

  // Kills the provider host three times, a run after each; returns the runs' errors ("" for a run that
  // gave correct outputs).
  std::vector<std::string> kill_three_times(const Ephost::Session& s) {
    std::vector<std::string> errors;
    for (int kill = 1; kill <= 3; ++kill) {
      ephost_test::kill_provider_host(s);
      if (::testing::Test::HasFatalFailure()) return errors;
      try {
        errors.push_back(correct(run(s)) ? "" : "wrong outputs");
      } catch (const Ephost::Exception& e) {
        EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
        errors.push_back(e.message().empty() ? "(no message)" : e.message());
      }
    }
    return errors;
  }

  static json isolation_report(const Ephost::Session& s) {
    return json::parse(s.partition_report_json())["providers"][0]["isolation"];
  }
  static std::string providers_of_nodes(const Ephost::Session& s) {
    std::string out;
    const json report = json::parse(s.partition_report_json());
    for (const auto& n : report["graphs"][0]["nodes"])
      out += (out.empty() ? "" : ",") + n["op_type"].get<std::string>() + ":" + n["provider"].get<std::string>();
    return out;
  }
};

// The source model beside the ctx model (its onnx_model_filename): after the third loss the session
// plans the partition again from the source model's nodes, on the CPU plugin.
TEST_F(ProviderIsolationCtxFallback, WithTheSourceBesideItFallsBackToTheSourceNodesOnTheCpuPlugin) {
  const std::string ctx = make_ctx_model(false);
  Ephost::Session s(*env_, ctx, isolated());
  ASSERT_EQ(calls("context_load"), 1) << s.ep_context_report_json();
  ASSERT_TRUE(correct(run(s)));
  const std::vector<std::string> errors = kill_three_times(s);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  // The run in which the fallback is noticed may fail; it names the provider and where its work goes.
  if (!errors[2].empty()) {
    EXPECT_NE(errors[2].find("provider 'example'"), std::string::npos) << errors[2];
  }
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(correct(run(s))) << "run " << i << " after the fallback";

  const json isolation = isolation_report(s);
  EXPECT_EQ(isolation["state"], "fallen_back") << isolation.dump(2);
  EXPECT_EQ(isolation["failures"], 3);
  EXPECT_EQ(isolation["left_out_of_plan"], true) << isolation.dump(2);
  // The EPContext node's step runs its source nodes on the CPU plugin.
  const std::string placed = providers_of_nodes(s);
  EXPECT_NE(placed.find("EPContext:cpu"), std::string::npos) << placed;
  EXPECT_EQ(placed.find(":example"), std::string::npos) << placed;
  EXPECT_EQ(calls("compile"), 1) << "the source nodes are not given to the provider that fell back";
}

// ep.context_source_model_path names the source when it is not beside the ctx model.
TEST_F(ProviderIsolationCtxFallback, TheSourceNamedByTheOptionIsUsed) {
  const std::string ctx = make_ctx_model(true);
  const std::string moved = dir_.file("elsewhere.onnx");
  ASSERT_EQ(::rename(model_.c_str(), moved.c_str()), 0);
  Ephost::SessionOptions o = isolated();
  o.add_config(kEphostSessionOptionsEpContextSourceModelPath, moved);
  Ephost::Session s(*env_, ctx, o);
  kill_three_times(s);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(correct(run(s))) << "run " << i << " after the fallback";
  EXPECT_EQ(isolation_report(s)["state"], "fallen_back");
}

// A ctx model shipped alone (embedded context, its source model gone): there is nothing to fall back
// to, so the provider is restarted instead of falling back. The losses (here between runs, so no run
// was in them) cost no run; the third one's failure says why there is no fallback and what to do, and
// the session's next runs go through the new process, which loads the context (nothing is compiled).
TEST_F(ProviderIsolationCtxFallback, WithoutASourceTheFailureSaysWhatToDoAndTheProviderRestarts) {
  const std::string ctx = make_ctx_model(true);
  ASSERT_EQ(::unlink(model_.c_str()), 0);
  Ephost::Session s(*env_, ctx, isolated());
  ASSERT_TRUE(correct(run(s)));
  const std::vector<std::string> errors = kill_three_times(s);
  EXPECT_EQ(errors, std::vector<std::string>(3, "")) << "runs through the restarted provider";
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(correct(run(s))) << "run " << i << " through the restarted provider";
  const json isolation = isolation_report(s);
  EXPECT_EQ(isolation["state"], "running") << isolation.dump(2);
  EXPECT_EQ(isolation["failures"], 3);
  EXPECT_GT(isolation.value("process_id", -1L), 0) << isolation.dump(2);
  const std::string why = isolation["last_failure"];
  EXPECT_NE(why.find("provider 'example'"), std::string::npos) << why;
  EXPECT_NE(why.find("has no source model"), std::string::npos) << why;
  EXPECT_NE(why.find("ep.context_source_model_path"), std::string::npos) << why;
  EXPECT_EQ(calls("compile"), 1) << "the restarts load the context; nothing is compiled";
  EXPECT_EQ(calls("context_load"), 4) << "the session's load, then one per restart";
}

// A context the plugin rejects at creation (its ep_sdk_version attribute says another major version of
// the SDK) is INVALID_GRAPH and served by the source nodes on the next providers, in process and
// isolated alike.
TEST_F(ProviderIsolationCtxFallback, ARejectedContextFallsBackAtCreationInProcessAndIsolatedAlike) {
  const std::string ctx = make_ctx_model(true);
  onnx::ModelProto m;
  {
    std::ifstream in(ctx, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  bool edited = false;
  for (auto& node : *m.mutable_graph()->mutable_node())
    if (node.op_type() == "EPContext")
      for (auto& a : *node.mutable_attribute())
        if (a.name() == "ep_sdk_version") {
          a.set_s("99.0.0");
          edited = true;
        }
  ASSERT_TRUE(edited) << "the example plugin records ep_sdk_version";
  const std::string rejected = dir_.file("rejected_ctx.onnx");
  {
    std::ofstream out(rejected, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  for (const char* mode : {"in_process", "process"}) {
    Ephost::SessionOptions o = isolated();
    o.add_config("session.provider_isolation", mode);
    Ephost::Session s(*env_, rejected, o);
    const json report = json::parse(s.ep_context_report_json());
    ASSERT_EQ(report.size(), 1u) << report.dump(2);
    const json& d = report[0];
    EXPECT_EQ(d["status"], "INVALID_GRAPH") << mode;
    EXPECT_EQ(d["verdict"], "unsupported") << mode;
    EXPECT_TRUE(d["fell_back"].get<bool>()) << mode;
    EXPECT_NE(d["reason"].get<std::string>().find("ep_sdk_version"), std::string::npos) << mode << ": " << d["reason"];
    EXPECT_TRUE(correct(run(s))) << mode;
    const std::string placed = providers_of_nodes(s);
    EXPECT_EQ(placed.find("EPContext"), std::string::npos) << mode << ": " << placed;
    EXPECT_EQ(placed.find(":example"), std::string::npos) << mode << ": the rejecting provider takes none: " << placed;
  }
}

// 8 threads on one ctx-model session while its provider host is killed three times: every run gives
// correct outputs or fails with EP_FAIL, none hangs (ctest's timeout would catch one), and once the
// fallback is planned every run succeeds.
TEST_F(ProviderIsolationCtxFallback, EightThreadsWhileTheProviderIsKilled) {
  const std::string ctx = make_ctx_model(false);
  Ephost::Session s(*env_, ctx, isolated());
  ASSERT_TRUE(correct(run(s)));
  std::atomic<bool> stop{false};
  std::atomic<int> succeeded{0}, ep_failed{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) {
        try {
          if (correct(run(s)))
            ++succeeded;
          else
            ++wrong;
        } catch (const Ephost::Exception& e) {
          if (e.code() == EPHOST_EP_FAIL)
            ++ep_failed;
          else
            ++wrong;
        }
      }
    });
  for (int kill = 0; kill < 3; ++kill) {
    usleep(50000);
    const long pid = ephost_test::provider_host_pid(s);
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    usleep(50000);
  }
  // Kills between runs may find the process already being replaced: keep killing until it falls back.
  for (int i = 0; i < 200 && isolation_report(s)["state"] != "fallen_back"; ++i) {
    const long pid = ephost_test::provider_host_pid(s);
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    usleep(20000);
  }
  usleep(100000);
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(succeeded.load(), 0);
  EXPECT_EQ(isolation_report(s)["state"], "fallen_back");
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(correct(run(s))) << "run " << i << " after the fallback";
}

}  // namespace
