// Isolation mode auto remembers: a plugin that crashed or hung in process in one application is run in a
// provider host process by the next one (isolation/fault_memory.h, core/plugin_fault.h's fault journal
// beside the plugin registry cache), and the partition report says why. The first application is the
// `ephost` command line tool, which dies of the plugin's fault; the second is this test process, which
// survives the same fault and runs on.
#include <csignal>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using Options = std::vector<std::pair<std::string, std::string>>;
using json = nlohmann::json;

class ProviderIsolationAuto : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(plugins_, {"ephost_test_faulty"});
    model_ = ephost_test::chain_model(2, 3).save(work_);
    bytes_ = ephost_test::chain_model(2, 3).bytes();
  }

  std::string registry() const { return work_.file("registry.json"); }

  // `ephost run` over the model with the faulty plugin in process (auto, nothing remembered yet) and
  // `fault`; `extra_env` adds variables. Returns the command's exit status as the shell saw it.
  ephost_test::CommandResult run_cli_in_process(const std::string& fault, const std::string& extra_env = "") const {
    const std::string command = "EPHOST_PLUGIN_PATH='" + plugins_.path() + "' EPHOST_PLUGIN_REGISTRY='" +
                                registry() + "' " + extra_env + " '" + EPHOST_CLI_PATH + "' run '" + model_ +
                                "' --providers faulty --option ep.faulty.fault=" + fault + " 2>&1";
    return ephost_test::run_command(command);
  }

  std::unique_ptr<Ephost::Env> env() const {
    const std::vector<std::string> dirs{plugins_.path()};
    return std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, &dirs,
                                         Options{{kEphostEnvOptionsPluginRegistry, registry()}});
  }

  // A session of the faulty plugin in mode auto, faulting in `fault` while `trigger` exists.
  std::unique_ptr<Ephost::Session> session(Ephost::Env& env, const std::string& fault, const std::string& trigger) {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", "auto");
    o.append_provider("faulty", {{"fault", fault}, {"fault_while", trigger}, {"isolation_timeout_ms", "400"}});
    return std::make_unique<Ephost::Session>(env, bytes_.data(), bytes_.size(), o);
  }

  std::vector<float> run(const Ephost::Session& s) {
    return s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6)}, {"y"})[0].to_vector<float>();
  }

  static json isolation_of(const Ephost::Session& s) {
    return json::parse(s.partition_report_json())["providers"][0]["isolation"];
  }

  // Runs the faulty session isolated: the fault ends one run with EP_FAIL, then the runs are correct.
  void expect_isolated_and_surviving(Ephost::Session& s, const std::string& trigger, const std::string& says) {
    try {
      run(s);
      ADD_FAILURE() << "the run with the fault succeeded";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
      EXPECT_NE(e.message().find("provider 'faulty' compute"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(says), std::string::npos) << e.message();
    }
    std::remove(trigger.c_str());
    const std::vector<float> expected = ephost_test::chain_expected(x_, 3);
    for (int i = 0; i < 2; ++i) {
      const std::vector<float> y = run(s);
      ASSERT_EQ(y.size(), expected.size());
      for (size_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y[k], expected[k], 1e-5f);
    }
  }

  ephost_test::TempDir plugins_, work_;
  std::string model_, bytes_;
  std::vector<float> x_ = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f};
};

TEST_F(ProviderIsolationAuto, NothingRememberedRunsInProcess) {
  auto e = env();
  auto s = session(*e, "segfault:compute", work_.file("never"));
  EXPECT_EQ(isolation_of(*s)["mode"], "in_process") << s->partition_report_json();
}

TEST_F(ProviderIsolationAuto, CrashInProcessIsolatesThePluginInTheNextProcess) {
  const ephost_test::CommandResult first = run_cli_in_process("segfault:compute");
  ASSERT_NE(first.exit_code, 0) << "the in-process fault did not end `ephost run`: " << first.output;
  EXPECT_NE(first.output.find("inside plugin 'faulty'"), std::string::npos) << first.output;

  const std::string trigger = work_.file("fault-on");
  std::ofstream(trigger).put('1');
  auto e = env();
  auto s = session(*e, "segfault:compute", trigger);
  const json isolation = isolation_of(*s);
  EXPECT_EQ(isolation["mode"], "process") << isolation.dump();
  const std::string reason = isolation.value("reason", "");
  EXPECT_NE(reason.find("isolated: crashed in process at "), std::string::npos) << isolation.dump();
  EXPECT_NE(reason.find("compute"), std::string::npos) << isolation.dump();
  EXPECT_NE(reason.find("SIGSEGV"), std::string::npos) << isolation.dump();
  expect_isolated_and_surviving(*s, trigger, "SIGSEGV");
}

TEST_F(ProviderIsolationAuto, HangInProcessIsolatesThePluginInTheNextProcess) {
  // The hang watchdog (100 ms here) remembers the call that does not return; the process is then killed.
  const ephost_test::CommandResult first =
      run_cli_in_process("hang:compute", "EPHOST_PLUGIN_CALL_WARNING_MS=100 timeout -s KILL 2");
  ASSERT_NE(first.exit_code, 0) << first.output;

  const std::string trigger = work_.file("hang-on");
  std::ofstream(trigger).put('1');
  auto e = env();
  auto s = session(*e, "hang:compute", trigger);
  const json isolation = isolation_of(*s);
  EXPECT_EQ(isolation["mode"], "process") << isolation.dump();
  EXPECT_NE(isolation.value("reason", "").find("isolated: hung in process at "), std::string::npos)
      << isolation.dump();
  expect_isolated_and_surviving(*s, trigger, "deadline of 400 ms");
}

TEST_F(ProviderIsolationAuto, InProcessSettingWinsOverTheMemory) {
  ASSERT_NE(run_cli_in_process("segfault:compute").exit_code, 0);
  auto e = env();
  Ephost::SessionOptions o;
  o.add_config("session.provider_isolation", "in_process");
  o.append_provider("faulty");
  Ephost::Session s(*e, bytes_.data(), bytes_.size(), o);
  EXPECT_EQ(isolation_of(s)["mode"], "in_process") << s.partition_report_json();
}

}  // namespace
