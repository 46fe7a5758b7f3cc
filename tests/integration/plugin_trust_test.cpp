// Every kind of broken plugin, as a hostile user or a buggy vendor would meet it: each alone in a plugin
// folder, through `ephost` and the C API. Plugins that crash, abort, exit or hang while probed are
// skipped with the reason and every command keeps working; plugins that misuse the host table in a
// session get INVALID_ARGUMENT and a report, never a crash. What cannot be survived in process (a crash
// or hang inside the plugin's own provider_create, get_capability or compute) is at least reported
// naming the plugin, its library and the call: those wait for out-of-process providers.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

extern char** environ;

namespace {

using std::chrono::milliseconds;

// ---- a child process with a deadline ------------------------------------------------------------------

struct ProcessResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (ours included, see stop_when)
  bool stopped = false;  // killed by us: the output contained stop_when, or the limit passed
  std::string output;  // stdout and stderr
};

// Runs `argv` with `env` added to this process's environment, collecting its output. Kills it when
// its output contains `stop_when` (when given) or after `limit`.
ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, milliseconds limit,
                          const std::string& stop_when = "") {
  std::vector<std::string> environment(env);
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);  // ours first: getenv takes the first
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int fds[2];
  EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = -1;
  ProcessResult r;
  const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    ADD_FAILURE() << "cannot start " << argv[0];
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || (!stop_when.empty() && r.output.find(stop_when) != std::string::npos)) {
      kill(pid, SIGKILL);
      r.stopped = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    r.output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A folder holding one broken plugin (and its own registry cache), and a model to run.
class BrokenPluginFolder {
 public:
  explicit BrokenPluginFolder(const std::string& variant) : plugin_("ephost_broken_" + variant) {
    ephost_test::install_plugins(dir_, {plugin_});
    ephost_test::ModelBuilder m;
    m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
    m.node("Relu", {"x"}, {"y"}, "relu");
    model_ = m.save(models_);
  }
  std::string library() const { return dir_.file("lib" + plugin_ + ".so"); }
  const std::string& model() const { return model_; }
  std::vector<std::string> env(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> e = {"EPHOST_PLUGIN_PATH=" + dir_.path(),
                                  "EPHOST_PLUGIN_REGISTRY=" + models_.file("registry.json"),
                                  "EPHOST_PLUGIN_SCAN_TIMEOUT_MS=1500"};
    e.insert(e.end(), more.begin(), more.end());
    return e;
  }
  ProcessResult ephost(const std::vector<std::string>& args, const std::vector<std::string>& more_env = {},
                       const std::string& stop_when = "", milliseconds limit = milliseconds(60000)) const {
    std::vector<std::string> argv = {EPHOST_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, env(more_env), limit, stop_when);
  }
  std::string dir() const { return dir_.path(); }

 private:
  std::string plugin_;
  ephost_test::TempDir dir_, models_;
  std::string model_;
};

// ---- broken while probed: skipped with the reason, every command survives --------------------------------

struct ProbeKind {
  const char* variant;
  const char* reason;
};
const ProbeKind kProbeKinds[] = {
    {"negotiate_segfault", "crashed during negotiation: killed by SIGSEGV (segmentation fault)"},
    {"negotiate_abort", "crashed during negotiation: killed by SIGABRT (aborted)"},
    {"negotiate_stack_overflow", "crashed during negotiation: killed by SIGSEGV (segmentation fault)"},
    {"negotiate_sigkill", "crashed during negotiation: killed by SIGKILL"},
    {"negotiate_sleep", "timed out during negotiation: no answer within 1500 ms"},
    {"negotiate_exit0", "exited with status 0 during negotiation"},
    {"negotiate_exit3", "exited with status 3 during negotiation"},
    {"static_abort", "crashed during loading the library (static constructors): killed by SIGABRT (aborted)"},
    {"static_segfault", "crashed during loading the library (static constructors): killed by SIGSEGV"},
    {"describe_segfault", "crashed during describe: killed by SIGSEGV (segmentation fault)"},
    {"devices_segfault", "crashed during device enumeration: killed by SIGSEGV (segmentation fault)"},
};

void PrintTo(const ProbeKind& k, std::ostream* os) { *os << k.variant; }

class BrokenWhileProbed : public ::testing::TestWithParam<ProbeKind> {};

TEST_P(BrokenWhileProbed, PluginsAndRunSurviveAndNameTheReason) {
  const ProbeKind& kind = GetParam();
  BrokenPluginFolder folder(kind.variant);
  ProcessResult plugins = folder.ephost({"plugins"});
  EXPECT_EQ(plugins.exit_code, 0) << plugins.output;
  EXPECT_TRUE(contains(plugins.output, folder.library() + ": " + kind.reason)) << plugins.output;
  // Listed in the log too, at warning level.
  EXPECT_TRUE(contains(plugins.output, "[warning] plugin " + folder.library() + " skipped: " + kind.reason))
      << plugins.output;

  // The next command finds the verdict in the registry cache: no second probe, no second wait.
  const auto start = std::chrono::steady_clock::now();
  ProcessResult run = folder.ephost({"run", folder.model(), "--providers", "cpu"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "outputs:")) << run.output;
  EXPECT_TRUE(contains(run.output, kind.reason)) << run.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));

  ProcessResult json = folder.ephost({"plugins", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto report = nlohmann::json::parse(json.output.substr(json.output.find("[\n")));
  bool found = false;
  for (const auto& r : report) {
    if (r["path"] != folder.library()) continue;
    found = true;
    EXPECT_EQ(r["loaded"], false);
    EXPECT_EQ(r["probed_by"], "registry");
    EXPECT_NE(r["probe_outcome"], "usable");
  }
  EXPECT_TRUE(found) << json.output;
}

INSTANTIATE_TEST_SUITE_P(Kinds, BrokenWhileProbed, ::testing::ValuesIn(kProbeKinds),
                         [](const ::testing::TestParamInfo<ProbeKind>& info) { return std::string(info.param.variant); });

TEST(BrokenWhileProbed, InProcessProbingIsTheDocumentedUnsafeChoice) {
  // EPHOST_PLUGIN_SCAN=inprocess: the same library now takes the command with it, but the report
  // still names it.
  BrokenPluginFolder folder("negotiate_segfault");
  ProcessResult r = folder.ephost({"plugins"}, {"EPHOST_PLUGIN_SCAN=inprocess"});
  EXPECT_EQ(r.signal, SIGSEGV) << r.output;
  EXPECT_TRUE(contains(r.output, "fatal signal SIGSEGV (segmentation fault) inside plugin "
                                 "'libephost_broken_negotiate_segfault.so' (" + folder.library() +
                                     ") during discovery"))
      << r.output;
}

// ---- broken in a session, and survived: refused and reported -----------------------------------------------

Ephost::Env env_for(const BrokenPluginFolder& folder) {
  return Ephost::Env(EPHOST_LOG_FATAL, std::vector<std::string>{folder.dir()});
}

nlohmann::json refused_claims(const Ephost::Session& s) {
  return nlohmann::json::parse(s.partition_report_json())["graphs"][0]["refused_claims"];
}

std::vector<float> run_relu(const Ephost::Session& s) {
  std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  return s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), 6)}, {"y"})[0].to_vector<float>();
}

Ephost::SessionOptions broken_first() {
  Ephost::SessionOptions o;
  o.append_provider("broken", {});
  return o;
}

TEST(BrokenInSession, ClaimOfAWildPointerIsRefusedAndReported) {
  BrokenPluginFolder folder("wild_claim");
  Ephost::Env env = env_for(folder);
  Ephost::Session s(env, folder.model(), broken_first());
  EXPECT_TRUE(contains(refused_claims(s).dump(), "claimed pointer 0xdeadbeef0, which is not a node of graph"))
      << refused_claims(s).dump(2);
  EXPECT_EQ(run_relu(s), (std::vector<float>{0, 2, 0, 4, 0, 6})) << "the CPU plugin took the node";
}

TEST(BrokenInSession, FusedGroupOfNullIsRefusedAndReported) {
  BrokenPluginFolder folder("fused_null");
  Ephost::Env env = env_for(folder);
  Ephost::Session s(env, folder.model(), broken_first());
  EXPECT_TRUE(contains(refused_claims(s).dump(), "claimed a fused group of 3 nodes given as NULL"))
      << refused_claims(s).dump(2);
  EXPECT_EQ(run_relu(s), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(BrokenInSession, ReturnedPointerThatIsNoStatusIsReported) {
  BrokenPluginFolder folder("bad_status");
  Ephost::Env env = env_for(folder);
  Ephost::Session s(env, folder.model(), broken_first());
  EXPECT_TRUE(contains(refused_claims(s).dump(), "which is not a status created by status_create"))
      << refused_claims(s).dump(2);
  EXPECT_EQ(run_relu(s), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(BrokenInSession, NullAndForeignHandlesAreAnsweredSafelyAndLogged) {
  BrokenPluginFolder folder("null_args");
  // Through the CLI, to see the log: each misuse is named, and the plugin counted every answer safe.
  ProcessResult r = folder.ephost({"run", folder.model(), "--providers", "broken,cpu"});
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "broken plugin: 22 of 22 misuses answered safely")) << r.output;
  for (const char* misuse :
       {"plugin 'broken' misused graph_name: given NULL where a graph belongs",
        "plugin 'broken' misused graph_name: given a handle of another kind where a graph belongs",
        "plugin 'broken' misused node_op_type: given a handle of another kind where a node belongs",
        "plugin 'broken' misused attribute_int: given NULL where an attribute belongs",
        "plugin 'broken' misused capability_add_node: given a handle of another kind where a capability sink belongs",
        "plugin 'broken' misused status_release: given a pointer that is not a live status"})
    EXPECT_TRUE(contains(r.output, misuse)) << misuse << "\n" << r.output;
  // Its own kernel then fails cleanly (it computes nothing), naming it.
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "EP_FAIL: provider 'broken' kernel for node 'relu' (Relu)")) << r.output;
}

// ---- a plugin that cannot create a provider, beside good ones (issue 26, "Discovery fix") --------------------
// Chosen by policy (the user listed no providers), it is skipped with a warning and the report's reason, and
// the session runs on the others; listed by name, it fails the session with its own error.

class CreateFailsBesideAlpha : public ::testing::Test {
 protected:
  CreateFailsBesideAlpha() {
    ephost_test::install_plugins(dir_, {"ephost_broken_create_fails", "ephost_test_alpha"});
    // x -> Add (alpha claims it) -> Relu (the CPU plugin) -> y
    ephost_test::ModelBuilder m;
    m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
    m.node("Add", {"x", "x"}, {"doubled"}, "add");
    m.node("Relu", {"doubled"}, {"y"}, "relu");
    model_ = m.save(models_);
  }
  Ephost::Env env() const { return Ephost::Env(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()}); }
  static std::vector<float> run(const Ephost::Session& s) {
    std::vector<float> x = {-1, 2, -3, 4, -5, 6};
    return s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), 6)}, {"y"})[0]
        .to_vector<float>();
  }
  // The partition report's providers, and its selection entry for `provider`.
  static std::vector<std::string> providers(const nlohmann::json& report) {
    std::vector<std::string> names;
    for (const auto& p : report["providers"]) names.push_back(p["name"]);
    return names;
  }
  static nlohmann::json candidate(const nlohmann::json& report, const std::string& provider) {
    for (const auto& c : report["selection"]["candidates"])
      if (c["provider"] == provider) return c;
    return nullptr;
  }
  std::map<std::string, std::string> node_providers(const nlohmann::json& report) const {
    std::map<std::string, std::string> out;
    for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
    return out;
  }

  ephost_test::TempDir dir_, models_;
  std::string model_;
};

TEST_F(CreateFailsBesideAlpha, ChosenByDefaultPriorityItIsSkippedAndTheSessionRunsOnTheOthers) {
  Ephost::Env e = env();
  Ephost::Session s(e, model_, Ephost::SessionOptions());
  EXPECT_EQ(run(s), (std::vector<float>{0, 4, 0, 8, 0, 12}));
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  EXPECT_EQ(providers(report), (std::vector<std::string>{"alpha", "cpu"})) << report["providers"].dump(2);
  EXPECT_EQ(node_providers(report), (std::map<std::string, std::string>{{"add", "alpha"}, {"relu", "cpu"}}));
  const nlohmann::json broken = candidate(report, "broken");
  ASSERT_TRUE(broken.is_object()) << report["selection"].dump(2);
  EXPECT_EQ(broken["skipped"], true) << broken.dump(2);
  EXPECT_EQ(broken["reason"],
            "skipped: its provider could not be created (provider 'broken' provider_create: broken test plugin: its "
            "backend is not ready)");
  EXPECT_FALSE(candidate(report, "alpha").contains("skipped"));
}

TEST_F(CreateFailsBesideAlpha, ChosenByMaxCoverageItIsSkippedAndRankedLast) {
  Ephost::Env e = env();
  Ephost::SessionOptions o;
  o.add_config("session.ep_selection_policy", "max_coverage");
  Ephost::Session s(e, model_, o);
  EXPECT_EQ(run(s), (std::vector<float>{0, 4, 0, 8, 0, 12}));
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  EXPECT_EQ(providers(report), (std::vector<std::string>{"alpha", "cpu"}));
  const auto& candidates = report["selection"]["candidates"];
  ASSERT_EQ(candidates.size(), 2u) << candidates.dump(2);
  EXPECT_EQ(candidates[0]["provider"], "alpha");
  EXPECT_EQ(candidates[0]["claimed_nodes"], 1);
  EXPECT_EQ(candidates[1]["provider"], "broken");
  EXPECT_EQ(candidates[1]["skipped"], true);
  EXPECT_TRUE(contains(candidates[1]["reason"].get<std::string>(), "broken test plugin: its backend is not ready")) << candidates.dump(2);
}

TEST_F(CreateFailsBesideAlpha, ListedByNameItFailsTheSessionWithItsError) {
  Ephost::Env e = env();
  Ephost::SessionOptions o;
  o.append_provider("broken", {});
  try {
    Ephost::Session s(e, model_, o);
    FAIL() << "a session listing a provider that cannot be created must fail";
  } catch (const Ephost::Exception& ex) {
    EXPECT_EQ(ex.code(), EPHOST_EP_FAIL);
    EXPECT_TRUE(contains(ex.what(), "provider 'broken' provider_create: broken test plugin: its backend is not ready"))
        << ex.what();
  }
}

TEST_F(CreateFailsBesideAlpha, TheSkipIsAWarningInTheLog) {
  // Through the CLI, to see the log: the default session warns, names the plugin and its library, and runs.
  const std::string library = dir_.file("libephost_broken_create_fails.so");
  const std::vector<std::string> argv = {EPHOST_CLI_PATH, "run", model_};
  ProcessResult r = run_process(argv, {"EPHOST_PLUGIN_PATH=" + dir_.path(),
                                       "EPHOST_PLUGIN_REGISTRY=" + models_.file("registry.json")},
                                milliseconds(60000));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "provider 'broken' (" + library + ") was chosen by default priority but could not be "
                                 "created, so the session goes on without it: provider 'broken' provider_create: "
                                 "broken test plugin: its backend is not ready"))
      << r.output;
}

// ---- broken in a session, not survivable in process: the report names the plugin ---------------------------
// These wait for out-of-process providers (design.md, "Trust").

struct FatalInSession {
  const char* variant;
  const char* call;
};
const FatalInSession kFatalInSession[] = {
    {"create_segfault", "provider_create"},
    {"capability_segfault", "get_capability"},
    {"compute_segfault", "compute"},
};

void PrintTo(const FatalInSession& k, std::ostream* os) { *os << k.variant; }

class CrashInSession : public ::testing::TestWithParam<FatalInSession> {};

TEST_P(CrashInSession, ReportNamesThePluginItsLibraryAndTheCall) {
  BrokenPluginFolder folder(GetParam().variant);
  ProcessResult r = folder.ephost({"run", folder.model(), "--providers", "broken"});
  EXPECT_EQ(r.signal, SIGSEGV) << r.output;
  EXPECT_TRUE(contains(r.output, std::string("fatal signal SIGSEGV (segmentation fault) inside plugin 'broken' (") +
                                     folder.library() + ") during " + GetParam().call))
      << r.output;
}

INSTANTIATE_TEST_SUITE_P(Kinds, CrashInSession, ::testing::ValuesIn(kFatalInSession),
                         [](const ::testing::TestParamInfo<FatalInSession>& info) {
                           return std::string(info.param.variant);
                         });

struct HangInSession {
  const char* variant;
  const char* call;
};
const HangInSession kHangInSession[] = {
    {"capability_sleep", "get_capability"},
    {"compute_sleep", "compute"},
};

void PrintTo(const HangInSession& k, std::ostream* os) { *os << k.variant; }

class HangInSessionTest : public ::testing::TestWithParam<HangInSession> {};

TEST_P(HangInSessionTest, WarningNamesThePluginItsLibraryAndTheCall) {
  BrokenPluginFolder folder(GetParam().variant);
  const std::string warning = std::string("plugin 'broken' (") + folder.library() + ") has not returned from " +
                              GetParam().call + " for ";
  ProcessResult r = folder.ephost({"run", folder.model(), "--providers", "broken"},
                                  {"EPHOST_PLUGIN_CALL_WARNING_MS=200"}, warning, milliseconds(30000));
  EXPECT_TRUE(contains(r.output, warning)) << r.output;
  EXPECT_TRUE(r.stopped) << "it hangs until killed";
}

INSTANTIATE_TEST_SUITE_P(Kinds, HangInSessionTest, ::testing::ValuesIn(kHangInSession),
                         [](const ::testing::TestParamInfo<HangInSession>& info) {
                           return std::string(info.param.variant);
                         });

// ---- env options, and the env's lifetime ---------------------------------------------------------------------

TEST(EnvOptions, ScanModeTimeoutAndRegistry) {
  BrokenPluginFolder folder("negotiate_sleep");
  ephost_test::TempDir cache;
  const std::string registry = cache.file("registry.json");
  const std::vector<std::string> dirs = {folder.dir()};
  {
    Ephost::Env env(EPHOST_LOG_FATAL, &dirs,
                    {{kEphostEnvOptionsPluginScanTimeoutMs, "300"}, {kEphostEnvOptionsPluginRegistry, registry}});
    const auto report = nlohmann::json::parse(env.plugin_report_json());
    EXPECT_TRUE(contains(report.dump(), "no answer within 300 ms")) << report.dump(2);
  }
  EXPECT_TRUE(boost::filesystem::exists(registry));

  ephost_test::TempDir good;
  ephost_test::install_plugins(good, {"ephost_test_alpha"});
  const std::vector<std::string> good_dirs = {good.path()};
  Ephost::Env in_process(EPHOST_LOG_FATAL, &good_dirs,
                         {{kEphostEnvOptionsPluginScan, "inprocess"}, {kEphostEnvOptionsPluginRegistry, ""}});
  const auto report = nlohmann::json::parse(in_process.plugin_report_json());
  bool alpha = false;
  for (const auto& r : report)
    if (r["name"] == "alpha") alpha = r["loaded"] == true && r["probed_by"] == "in process";
  EXPECT_TRUE(alpha) << report.dump(2);
}

TEST(EnvOptions, UnknownKeyOrBadValueIsInvalidArgument) {
  const std::vector<std::string> none;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"env.plugin_scna", "child"}, {kEphostEnvOptionsPluginScan, "fork"},
           {kEphostEnvOptionsPluginScanTimeoutMs, "0"}, {kEphostEnvOptionsPluginCallWarningMs, "soon"}}) {
    try {
      Ephost::Env env(EPHOST_LOG_FATAL, &none, {{key, value}});
      ADD_FAILURE() << key << "=" << value << " accepted";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << e.what();
      EXPECT_TRUE(contains(e.message(), key)) << e.what();
    }
  }
}

TEST(EnvLifetime, ReleaseEnvBeforeItsSessionsIsSafe) {
  ephost_test::TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_alpha"});
  const std::string model = ephost_test::chain_model(2, 3).save(dir);
  const EphostApi& api = *EphostGetApi(EPHOST_API_VERSION);
  const std::string plugin_dir = dir.path();
  const char* dirs[] = {plugin_dir.c_str(), nullptr};
  EphostEnv* env = nullptr;
  ASSERT_EQ(api.CreateEnvWithPluginDirs(EPHOST_LOG_FATAL, dirs, &env), nullptr);
  EphostSessionOptions* options = nullptr;
  ASSERT_EQ(api.CreateSessionOptions(&options), nullptr);
  ASSERT_EQ(api.AppendProvider(options, "alpha", nullptr, nullptr, 0), nullptr);
  EphostSession* sessions[2] = {nullptr, nullptr};
  for (auto*& s : sessions) {
    EphostStatus* status = api.CreateSession(env, model.c_str(), options, &s);
    ASSERT_EQ(status, nullptr) << api.GetErrorMessage(status);
  }
  api.ReleaseSessionOptions(options);
  api.ReleaseEnv(env);  // the sessions keep what they need

  std::vector<float> x(6, 0.5f);
  const int64_t shape[] = {2, 3};
  EphostTensor* input = nullptr;
  ASSERT_EQ(api.CreateTensorWithData(EPHOST_ELEMENT_FLOAT, shape, 2, x.data(), x.size() * 4, &input), nullptr);
  const char* in_names[] = {"x"};
  const char* out_names[] = {"y"};
  for (EphostSession* s : sessions) {
    EphostTensor* output = nullptr;
    EphostStatus* status = api.Run(s, in_names, &input, 1, out_names, 1, &output);
    ASSERT_EQ(status, nullptr) << api.GetErrorMessage(status);
    const float* y = static_cast<const float*>(api.TensorGetData(output));
    const std::vector<float> expected = ephost_test::chain_expected(x, 3);
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-5f);
    api.ReleaseTensor(output);
    api.ReleaseSession(s);  // the last one unloads the plugins
  }
  api.ReleaseTensor(input);
}

// A device tensor's memory is freed by its plugin: the tensor keeps the env's plugins loaded, so
// ReleaseEnv first does not leave ReleaseTensor calling into an unloaded library.
TEST(EnvLifetime, ReleaseEnvBeforeItsDeviceTensorsIsSafe) {
  ephost_test::TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_fakedev"});
  const EphostApi& api = *EphostGetApi(EPHOST_API_VERSION);
  const std::string plugin_dir = dir.path();
  const char* dirs[] = {plugin_dir.c_str(), nullptr};
  EphostEnv* env = nullptr;
  ASSERT_EQ(api.CreateEnvWithPluginDirs(EPHOST_LOG_FATAL, dirs, &env), nullptr);
  const int64_t shape[] = {2, 3};
  EphostTensor* on_device = nullptr;
  EphostStatus* status = api.CreateDeviceTensor(env, "fakedev", 1, EPHOST_ELEMENT_FLOAT, shape, 2, &on_device);
  ASSERT_EQ(status, nullptr) << api.GetErrorMessage(status);
  api.ReleaseEnv(env);

  EphostMemoryLocation location = EPHOST_LOCATION_HOST;
  const char* provider = nullptr;
  uint32_t device = 0;
  ASSERT_EQ(api.TensorGetLocation(on_device, &location, &provider, &device), nullptr);
  EXPECT_EQ(location, EPHOST_LOCATION_DEVICE);
  EXPECT_STREQ(provider, "fakedev");
  EXPECT_EQ(device, 1u);
  std::vector<float> host(6, 1.5f);
  EphostTensor* back = nullptr;
  ASSERT_EQ(api.CreateTensorWithData(EPHOST_ELEMENT_FLOAT, shape, 2, host.data(), host.size() * 4, &back), nullptr);
  status = api.CopyTensor(back, on_device);  // the plugin still copies
  EXPECT_EQ(status, nullptr) << api.GetErrorMessage(status);
  api.ReleaseTensor(on_device);  // frees through the plugin, then unloads it
  api.ReleaseTensor(back);
}

TEST(StatusMisuse, PointersThatAreNoStatusAreNeverRead) {
  const EphostApi& api = *EphostGetApi(EPHOST_API_VERSION);
  static char not_a_status[64] = "not a status";
  auto* fake = reinterpret_cast<EphostStatus*>(not_a_status);
  EXPECT_EQ(api.GetErrorCode(fake), EPHOST_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(api.GetErrorMessage(fake), "not a status"));
  api.ReleaseStatus(fake);  // ignored
  EphostStatus* real = api.CreateSession(nullptr, "x.onnx", nullptr, nullptr);
  ASSERT_NE(real, nullptr);
  api.ReleaseStatus(real);
  EXPECT_EQ(api.GetErrorCode(real), EPHOST_INVALID_ARGUMENT) << "a released status is no status";
  api.ReleaseStatus(real);  // a double release is ignored too
}

}  // namespace
