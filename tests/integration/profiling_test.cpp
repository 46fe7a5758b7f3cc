// Session profiling (session.enable_profiling, SessionEndProfiling) and creation progress
// (SetSessionProgressCallback) through the public API, and the CLI's --profile and --progress.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;
using ephost_test::TempDir;

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, false);
}

std::vector<json> events_named(const json& trace, const std::string& category, const std::string& name = "") {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e["cat"] == category && (name.empty() || e["name"] == name)) out.push_back(e);
  return out;
}

bool inside(const json& inner, const json& outer) {
  const int64_t s = inner["ts"], d = inner["dur"], os = outer["ts"], od = outer["dur"];
  return inner["tid"] == outer["tid"] && s >= os && s + d <= os + od;
}

void run_chain(Ephost::Session& session, int times) {
  std::vector<float> x(4 * 8, 0.25f);
  for (int i = 0; i < times; ++i) {
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {4, 8}, x.data(), x.size());
    session.run({"x"}, {in}, {"y"});
  }
}

TEST(Profiling, TraceHasCreationStagesRunsAndNodesNestedInTheirRun) {
  TempDir dir;
  const std::string bytes = ephost_test::chain_model(4, 8).bytes();
  Ephost::SessionOptions options;
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("trace"));
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  run_chain(session, 3);
  const std::string path = session.end_profiling();
  EXPECT_EQ(path.rfind(dir.file("trace_"), 0), 0u) << path << ": named <prefix>_<date>_<time>.json";
  EXPECT_EQ(path.substr(path.size() - 5), ".json");

  const json trace = read_json(path);
  ASSERT_TRUE(trace.is_object() && trace["traceEvents"].is_array()) << "a Chrome trace object: " << path;
  for (const json& e : trace["traceEvents"]) {
    EXPECT_EQ(e["ph"], "X") << e;
    for (const char* key : {"cat", "name", "pid", "tid", "ts", "dur", "args"}) EXPECT_TRUE(e.contains(key)) << key;
    EXPECT_GE(e["dur"].get<int64_t>(), 0);
  }
  // Creation: one span, each stage inside it.
  const std::vector<json> creation = events_named(trace, "session", "session creation");
  ASSERT_EQ(creation.size(), 1u);
  for (const char* stage : {"create providers", "build graph", "partition", "compile", "plan", "create executors"}) {
    const std::vector<json> s = events_named(trace, "session", stage);
    ASSERT_EQ(s.size(), 1u) << stage;
    EXPECT_TRUE(inside(s[0], creation[0])) << stage << " lies inside session creation";
  }
  // Runs: three spans, every step of the chain once per run, each inside one run.
  const std::vector<json> runs = events_named(trace, "session", "model run");
  ASSERT_EQ(runs.size(), 3u);
  const std::vector<json> nodes = events_named(trace, "node");
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes.size() % 3, 0u) << "the same steps each run";
  std::set<std::string> ops;
  for (const json& n : nodes) {
    int containing = 0;
    for (const json& r : runs) containing += inside(n, r) ? 1 : 0;
    EXPECT_EQ(containing, 1) << "node span " << n << " lies in exactly one run";
    EXPECT_EQ(n["args"]["provider"], "cpu");
    EXPECT_TRUE(n["args"].contains("input_shapes")) << n;
    ops.insert(n["args"]["op_type"].get<std::string>());
  }
  EXPECT_FALSE(ops.empty());

  // Later events go to a new file: one more run, one run span there.
  run_chain(session, 1);
  const std::string second = session.end_profiling();
  EXPECT_NE(second, path);
  const json later = read_json(second);
  EXPECT_EQ(events_named(later, "session", "model run").size(), 1u);
  EXPECT_TRUE(events_named(later, "session", "session creation").empty());
}

TEST(Profiling, EndProfilingWithoutProfilingSaysWhichKeyTurnsItOn) {
  const std::string bytes = ephost_test::chain_model(4, 8).bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  try {
    session.end_profiling();
    FAIL() << "profiling is off";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("session.enable_profiling=1"), std::string::npos) << e.what();
  }
  EphostStatus* null_out = Ephost::api().SessionEndProfiling(session.get(), nullptr);
  ASSERT_NE(null_out, nullptr);
  EXPECT_EQ(Ephost::api().GetErrorCode(null_out), EPHOST_INVALID_ARGUMENT);
  Ephost::api().ReleaseStatus(null_out);
}

TEST(Profiling, SessionEndWritesWhatWasRecorded) {
  TempDir dir;
  const std::string bytes = ephost_test::chain_model(4, 8).bytes();
  {
    Ephost::SessionOptions options;
    options.add_config(kEphostSessionOptionsEnableProfiling, "1")
        .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("at_end"));
    Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
    run_chain(session, 2);
  }
  std::vector<std::string> written;
  for (const auto& entry : ephost_test::fs::directory_iterator(dir.path())) written.push_back(entry.path().string());
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(events_named(read_json(written[0]), "session", "model run").size(), 2u);
}

TEST(Profiling, UnwritablePrefixIsAnErrorThatLosesNothing) {
  TempDir dir;
  std::ofstream(dir.file("a_file")) << "not a folder";
  const std::string bytes = ephost_test::chain_model(4, 8).bytes();
  Ephost::SessionOptions options;
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("a_file") + "/trace");
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  run_chain(session, 1);
  try {
    session.end_profiling();
    FAIL() << "a regular file stands where the folder should be";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("a_file")), std::string::npos) << e.what();
  }
  // Again, and once more in the destructor (which logs the failure): never a crash.
  EXPECT_THROW(session.end_profiling(), Ephost::Exception);
}

struct ProgressLog {
  std::vector<std::string> stages;
  std::vector<std::pair<size_t, size_t>> calls;
};

void record_progress(const char* stage, size_t done, size_t total, void* user) {
  auto* log = static_cast<ProgressLog*>(user);
  log->stages.emplace_back(stage);
  log->calls.emplace_back(done, total);
}

TEST(Progress, CompileReportsZeroThenEachUnitUpToTheTotal) {
  ProgressLog log;
  const std::string bytes = ephost_test::chain_model(4, 8).bytes();
  Ephost::SessionOptions options;
  options.set_progress_callback(&record_progress, &log);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  ASSERT_GE(log.calls.size(), 2u);
  EXPECT_EQ(log.calls.front().first, 0u) << "the stage is announced first";
  const size_t total = log.calls.front().second;
  EXPECT_GE(total, 1u);
  for (size_t i = 0; i < log.calls.size(); ++i) {
    EXPECT_EQ(log.stages[i], "compile");
    EXPECT_EQ(log.calls[i].second, total);
    EXPECT_EQ(log.calls[i].first, i) << "one call per unit, in order";
  }
  EXPECT_EQ(log.calls.back().first, total);

  // Removed with NULL: a second session reports nothing.
  ProgressLog none;
  Ephost::SessionOptions quiet;
  quiet.set_progress_callback(&record_progress, &none);
  quiet.set_progress_callback(nullptr, nullptr);
  Ephost::Session second(cpu_env(), bytes.data(), bytes.size(), quiet);
  EXPECT_TRUE(none.calls.empty());
}

TEST(ProfilingCli, RunWritesTheTraceWhereAskedAndShowsProgressOnAPipe) {
  TempDir dir;
  const std::string model = ephost_test::chain_model(3, 5).save(dir);
  const std::string trace = dir.file("run trace.json");
  const ephost_test::CommandResult r = ephost_test::run_command(
      "'" + std::string(EPHOST_CLI_PATH) + "' run '" + model + "' --profile '" + trace + "' --progress 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("profile written to " + trace), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model.onnx ... compiling 0/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" groups (100%), 0 s, done"), std::string::npos) << r.output;
  const json t = read_json(trace);
  ASSERT_TRUE(t.is_object()) << r.output;
  EXPECT_EQ(events_named(t, "session", "model run").size(), 1u);
  size_t files = 0;
  for (const auto& entry : ephost_test::fs::directory_iterator(dir.path())) files += entry.path().string() != model;
  EXPECT_EQ(files, 1u) << "no partial trace left beside the one asked for";
}

}  // namespace
