// Device memory across the provider-process boundary: the fakedev test plugin (plugin ABI 3, two fake
// devices whose memory the host must never touch, asynchronous streams) runs isolated. Its buffers live
// in the provider host process; the host holds ids. The runs give the in-process outputs, with the same
// copies in the report; the provider host's own calls are counted through fakedev's journal
// (FAKEDEV_JOURNAL: one line per call, with the process id). A provider host killed between runs or
// crashing in compute costs one run at most: the next process gets the session's initializers again
// and the runs after it are correct.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "device_support.h"
#include "provider_host_kill.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

std::multiset<std::string> copies_of(const json& report) {
  std::multiset<std::string> out;
  for (const auto& c : report["graphs"][0]["copies"]) {
    std::string s = c["value"].get<std::string>() + " " + c["from"].get<std::string>() + "->" +
                    c["to"].get<std::string>() + " " + c["when"].get<std::string>() + " [";
    for (const auto& n : c["consumers"]) s += n.get<std::string>() + ";";
    out.insert(s + "]");
  }
  return out;
}

class ProviderIsolationDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    unsetenv("FAKEDEV_UNPROTECTED");
    install_plugins(dir_, {"ephost_test_fakedev"});
    journal_ = dir_.file("journal.txt");
    crash_file_ = dir_.file("crash-now");
    ::setenv("FAKEDEV_JOURNAL", journal_.c_str(), 1);
    ::setenv("FAKEDEV_CRASH_FILE", crash_file_.c_str(), 1);
    // The scanner probes fakedev, so an isolated session never loads it here.
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    model_ = device_chain_model().bytes();
  }
  void TearDown() override {
    env_.reset();
    ::unsetenv("FAKEDEV_JOURNAL");
    ::unsetenv("FAKEDEV_CRASH_FILE");
  }

  Ephost::SessionOptions options(const std::string& isolation) const {
    return options_with({"fakedev"}, {{"ep.fakedev.mode", GetParam()},
                                      {"session.provider_isolation", isolation},
                                      {"session.disable_cpu_ep_fallback", "1"}});
  }

  // The journal's calls, per process: pid -> call -> count.
  std::map<long, std::map<std::string, int>> journal() const {
    std::map<long, std::map<std::string, int>> out;
    std::ifstream in(journal_);
    std::string plugin, call;
    long pid = 0;
    while (in >> plugin >> call >> pid) ++out[pid][call];
    return out;
  }
  int calls(const std::string& call) const {
    int n = 0;
    for (const auto& [pid, counts] : journal()) n += counts.count(call) ? counts.at(call) : 0;
    return n;
  }

  static long process_of(const Ephost::Session& s) { return ephost_test::provider_host_pid(s); }
  static void kill_provider_host(const Ephost::Session& s) { ephost_test::kill_provider_host(s); }

  std::vector<std::vector<float>> run(const Ephost::Session& s, int seed) {
    std::vector<float> x = input_values(seed), z = input_values(seed + 7);
    std::vector<std::vector<float>> out;
    for (const auto& t : s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"}))
      out.push_back(t.to_vector<float>());
    return out;
  }

  void expect_run_matches(const Ephost::Session& isolated, const Ephost::Session& in_process, int seed) {
    const auto want = run(in_process, seed);
    const auto got = run(isolated, seed);
    ASSERT_EQ(got.size(), 2u);
    expect_same_floats(got[0], want[0], "y1, seed " + std::to_string(seed));
    expect_same_floats(got[1], want[1], "y2, seed " + std::to_string(seed));
  }

  TempDir dir_;
  std::string journal_, crash_file_, model_;
  std::unique_ptr<Ephost::Env> env_;
};

INSTANTIATE_TEST_SUITE_P(Modes, ProviderIsolationDevice, ::testing::Values("kernels", "fused"));

TEST_P(ProviderIsolationDevice, RunsInTheProviderHostWithTheInProcessOutputsAndCopies) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  const int uploads_in_process = calls("copy_to_device");  // this process's, journaled too
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  const json report = json::parse(isolated.partition_report_json());
  const json reference = json::parse(in_process.partition_report_json());
  EXPECT_EQ(report["providers"][0]["isolation"]["mode"], "process") << report["providers"].dump(2);
  EXPECT_EQ(report["providers"][0]["device"]["label"], "fakedev:0");
  EXPECT_EQ(report["providers"][0]["device"]["memory"], "device");
  for (const auto& [node, device] : node_devices(report)) EXPECT_EQ(device, "fakedev:0") << node;
  EXPECT_EQ(copies_of(report), copies_of(reference)) << report["graphs"][0]["copies"].dump(2);
  EXPECT_EQ(report["copies_planned"], reference["copies_planned"]);
  EXPECT_EQ(report["graphs"][0]["outputs_copied_to_host"], reference["graphs"][0]["outputs_copied_to_host"]);

  const long pid = process_of(isolated);
  ASSERT_GT(pid, 0);
  ASSERT_NE(pid, static_cast<long>(::getpid()));
  EXPECT_EQ(journal()[pid]["copy_to_device"], 2) << "c1 and c2 go to the provider host's device once";
  EXPECT_EQ(uploads_in_process, 2);

  constexpr int kRuns = 3;
  for (int r = 0; r < kRuns; ++r) expect_run_matches(isolated, in_process, r);
  auto counts = journal()[pid];
  const int kernels_per_run = GetParam() == "fused" ? 1 : 5;
  EXPECT_EQ(counts["copy_to_device"], 2 + 2 * kRuns) << "one copy in per graph input per run; initializers once";
  EXPECT_EQ(counts["copy_to_host"], 2 * kRuns) << "one copy out per graph output per run";
  EXPECT_EQ(counts["compute"], kernels_per_run * kRuns);
  EXPECT_EQ(process_of(isolated), pid) << "the same provider host serves every run";
}

TEST_P(ProviderIsolationDevice, KilledProviderHostIsReplacedAndGetsTheInitializersAgain) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  expect_run_matches(isolated, in_process, 1);
  const long first = process_of(isolated);
  kill_provider_host(isolated);

  expect_run_matches(isolated, in_process, 2);
  const long second = process_of(isolated);
  ASSERT_GT(second, 0);
  EXPECT_NE(second, first);
  // The new process got c1 and c2 again (from the host's kept copies), then this run's x and z.
  EXPECT_EQ(journal()[second]["copy_to_device"], 2 + 2);
  expect_run_matches(isolated, in_process, 3);
  EXPECT_EQ(journal()[second]["copy_to_device"], 2 + 2 + 2) << "the initializers stay uploaded";
  const json report = json::parse(isolated.partition_report_json());
  EXPECT_EQ(report["providers"][0]["isolation"]["failures"], 1) << report["providers"].dump(2);
}

TEST_P(ProviderIsolationDevice, CrashInComputeFailsOneRunNamingThePluginAndTheCall) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  expect_run_matches(isolated, in_process, 1);
  std::ofstream(crash_file_) << "crash";
  try {
    run(isolated, 2);
    FAIL() << "the run whose compute crashed succeeded";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("provider 'fakedev'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("compute"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("SIGABRT"), std::string::npos) << e.message();
  }
  for (int seed = 3; seed < 5; ++seed) expect_run_matches(isolated, in_process, seed);
  EXPECT_EQ(journal()[process_of(isolated)]["copy_to_device"], 2 + 2 * 2) << "initializers again, then two runs";
}

TEST_P(ProviderIsolationDevice, ConcurrentRunsOfOneSessionAreCorrect) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  constexpr int kThreads = 4, kRuns = 15;
  std::vector<std::vector<std::vector<float>>> want;
  for (int seed = 0; seed < kThreads; ++seed) want.push_back(run(in_process, seed));
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRuns; ++r)
          if (run(isolated, t) != want[static_cast<size_t>(t)]) problems[static_cast<size_t>(t)] = "wrong outputs";
      } catch (const std::exception& e) {
        problems[static_cast<size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(problems[static_cast<size_t>(t)], "") << "thread " << t;
}

}  // namespace
