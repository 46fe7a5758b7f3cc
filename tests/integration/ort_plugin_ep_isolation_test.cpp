// ONNX Runtime plugin EPs out of process (issues 25 and 26): the ORT-ABI test plugins (tests/plugins/ort_ep:
// the compiling EP "ortadd", the kernel-registry EP "ortkern", the two-factory library) run in a provider host
// process through the adapter there, exactly as native plugins do: the same library in process and isolated
// gives the same outputs; a segfault, abort or hang injected into CreateEp, GetCapability, Compile or Compute
// (options fault / fault_while, ort_injected_fault.h) costs one run or the provider, never this process; the
// error names the provider, the call and the signal or deadline; the next runs are correct through the
// restarted provider or, after three failures, the CPU plugin; eight threads on one session survive kills of
// its provider host. EPContext generation, judging and loading work
// isolated, and a restart loads the context instead of compiling. Isolation mode auto isolates an ORT EP that
// crashed in process in an earlier process (the `ephost` tool), CreateEp included.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <thread>
#include <map>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "ort_test_plugins.h"
#include "provider_host_kill.h"
#include "test_support.h"
#include "test_paths.h"

using json = nlohmann::json;
using ephost_test::TempDir;

namespace {

namespace fs = boost::filesystem;
using Options = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kRows = 4, kCols = 6;

using ephost_test::assignment;
using ephost_test::install_ort_plugin;
using ephost_test::read_text;

// The isolation entry of provider `name` in the session's report (null when it has none).
json isolation_of(const Ephost::Session& s, const std::string& name) {
  const json report = json::parse(s.partition_report_json());
  for (const auto& p : report["providers"])
    if (p.value("name", "") == name || p.value("provider", "") == name) return p.value("isolation", json());
  return json();
}

struct Fault {
  const char* kind;
  const char* says;  // what the error says happened
};
const Fault kFaults[] = {{"segfault", "SIGSEGV"}, {"abort", "SIGABRT"}, {"hang", "deadline of 400 ms"}};

// Sessions of one ORT EP library's provider `provider_` over the chain model, isolated with short deadlines.
class OrtEpIsolation : public ::testing::Test {
 protected:
  void start(const std::string& variant, const std::string& provider) {
    install_ort_plugin(plugins_, variant);
    provider_ = provider;
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(kRows, kCols).save(models_);
  }

  // A session naming provider_ with `options`, in isolation `mode` ("": mode_), over `model` ("": the chain).
  std::unique_ptr<Ephost::Session> session(Options options, const std::string& mode = "",
                                           const std::string& model = "") {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", mode.empty() ? mode_ : mode);
    options.emplace_back("isolation_timeout_ms", "400");
    options.emplace_back("isolation_compile_timeout_ms", "1500");
    o.append_provider(provider_, options);
    return std::make_unique<Ephost::Session>(*env_, model.empty() ? model_path_ : model, o);
  }

  Ephost::Exception run_error(const Ephost::Session& s) {
    try {
      ephost_test::expect_chain_output(s, kRows, kCols);
    } catch (const Ephost::Exception& e) {
      return e;
    }
    ADD_FAILURE() << "run succeeded";
    return Ephost::Exception(EPHOST_OK, "");
  }

  void expect_runs_correct(const Ephost::Session& s, int times) {
    for (int i = 0; i < times; ++i) ASSERT_NO_FATAL_FAILURE(ephost_test::expect_chain_output(s, kRows, kCols));
  }

  // A compute fault costs one run (EP_FAIL naming the provider, compute and `f.says`); the restarted
  // provider then runs on correctly.
  void expect_compute_fault_costs_one_run(const Fault& f, const std::string& library) {
    const std::string trigger = models_.file(std::string("fault-") + f.kind);
    auto s = session({{"fault", std::string(f.kind) + ":compute"}, {"fault_while", trigger}});
    EXPECT_EQ(assignment(*s)["add"], provider_) << s->partition_report_json();
    expect_runs_correct(*s, 1);
    std::ofstream(trigger).put('1');
    const Ephost::Exception e = run_error(*s);
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("provider '" + provider_ + "' compute"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(f.says), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(library), std::string::npos) << e.message();
    std::remove(trigger.c_str());
    expect_runs_correct(*s, 3);
    EXPECT_EQ(isolation_of(*s, provider_)["state"], "running") << s->partition_report_json();
  }

  TempDir plugins_, models_;
  std::string provider_, model_path_;
  std::string mode_ = "process";
  std::unique_ptr<Ephost::Env> env_;
};

TEST_F(OrtEpIsolation, CompilingEpRunsInProcessAndOutOfProcessAlike) {
  start("good", "ortadd");
  for (const char* mode : {"in_process", "process"}) {
    SCOPED_TRACE(mode);
    auto s = session({}, mode);
    const auto a = assignment(*s);
    EXPECT_EQ(a.at("add"), "ortadd");
    EXPECT_EQ(a.at("mul"), "ortadd");
    EXPECT_EQ(a.at("relu"), "ortadd");
    EXPECT_EQ(a.at("sub"), "cpu");
    const json isolation = isolation_of(*s, "ortadd");
    EXPECT_EQ(isolation["mode"], mode) << s->partition_report_json();
    if (std::string(mode) == "process") EXPECT_GT(isolation.value("process_id", -1L), 0) << isolation.dump();
    expect_runs_correct(*s, 3);
  }
  // Options still reach CreateEp in the provider host, as ONNX Runtime passes them.
  auto skipping = session({{"skip_op", "Mul"}});
  EXPECT_EQ(assignment(*skipping).at("mul"), "cpu");
  expect_runs_correct(*skipping, 1);
}

TEST_F(OrtEpIsolation, KernelRegistryEpRunsOutOfProcess) {
  start("kernels", "ortkern");
  auto s = session({});
  const json report = json::parse(s->partition_report_json());
  for (const auto& n : report["graphs"][0]["nodes"]) {
    const std::string node = n["node"];
    if (node == "add" || node == "mul" || node == "relu") {
      EXPECT_EQ(n["provider"], "ortkern") << n.dump(2);
      EXPECT_TRUE(n["fused_group"].is_null()) << "a kernel claim: " << n.dump(2);
    }
  }
  EXPECT_EQ(isolation_of(*s, "ortkern")["mode"], "process") << s->partition_report_json();
  expect_runs_correct(*s, 3);
}

// An EP with memory of its own (ortdev): its memory, data transfer and streams stay in the provider host
// (the host holds buffer ids); a crash in its Compute costs one run, and the new process gets the
// initializers again.
TEST_F(OrtEpIsolation, OwnMemoryEpRunsOutOfProcess) {
  start("own_device", "ortdev");
  auto s = session({});
  const json report = json::parse(s->partition_report_json());
  EXPECT_EQ(report["providers"][0]["device"]["memory"], "device") << report.dump(2);
  EXPECT_EQ(isolation_of(*s, "ortdev")["mode"], "process") << report.dump(2);
  expect_runs_correct(*s, 2);
  expect_compute_fault_costs_one_run(Fault{"segfault", "SIGSEGV"}, "libephost_test_ort_own_device.so");
}

TEST_F(OrtEpIsolation, ComputeFaultCostsOneRunAndTheRestartedProviderRunsOn) {
  start("good", "ortadd");
  for (const Fault& f : kFaults) {
    SCOPED_TRACE(f.kind);
    expect_compute_fault_costs_one_run(f, "libephost_test_ort_good.so");
  }
}

TEST_F(OrtEpIsolation, KernelComputeFaultCostsOneRunAndTheRestartedProviderRunsOn) {
  start("kernels", "ortkern");
  for (const Fault& f : kFaults) {
    SCOPED_TRACE(f.kind);
    expect_compute_fault_costs_one_run(f, "libephost_test_ort_kernels.so");
  }
}

TEST_F(OrtEpIsolation, CapabilityFaultLeavesTheGraphToTheCpuPlugin) {
  start("good", "ortadd");
  for (const Fault& f : kFaults) {
    SCOPED_TRACE(f.kind);
    auto s = session({{"fault", std::string(f.kind) + ":get_capability"}});
    const std::string report = s->partition_report_json();
    for (const auto& [node, provider] : assignment(*s)) EXPECT_EQ(provider, "cpu") << node << ": " << report;
    EXPECT_NE(report.find("get_capability"), std::string::npos) << report;
    EXPECT_NE(report.find(f.says), std::string::npos) << report;
    expect_runs_correct(*s, 2);
  }
}

TEST_F(OrtEpIsolation, CreateEpFaultFailsTheSessionThatNamedItAndNothingElse) {
  start("good", "ortadd");
  for (const Fault& f : kFaults) {
    SCOPED_TRACE(f.kind);
    try {
      session({{"fault", std::string(f.kind) + ":create_ep"}});
      ADD_FAILURE() << "session created";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
      EXPECT_NE(e.message().find("provider 'ortadd' provider_create"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(f.kind == std::string("hang") ? "deadline of 1500 ms" : f.says), std::string::npos)
          << e.message();
    }
  }
  // Chosen by policy (no providers listed), the same EP is skipped and the CPU plugin runs the model.
  Ephost::SessionOptions o;
  o.add_config("session.provider_isolation", "process");
  o.add_config("ep.ortadd.fault", "segfault:create_ep");
  Ephost::Session s(*env_, model_path_, o);
  for (const auto& [node, provider] : assignment(s)) EXPECT_EQ(provider, "cpu") << node;
  expect_runs_correct(s, 1);
}

TEST_F(OrtEpIsolation, CompileFaultIsRetriedThenFallsBack) {
  start("good", "ortadd");
  // Every try fails: after three failures the group goes to the CPU plugin, and the session runs.
  for (const Fault& f : kFaults) {
    SCOPED_TRACE(f.kind);
    auto s = session({{"fault", std::string(f.kind) + ":compile"}});
    expect_runs_correct(*s, 2);
    const json isolation = isolation_of(*s, "ortadd");
    EXPECT_EQ(isolation["state"], "fallen_back") << isolation.dump();
    EXPECT_NE(isolation.value("last_failure", "").find("compile of fused group"), std::string::npos)
        << isolation.dump();
  }
}

TEST_F(OrtEpIsolation, ProviderThatKeepsFailingFallsBackToTheCpuPlugin) {
  start("good", "ortadd");
  auto s = session({{"fault", "abort:compute"}});
  for (int i = 0; i < 3; ++i) {
    const Ephost::Exception e = run_error(*s);
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("SIGABRT"), std::string::npos) << e.message();
    if (i == 2) EXPECT_NE(e.message().find("its work goes to provider 'cpu'"), std::string::npos) << e.message();
  }
  expect_runs_correct(*s, 3);
  const json isolation = isolation_of(*s, "ortadd");
  EXPECT_EQ(isolation["state"], "fallen_back") << isolation.dump();
  EXPECT_EQ(isolation["failures"], 3) << isolation.dump();
}

// Each factory of a library is its own provider with its own provider host process: one factory's crash
// costs the other factory's session nothing.
TEST_F(OrtEpIsolation, EachFactoryRunsInAProcessOfItsOwn) {
  start("two_factories", "ortadd2");
  const std::string trigger = models_.file("fault-2");
  auto second = session({{"fault", "segfault:compute"}, {"fault_while", trigger}});
  provider_ = "ortadd";
  auto first = session({});
  EXPECT_EQ(assignment(*second).at("add"), "ortadd2");
  EXPECT_EQ(assignment(*first).at("add"), "ortadd");
  const long first_pid = ephost_test::provider_host_pid(*first), second_pid = ephost_test::provider_host_pid(*second);
  EXPECT_GT(first_pid, 0);
  EXPECT_GT(second_pid, 0);
  EXPECT_NE(first_pid, second_pid);
  std::ofstream(trigger).put('1');
  const Ephost::Exception e = run_error(*second);
  EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
  EXPECT_NE(e.message().find("provider 'ortadd2' compute"), std::string::npos) << e.message();
  std::remove(trigger.c_str());
  expect_runs_correct(*first, 1);
  EXPECT_EQ(ephost_test::provider_host_pid(*first), first_pid);
  EXPECT_EQ(isolation_of(*first, "ortadd")["failures"], 0);
  expect_runs_correct(*second, 2);
}

// Eight threads run one session of the kernel-registry EP (three kernel calls per run) while its provider
// host is killed twice: every run either gives the correct outputs or fails with EP_FAIL, none hangs, and the
// session runs on afterwards.
TEST_F(OrtEpIsolation, EightThreadsWhileTheProviderIsKilled) {
  start("kernels", "ortkern");
  auto s = session({});
  expect_runs_correct(*s, 1);
  std::vector<float> x = ephost_test::ramp(static_cast<size_t>(kRows * kCols));
  const std::vector<float> expected = ephost_test::chain_expected(x, kCols);
  std::atomic<bool> done{false};
  std::atomic<int> ok{0}, failed{0}, wrong{0}, kills{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        try {
          const Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x.data(), x.size());
          const std::vector<float> y = s->run({"x"}, {in}, {"y"})[0].to_vector<float>();
          bool same = y.size() == expected.size();
          for (size_t k = 0; same && k < y.size(); ++k) same = std::abs(y[k] - expected[k]) < 1e-5f;
          (same ? ok : wrong)++;
        } catch (const Ephost::Exception& e) {
          (e.code() == EPHOST_EP_FAIL ? failed : wrong)++;
        }
      }
    });
  std::thread killer([&] {
    // Two kills, apart: fewer than the three failures that would make the provider fall back.
    for (int k = 0; k < 2 && !done; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const long pid = ephost_test::provider_host_pid(*s);
      if (!done && pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) kills++;
    }
  });
  const auto start_time = std::chrono::steady_clock::now();
  for (auto& t : threads) t.join();
  done = true;
  killer.join();
  const std::string counts = "ok " + std::to_string(ok) + ", EP_FAIL " + std::to_string(failed) + ", wrong " +
                             std::to_string(wrong) + ", kills " + std::to_string(kills);
  EXPECT_LT(std::chrono::steady_clock::now() - start_time, std::chrono::seconds(60)) << counts;
  EXPECT_EQ(wrong, 0) << counts;
  EXPECT_EQ(ok + failed, 8 * 200) << counts;
  EXPECT_GT(ok, 0) << counts;
  EXPECT_GT(kills, 0) << counts;
  // A kill that raced the end of the runs costs at most the next run.
  try {
    ephost_test::expect_chain_output(*s, kRows, kCols);
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
  }
  expect_runs_correct(*s, 1);
}

// EPContext isolated: the ctx model the isolated EP generates records its own compatibility info and
// reloads (isolated) without compiling; after a crash the new provider host loads the context the session
// generated instead of compiling; a context judged UNSUPPORTED in the provider host falls back to the CPU
// plugin with INVALID_GRAPH.
TEST_F(OrtEpIsolation, ContextsAreGeneratedLoadedAndReloadedOnRestart) {
  start("good", "ortadd");
  const std::string log = models_.file("compiles.txt");
  const std::string trigger = models_.file("fault-ctx");
  {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", "process").add_config("ep.context_enable", "1");
    o.append_provider("ortadd", {{"compile_log", log}, {"fault", "segfault:compute"}, {"fault_while", trigger},
                                 {"isolation_timeout_ms", "2000"}});
    Ephost::Session s(*env_, model_path_, o);
    expect_runs_correct(s, 1);
    EXPECT_EQ(read_text(log), "graph\n");
    std::ofstream(trigger).put('1');
    EXPECT_EQ(run_error(s).code(), EPHOST_EP_FAIL);
    std::remove(trigger.c_str());
    expect_runs_correct(s, 2);
    EXPECT_EQ(read_text(log), "graph\ncontext\n") << "the restarted provider host loads the context it generated";
  }
  const std::string ctx = models_.file("model_ctx.onnx");
  ASSERT_TRUE(fs::exists(ctx));
  {
    onnx::ModelProto m;
    std::ifstream in(ctx, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
    std::string info = "(absent)";
    for (const auto& kv : m.metadata_props())
      if (kv.key() == "ep_compatibility_info.ortadd") info = kv.value();
    EXPECT_EQ(info, "ortadd;version=1.2.3;target=cpu");
  }
  auto loaded = session({{"compile_log", log}}, "process", ctx);
  EXPECT_EQ(read_text(log), "graph\ncontext\ncontext\n");
  const json report = json::parse(loaded->ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_EQ(report[0]["verdict"], "optimal") << report.dump(2);
  EXPECT_TRUE(report[0]["loaded"].get<bool>()) << report.dump(2);
  expect_runs_correct(*loaded, 2);
  // A kill between calls costs no run: the next run starts a new provider host, which loads the context.
  ASSERT_NO_FATAL_FAILURE(ephost_test::kill_provider_host(*loaded));
  expect_runs_correct(*loaded, 1);
  EXPECT_EQ(read_text(log), "graph\ncontext\ncontext\ncontext\n") << "loaded again after the kill";
}

TEST_F(OrtEpIsolation, UnsupportedContextIsInvalidGraphAndFallsBackToTheCpuPlugin) {
  start("good", "ortadd");
  {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", "process").add_config("ep.context_enable", "1");
    o.append_provider("ortadd", {{"target", "npu"}});
    Ephost::Session s(*env_, model_path_, o);
  }
  const std::string ctx = models_.file("model_ctx.onnx");
  const std::string log = models_.file("compiles.txt");
  auto loaded = session({{"compile_log", log}}, "process", ctx);
  const json report = json::parse(loaded->ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_FALSE(report[0]["loaded"].get<bool>()) << report.dump(2);
  EXPECT_EQ(report[0]["status"], "INVALID_GRAPH") << report.dump(2);
  EXPECT_NE(report[0]["reason"].get<std::string>().find("EP_UNSUPPORTED"), std::string::npos) << report.dump(2);
  EXPECT_TRUE(report[0]["fell_back"].get<bool>()) << report.dump(2);
  EXPECT_EQ(assignment(*loaded).at("add"), "cpu");
  EXPECT_EQ(read_text(log), "");
  expect_runs_correct(*loaded, 1);
}

// Isolation mode auto: an ORT EP that crashed in process (in `ephost run`, which dies of it) runs isolated in
// the next process. A crash in CreateEp (no error status) takes the first process down too; the next one
// isolates the EP, where the same crash fails that provider's creation only: the session that named it fails
// naming it, a session that did not name it runs on the CPU plugin.
class OrtEpIsolationAuto : public OrtEpIsolation {
 protected:
  std::string registry() const { return models_.file("registry.json"); }

  ephost_test::CommandResult run_cli_in_process(const std::string& fault,
                                                const std::string& provider = "ortadd") const {
    return ephost_test::run_command("EPHOST_PLUGIN_PATH='" + plugins_.path() + "' EPHOST_PLUGIN_REGISTRY='" +
                                    registry() + "' '" + EPHOST_CLI_PATH + "' run '" + model_path_ +
                                    "' --providers " + provider + " --option ep." + provider + ".fault=" + fault +
                                    " 2>&1");
  }

  void start_env() {
    const std::vector<std::string> dirs{plugins_.path()};
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, &dirs, Options{{kEphostEnvOptionsPluginRegistry, registry()}});
  }
};

TEST_F(OrtEpIsolationAuto, ComputeCrashInProcessIsolatesTheEpInTheNextProcess) {
  start("good", "ortadd");
  const ephost_test::CommandResult first = run_cli_in_process("segfault:compute");
  ASSERT_NE(first.exit_code, 0) << "the in-process fault did not end `ephost run`: " << first.output;
  EXPECT_NE(first.output.find("ortadd"), std::string::npos) << first.output;
  start_env();
  mode_ = "auto";
  expect_compute_fault_costs_one_run(Fault{"segfault", "SIGSEGV"}, "libephost_test_ort_good.so");
  auto s = session({});
  const json isolation = isolation_of(*s, "ortadd");
  EXPECT_EQ(isolation["mode"], "process") << isolation.dump();
  EXPECT_NE(isolation.value("reason", "").find("isolated: crashed in process at "), std::string::npos)
      << isolation.dump();
  EXPECT_NE(isolation.value("reason", "").find("SIGSEGV"), std::string::npos) << isolation.dump();
}

TEST_F(OrtEpIsolationAuto, CreateEpCrashInProcessIsIsolatedNextTime) {
  start("good", "ortadd");
  start_env();
  EXPECT_EQ(isolation_of(*session({}, "auto"), "ortadd")["mode"], "in_process");
  const ephost_test::CommandResult first = run_cli_in_process("segfault:create_ep");
  ASSERT_NE(first.exit_code, 0) << "the crash in CreateEp did not end `ephost run`: " << first.output;
  start_env();
  try {
    session({{"fault", "segfault:create_ep"}}, "auto");
    ADD_FAILURE() << "session created";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("provider 'ortadd' provider_create"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("SIGSEGV"), std::string::npos) << e.message();
  }
  Ephost::SessionOptions o;
  o.add_config("session.provider_isolation", "auto").add_config("ep.ortadd.fault", "segfault:create_ep");
  Ephost::Session by_policy(*env_, model_path_, o);
  for (const auto& [node, provider] : assignment(by_policy)) EXPECT_EQ(provider, "cpu") << node;
  expect_runs_correct(by_policy, 1);
  // Without the fault, the remembered EP runs isolated, correctly.
  auto s = session({}, "auto");
  EXPECT_EQ(isolation_of(*s, "ortadd")["mode"], "process") << s->partition_report_json();
  EXPECT_NE(isolation_of(*s, "ortadd").value("reason", "").find("CreateEp"), std::string::npos)
      << s->partition_report_json();
  expect_runs_correct(*s, 2);
}

// Fault memory is per factory: a crash of one factory of a library isolates that factory next time, not
// its sibling from the same library.
TEST_F(OrtEpIsolationAuto, ACrashIsolatesItsFactoryAndNotItsSibling) {
  start("two_factories", "ortadd2");
  const ephost_test::CommandResult first = run_cli_in_process("segfault:compute", "ortadd2");
  ASSERT_NE(first.exit_code, 0) << "the in-process fault did not end `ephost run`: " << first.output;
  EXPECT_NE(first.output.find("ortadd2"), std::string::npos) << first.output;
  start_env();
  auto crashed = session({}, "auto");
  EXPECT_EQ(isolation_of(*crashed, "ortadd2")["mode"], "process") << crashed->partition_report_json();
  EXPECT_NE(isolation_of(*crashed, "ortadd2").value("reason", "").find("SIGSEGV"), std::string::npos)
      << crashed->partition_report_json();
  expect_runs_correct(*crashed, 1);
  provider_ = "ortadd";
  auto sibling = session({}, "auto");
  EXPECT_EQ(isolation_of(*sibling, "ortadd")["mode"], "in_process") << sibling->partition_report_json();
  expect_runs_correct(*sibling, 1);
}

}  // namespace
