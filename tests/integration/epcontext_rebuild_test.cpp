// A cache that heals itself (ep.context_rebuild=1), through the C API and the example compiling
// plugin built for SDK 2.0.0 (whose contexts the 1.0.0 build rejects): the session serves at once
// through the fallback, the background rebuild replaces the ctx model and binary, and the next
// session loads them as optimal with identical outputs. Cancelling (ending the session), another
// process holding the lock, and a process killed during the rebuild never leave a torn cache.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;
namespace fs = boost::filesystem;

std::vector<float> pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

// x[1,3,8,8] -> Conv -> Relu -> Add -> y: the example plugin compiles it whole.
void write_model(const std::string& path) {
  ModelBuilder m(13, "net");
  m.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y", onnx::TensorProto::FLOAT, {1, 4, 8, 8});
  m.initializer("w", {4, 3, 3, 3}, pattern(4 * 27, 0.3f, 0.0f));
  m.initializer("bias", {1, 4, 1, 1}, {0.1f, -0.2f, 0.3f, 0.05f});
  auto& conv = m.node("Conv", {"x", "w"}, {"c"}, "conv");
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Add", {"r", "bias"}, {"y"}, "add");
  std::ofstream(path, std::ios::binary) << m.bytes();
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<float> run(const Ephost::Session& s) {
  std::vector<float> x = pattern(3 * 8 * 8, 1.0f, 0.5f);
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 3, 8, 8}, x.data(), x.size())}, {"y"});
  return out[0].to_vector<float>();
}

json context_report(const Ephost::Session& s) { return json::parse(s.ep_context_report_json()); }

// The rebuild state of the first rejected context ("" when none).
std::string rebuild_state(const Ephost::Session& s) {
  for (const auto& d : context_report(s))
    if (d["rebuild"].is_object()) return d["rebuild"].value("state", "");
  return "";
}

std::string wait_rebuild(const Ephost::Session& s) {
  for (int i = 0; i < 600; ++i) {
    const std::string state = rebuild_state(s);
    if (state != "running") return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "still running after 30 s";
}

class ContextRebuild : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("net.onnx");
    ctx_ = dir_.file("net_ctx.onnx");
    write_model(model_);
    // A cache compiled by SDK 2.0.0, which the installed 1.0.0 plugin refuses.
    Ephost::Env sdk2(EPHOST_LOG_ERROR, {EPHOST_EXAMPLE_SDK2_PLUGIN_DIR});
    Ephost::SessionOptions o;
    o.add_config(kEphostSessionOptionsEpContextEnable, "1");
    Ephost::Session(sdk2, model_, o);
    ASSERT_TRUE(fs::exists(ctx_));
    old_model_ = read_file_bytes(ctx_);
    old_bin_ = read_file_bytes(dir_.file("net_example.bin"));
  }

  Ephost::SessionOptions rebuild_options(int compile_delay_ms = 0) {
    Ephost::SessionOptions o;
    o.add_config(kEphostSessionOptionsEpContextRebuild, "1");
    if (compile_delay_ms) o.add_config("ep.example.compile_delay_ms", std::to_string(compile_delay_ms));
    return o;
  }

  TempDir dir_;
  std::string model_, ctx_, old_model_, old_bin_;
  Ephost::Env env_{EPHOST_LOG_ERROR, {EPHOST_EXAMPLE_PLUGIN_DIR}};
};

TEST_F(ContextRebuild, RejectedCacheIsServedThenRebuiltAndTheNextSessionLoadsItOptimal) {
  std::vector<float> reference;
  {
    Ephost::SessionOptions cpu;
    cpu.append_provider("cpu");
    reference = run(Ephost::Session(env_, model_, cpu));
  }
  std::vector<float> served;
  {
    Ephost::Session first(env_, ctx_, rebuild_options());
    const json report = context_report(first);
    ASSERT_EQ(report.size(), 1u);
    EXPECT_EQ(report[0]["verdict"], "unsupported");
    EXPECT_TRUE(report[0]["fell_back"].get<bool>());
    served = run(first);  // served at once, through the fallback, while the rebuild runs
    ASSERT_EQ(wait_rebuild(first), "written");
    const json rebuild = context_report(first)[0]["rebuild"];
    EXPECT_EQ(rebuild["ctx_model"], fs::absolute(ctx_).string());
    ASSERT_EQ(rebuild["files"].size(), 2u);
    EXPECT_EQ(fs::path(rebuild["files"][1].get<std::string>()).filename(), "net_ctx.onnx") << "ctx model last";
  }
  ASSERT_EQ(served.size(), reference.size());
  for (size_t i = 0; i < served.size(); ++i) EXPECT_NEAR(served[i], reference[i], 1e-4) << i;
  EXPECT_NE(read_file_bytes(ctx_), old_model_);
  EXPECT_FALSE(fs::exists(dir_.file(".net_ctx.onnx.rebuild"))) << "the staging folder is gone";

  Ephost::Session next(env_, ctx_, rebuild_options());
  const json report = context_report(next);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0]["verdict"], "optimal");
  EXPECT_TRUE(report[0]["loaded"].get<bool>());
  EXPECT_TRUE(report[0]["rebuild"].is_null()) << "nothing to rebuild";
  const std::vector<float> loaded = run(next);
  for (size_t i = 0; i < loaded.size(); ++i) EXPECT_NEAR(loaded[i], reference[i], 1e-4) << i;
  // What the rebuilt cache runs is what a fresh compile runs: identical bits.
  Ephost::SessionOptions fresh;
  fresh.append_provider("example");
  EXPECT_EQ(run(Ephost::Session(env_, model_, fresh)), loaded);
}

TEST_F(ContextRebuild, EndingTheSessionCancelsTheRebuildAndLeavesTheOldCache) {
  {
    Ephost::Session s(env_, ctx_, rebuild_options(1500));
    EXPECT_EQ(rebuild_state(s), "running");
    // Let the compile start (the staging folder appears first), so the cancel lands in its middle.
    for (int i = 0; i < 200 && !fs::exists(dir_.file(".net_ctx.onnx.rebuild")); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(fs::exists(dir_.file(".net_ctx.onnx.rebuild")));
  }  // cancelled here: the compile finishes, nothing is renamed
  EXPECT_EQ(read_file_bytes(ctx_), old_model_);
  EXPECT_EQ(read_file_bytes(dir_.file("net_example.bin")), old_bin_);
  EXPECT_FALSE(fs::exists(dir_.file(".net_ctx.onnx.rebuild")));
}

TEST_F(ContextRebuild, AnotherProcessHoldingTheLockMakesItSkip) {
  const int fd = ::open(dir_.file(".net_ctx.onnx.rebuild.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  // flock locks belong to open file descriptions: a child process holds it as another process would.
  const pid_t holder = fork();
  if (holder == 0) {
    ::sleep(30);
    _exit(0);
  }
  ::close(fd);
  {
    Ephost::Session s(env_, ctx_, rebuild_options());
    EXPECT_EQ(wait_rebuild(s), "skipped");
    EXPECT_NE(context_report(s)[0]["rebuild"]["reason"].get<std::string>().find("another process"),
              std::string::npos);
    run(s);
  }
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_EQ(read_file_bytes(ctx_), old_model_);
}

TEST_F(ContextRebuild, AProcessKilledDuringTheRebuildLeavesTheOldCacheUsable) {
  const pid_t child = fork();
  if (child == 0) {
    // The child rebuilds slowly, and is killed in the middle.
    Ephost::Session s(env_, ctx_, rebuild_options(3000));
    ::sleep(30);
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(read_file_bytes(ctx_), old_model_) << "nothing was renamed into place";
  EXPECT_EQ(read_file_bytes(dir_.file("net_example.bin")), old_bin_);
  // The old cache still serves (through the fallback), and the next rebuild clears the killed one's
  // staging folder and finishes.
  Ephost::Session s(env_, ctx_, rebuild_options());
  EXPECT_EQ(context_report(s)[0]["verdict"], "unsupported");
  run(s);
  EXPECT_EQ(wait_rebuild(s), "written");
  EXPECT_FALSE(fs::exists(dir_.file(".net_ctx.onnx.rebuild")));
}

TEST_F(ContextRebuild, WithoutTheOptionNothingIsRebuilt) {
  Ephost::Session s(env_, ctx_);
  EXPECT_EQ(rebuild_state(s), "");
  EXPECT_EQ(read_file_bytes(ctx_), old_model_);
}

}  // namespace

namespace {

struct ProgressCalls {
  std::atomic<size_t> calls{0};
};
void count_progress(const char*, size_t, size_t, void* user) { ++static_cast<ProgressCalls*>(user)->calls; }

// The caller's progress callback and profiling belong to the session it created: the background
// compile neither calls the callback (whose `user` the CLI frees once creation ends) nor writes a trace.
TEST_F(ContextRebuild, TheBackgroundCompileLeavesTheCallersProgressCallbackAndProfilingAlone) {
  ProgressCalls progress;
  Ephost::SessionOptions o = rebuild_options();
  o.set_progress_callback(&count_progress, &progress);
  o.add_config(kEphostSessionOptionsEnableProfiling, "1");
  o.add_config(kEphostSessionOptionsProfileFilePrefix, dir_.file("trace"));
  Ephost::Session first(env_, ctx_, o);
  const size_t during_creation = progress.calls.load();
  EXPECT_GT(during_creation, 0u);
  ASSERT_EQ(wait_rebuild(first), "written");
  EXPECT_EQ(progress.calls.load(), during_creation) << "the rebuild reported progress to the caller";
  size_t traces = 0;
  for (const auto& e : fs::directory_iterator(dir_.path())) traces += e.path().filename().string().rfind("trace_", 0) == 0;
  EXPECT_EQ(traces, 0u) << "the rebuild wrote a trace";
}

}  // namespace
