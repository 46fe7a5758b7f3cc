// Device memory across the provider-process boundary: the fakedev test plugin (plugin ABI 3, two fake
// devices whose memory the host must never touch, asynchronous streams) runs isolated. Its buffers live
// in the provider host process; the host holds ids. The runs give the in-process outputs, with the same
// copies in the report; the provider host's own calls are counted through fakedev's journal
// (FAKEDEV_JOURNAL: one line per call, with the process id). A provider host killed between runs or
// crashing in compute costs one run at most: the next process gets the session's initializers again
// and the runs after it are correct. Three crashes make the provider fall back: the session plans
// again without it (its nodes on the CPU plugin, its device buffers let go), also while 8 threads run,
// and also when the three crashes are its compiles during the session's creation.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
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
    ::unsetenv("FAKEDEV_CRASH_CALL");
  }

  Ephost::SessionOptions options(const std::string& isolation) const {
    return options_with({"fakedev"}, {{"ep.fakedev.mode", GetParam()},
                                      {"session.provider_isolation", isolation},
                                      {"session.disable_cpu_ep_fallback", "1"}});
  }
  // Isolated, with the CPU plugin last: where fakedev's nodes go once it fell back.
  Ephost::SessionOptions options_with_cpu() const {
    return options_with({"fakedev"}, {{"ep.fakedev.mode", GetParam()}, {"session.provider_isolation", "process"}});
  }
  // The calls journaled by provider host processes (this process's own, in process, left out).
  size_t provider_host_calls() const {
    size_t n = 0;
    for (const auto& [pid, counts] : journal())
      if (pid != static_cast<long>(::getpid()))
        for (const auto& [call, count] : counts) n += static_cast<size_t>(count);
    return n;
  }
  // Makes the provider host's next compute abort, and checks that the run doing it fails as it should.
  void crash_one_run(const Ephost::Session& s, int seed, bool last) {
    std::ofstream(crash_file_) << "crash";
    try {
      run(s, seed);
      ADD_FAILURE() << "the run whose compute crashed succeeded";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
      EXPECT_NE(e.message().find("SIGABRT"), std::string::npos) << e.message();
      if (last) {
        EXPECT_NE(e.message().find("goes to the providers after it, ending with provider 'cpu'"), std::string::npos)
            << e.message();
      }
    }
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

// Outputs the application did not bind, copied from the isolated device to host memory, are downloaded
// straight into shared memory the host allocated (a small pool, reused), not through the arena: the
// host copies only the inputs, and the outputs are ordinary tensors in shared memory with the in-process
// values. ep.fakedev.isolation_shared_outputs=0 copies them through the arena, as before.
TEST_P(ProviderIsolationDevice, UnboundOutputsComeFromTheDeviceIntoSharedMemory) {
  constexpr int64_t kTall = 256;  // 5 KiB per tensor: above the 4 KiB where shared outputs begin
  const std::string model = device_chain_model(kTall).bytes();
  const uint64_t bytes = kTall * kCols * sizeof(float);
  Ephost::Session in_process(*env_, model.data(), model.size(), options("in_process"));
  auto run_tall = [&](const Ephost::Session& s, int seed) {
    std::vector<float> x = input_values(seed, kTall), z = input_values(seed + 7, kTall);
    return s.run({"x", "z"}, {host_tensor(x, kTall), host_tensor(z, kTall)}, {"y1", "y2"});
  };
  for (const char* shared_outputs : {"1", "0"}) {
    SCOPED_TRACE(std::string("isolation_shared_outputs=") + shared_outputs);
    Ephost::Session isolated(*env_, model.data(), model.size(),
                             options_with({"fakedev"}, {{"ep.fakedev.mode", GetParam()},
                                                        {"session.provider_isolation", "process"},
                                                        {"session.disable_cpu_ep_fallback", "1"},
                                                        {"ep.fakedev.isolation_shared_outputs", shared_outputs}}));
    auto counter = [&](const char* name) {
      return json::parse(isolated.partition_report_json())["providers"][0]["isolation"].value(name, uint64_t{0});
    };
    const bool on = std::string(shared_outputs) == "1";
    for (int seed = 1; seed < 4; ++seed) {
      const uint64_t copied = counter("bytes_copied"), in_place = counter("bytes_in_place");
      const auto want = run_tall(in_process, seed);
      const auto got = run_tall(isolated, seed);
      for (size_t i = 0; i < 2; ++i) {
        expect_same_floats(got[i].to_vector<float>(), want[i].to_vector<float>(), "output " + std::to_string(i));
        EXPECT_EQ(got[i].is_shared(), on) << "output " << i << ", seed " << seed;
      }
      EXPECT_EQ(counter("bytes_copied") - copied, (on ? 2 : 4) * bytes) << "x and z in; y1 and y2 out unless shared";
      EXPECT_EQ(counter("bytes_in_place") - in_place, on ? 2 * bytes : 0) << "seed " << seed;
    }
  }
}

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
  // A copy in is only queued on the run's stream (its shared memory is kept until the stream is
  // finished), as in process; the provider host finishes the stream after each copy out, so the
  // synchronization that ends a run, after y1 and y2 came back, asks for nothing more (isolated_device.h).
  EXPECT_EQ(counts["stream_synchronize"], 2 * kRuns) << "one per copy out per run, none per copy in or at the end";
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

// Shared tensors (CreateSharedTensor) go to and come from the isolated device without the arena: the
// provider host uploads the inputs from them and downloads the bound outputs into them. The outputs are
// the copying path's bit for bit, with the same copies on the device, and the host copies no byte.
TEST_P(ProviderIsolationDevice, SharedTensorsCrossToTheDeviceInPlace) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  auto counter = [&](const char* name) {
    return json::parse(isolated.partition_report_json())["providers"][0]["isolation"].value(name, uint64_t{0});
  };
  const std::vector<float> x = input_values(4), z = input_values(4 + 7);
  const uint64_t bytes = x.size() * sizeof(float);
  auto shared_copy = [](const std::vector<float>& v) {
    Ephost::Tensor t = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
  };
  const auto want = run(in_process, 4);
  const uint64_t copied = counter("bytes_copied");
  EXPECT_EQ(run(isolated, 4), want);
  EXPECT_EQ(counter("bytes_copied") - copied, 4 * bytes) << "the copying path: x, z in, y1, y2 out";

  Ephost::Tensor xs = shared_copy(x), zs = shared_copy(z);
  Ephost::Tensor y1 = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  Ephost::Tensor y2 = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  Ephost::Session::IoBinding binding(isolated);
  binding.bind_input("x", xs).bind_input("z", zs).bind_output("y1", y1).bind_output("y2", y2);
  const long pid = process_of(isolated);
  const auto before = journal()[pid];
  constexpr int kRuns = 3;
  for (int r = 0; r < kRuns; ++r) {
    const uint64_t copied_before = counter("bytes_copied"), in_place_before = counter("bytes_in_place");
    binding.run();
    expect_same_floats(y1.to_vector<float>(), want[0], "y1, run " + std::to_string(r));
    expect_same_floats(y2.to_vector<float>(), want[1], "y2, run " + std::to_string(r));
    EXPECT_EQ(counter("bytes_copied") - copied_before, 0u) << "run " << r;
    EXPECT_EQ(counter("bytes_in_place") - in_place_before, 4 * bytes) << "run " << r;
  }
  auto counts = journal()[pid];
  EXPECT_EQ(counts["copy_to_device"] - before.at("copy_to_device"), 2 * kRuns) << "x and z, one copy each per run";
  EXPECT_EQ(counts["copy_to_host"] - before.at("copy_to_host"), 2 * kRuns) << "y1 and y2 likewise";

  // Killed between runs: the tensors stay valid, and the next process maps them again.
  kill_provider_host(isolated);
  try {
    binding.run();
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
  }
  binding.run();
  expect_same_floats(y1.to_vector<float>(), want[0], "y1 after a restart");
  expect_same_floats(y2.to_vector<float>(), want[1], "y2 after a restart");
  EXPECT_TRUE(xs.to_vector<float>() == x);
}

// Tensors larger than a chunk of the shared memory (1 MiB) cross in pieces, sent without waiting for each
// reply (each way), and their uploads are only queued on the run's stream: the outputs are the in-process ones bit
// for bit, also with a second session's runs (another stream) in the same provider host in between.
TEST_P(ProviderIsolationDevice, LargeTensorsCrossInChunksWithTheInProcessOutputs) {
  constexpr int64_t kBigRows = 131072;  // 2.5 MiB per input: three chunks each
  const std::string big = device_chain_model(kBigRows).bytes();
  Ephost::Session in_process(*env_, big.data(), big.size(), options("in_process"));
  // Outputs copied out through the arena (in chunks), not into shared memory: the chunked path is tested.
  Ephost::SessionOptions chunked = options("process");
  chunked.add_config("ep.fakedev.isolation_shared_outputs", "0");
  Ephost::Session isolated(*env_, big.data(), big.size(), chunked);
  Ephost::Session other(*env_, big.data(), big.size(), chunked);
  const long pid = process_of(isolated);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(process_of(other), pid) << "the sessions of one env share the provider host";
  auto run_big = [&](const Ephost::Session& s, int seed) {
    std::vector<float> x = input_values(seed, kBigRows), z = input_values(seed + 7, kBigRows);
    std::vector<std::vector<float>> out;
    for (const auto& t : s.run({"x", "z"}, {host_tensor(x, kBigRows), host_tensor(z, kBigRows)}, {"y1", "y2"}))
      out.push_back(t.to_vector<float>());
    return out;
  };
  // A first run each: the shared memory grows to its size then (the provider host finishes the queued
  // uploads before it maps the grown memory again, a synchronization counted once).
  run_big(isolated, 0);
  run_big(other, 0);
  const auto before = journal()[pid];
  constexpr int kRuns = 3;
  for (int r = 0; r < kRuns; ++r) {
    const auto want = run_big(in_process, r);
    const auto got = run_big(isolated, r);
    const auto got_other = run_big(other, r + 1);
    const auto want_other = run_big(in_process, r + 1);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got_other.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      EXPECT_TRUE(got[o] == want[o]) << "output " << o << ", run " << r;
      EXPECT_TRUE(got_other[o] == want_other[o]) << "output " << o << ", run " << r << " of the other session";
    }
  }
  auto counts = journal()[pid];
  auto since = [&](const char* call) { return counts[call] - (before.count(call) ? before.at(call) : 0); };
  EXPECT_EQ(since("copy_to_device"), 2 * kRuns * 2 * 3) << "x and z in three chunks each, per run of each session";
  EXPECT_EQ(since("copy_to_host"), 2 * kRuns * 2 * 3) << "y1 and y2 likewise";
  EXPECT_EQ(since("stream_synchronize"), 2 * kRuns * 2 * 3)
      << "one per chunk out (before its reply): the chunks in wait on the run's stream";
}

// A provider host that dies while a tensor crosses (in its copy_to_device, with more chunks on their
// way) costs that run, which fails with EP_FAIL naming the plugin, the call and the signal; the host
// writes nothing outside its shared memory, and the next runs are correct in a new process.
TEST_P(ProviderIsolationDevice, CrashWhileATensorCrossesFailsOneRunAndTheNextAreCorrect) {
  constexpr int64_t kBigRows = 131072;
  const std::string big = device_chain_model(kBigRows).bytes();
  ::setenv("FAKEDEV_CRASH_CALL", "copy_to_device", 1);
  Ephost::Session in_process(*env_, big.data(), big.size(), options("in_process"));
  Ephost::Session isolated(*env_, big.data(), big.size(), options("process"));
  auto run_big = [&](const Ephost::Session& s, int seed) {
    std::vector<float> x = input_values(seed, kBigRows), z = input_values(seed + 7, kBigRows);
    std::vector<std::vector<float>> out;
    for (const auto& t : s.run({"x", "z"}, {host_tensor(x, kBigRows), host_tensor(z, kBigRows)}, {"y1", "y2"}))
      out.push_back(t.to_vector<float>());
    return out;
  };
  EXPECT_TRUE(run_big(isolated, 1) == run_big(in_process, 1));
  const long first = process_of(isolated);
  std::ofstream(crash_file_) << "crash";
  try {
    run_big(isolated, 2);
    ADD_FAILURE() << "the run whose copy crashed succeeded";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("provider 'fakedev' copy_to_device"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("SIGABRT"), std::string::npos) << e.message();
  }
  ::unsetenv("FAKEDEV_CRASH_CALL");
  for (int seed = 3; seed < 5; ++seed) EXPECT_TRUE(run_big(isolated, seed) == run_big(in_process, seed)) << seed;
  EXPECT_NE(process_of(isolated), first);
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

// A device plugin registered by path is loaded in process, with no probe: isolated, it still gets its
// device (the devices it enumerated when loaded), so its values live in the provider host's device.
TEST_P(ProviderIsolationDevice, RegisteredByPathItRunsIsolatedOnItsDevice) {
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{});
  env.register_plugin(test_plugin("ephost_test_fakedev"));
  Ephost::Session in_process(env, model_.data(), model_.size(), options("in_process"));
  Ephost::Session isolated(env, model_.data(), model_.size(), options("process"));
  const json report = json::parse(isolated.partition_report_json());
  EXPECT_EQ(report["providers"][0]["isolation"]["mode"], "process") << report["providers"].dump(2);
  EXPECT_EQ(report["providers"][0]["device"]["label"], "fakedev:0") << report["providers"].dump(2);
  EXPECT_EQ(report["providers"][0]["device"]["memory"], "device");
  for (const auto& [node, device] : node_devices(report)) EXPECT_EQ(device, "fakedev:0") << node;
  const long pid = process_of(isolated);
  ASSERT_GT(pid, 0);
  for (int seed = 0; seed < 2; ++seed) expect_run_matches(isolated, in_process, seed);
  EXPECT_EQ(journal()[pid]["copy_to_device"], 2 + 2 * 2) << "initializers once, then x and z per run, there";
}

// What the state callback heard, and whether it heard the fallback yet.
struct StateChanges {
  std::mutex mutex;
  std::vector<std::pair<EphostProviderStateKind, int>> seen;  // state, failures
  std::atomic<bool> fallen_back{false};
  static void record(const EphostProviderState* state, void* user) {
    auto* self = static_cast<StateChanges*>(user);
    const auto kind = static_cast<EphostProviderStateKind>(state->state);
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      self->seen.emplace_back(kind, state->failures);
    }
    if (kind == EPHOST_PROVIDER_FALLEN_BACK) self->fallen_back = true;
  }
};

TEST_P(ProviderIsolationDevice, ThreeCrashesPlanTheSessionAgainOnTheCpuPlugin) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  StateChanges changes;
  Ephost::SessionOptions o = options_with_cpu();
  o.set_provider_state_callback(&StateChanges::record, &changes);
  Ephost::Session isolated(*env_, model_.data(), model_.size(), o);
  expect_run_matches(isolated, in_process, 1);
  json report = json::parse(isolated.partition_report_json());
  EXPECT_GE(report["providers"][0]["isolation"]["device_buffers"], 2) << "c1 and c2 at least";
  EXPECT_EQ(report["providers"][0]["isolation"]["left_out_of_plan"], false);

  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(crash_one_run(isolated, 10 + i, i == 2));
  const size_t journaled = provider_host_calls();
  for (int seed = 3; seed < 6; ++seed) expect_run_matches(isolated, in_process, seed);
  EXPECT_EQ(provider_host_calls(), journaled) << "a provider host ran fakedev again after it fell back";

  report = json::parse(isolated.partition_report_json());
  for (const auto& [node, provider] : node_providers(report)) EXPECT_EQ(provider, "cpu") << node;
  EXPECT_TRUE(report["graphs"][0]["copies"].empty()) << report["graphs"][0]["copies"].dump(2);
  const json& isolation = report["providers"][0]["isolation"];
  EXPECT_EQ(isolation["state"], "fallen_back") << isolation.dump(2);
  EXPECT_EQ(isolation["failures"], 3);
  EXPECT_EQ(isolation["process_id"], -1);
  EXPECT_EQ(isolation["left_out_of_plan"], true);
  EXPECT_EQ(isolation["device_buffers"], 0) << "the old plan's device buffers (initializers included) were let go";
  bool noted = false;
  for (const auto& note : report["graphs"][0]["refused_claims"])
    noted |= note["provider"] == "fakedev" && note["reason"].get<std::string>().find("fell back") != std::string::npos;
  EXPECT_TRUE(noted) << report["graphs"][0]["refused_claims"].dump(2);

  const auto states = isolated.provider_states();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].state, EPHOST_PROVIDER_FALLEN_BACK);
  EXPECT_EQ(states[0].failures, 3);
  EXPECT_NE(states[0].last_failure.find("ending with provider 'cpu'"), std::string::npos) << states[0].last_failure;
  std::lock_guard<std::mutex> lock(changes.mutex);
  ASSERT_FALSE(changes.seen.empty());
  EXPECT_EQ(changes.seen.back(), std::make_pair(EPHOST_PROVIDER_FALLEN_BACK, 3));
}

// Without the CPU plugin nothing can take fakedev's nodes: the runs after the fallback fail, saying so.
TEST_P(ProviderIsolationDevice, FallbackWithNoProviderLeftFailsTheRunsSayingWhy) {
  Ephost::Session isolated(*env_, model_.data(), model_.size(), options("process"));
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(crash_one_run(isolated, 10 + i, false));
  for (int i = 0; i < 2; ++i) {
    try {
      run(isolated, 20 + i);
      ADD_FAILURE() << "a run succeeded with no provider for its nodes";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
      EXPECT_NE(e.message().find("provider 'fakedev' fell back after 3 failures"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("planning the session again without it failed"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("session.disable_cpu_ep_fallback"), std::string::npos) << e.message();
      // fakedev was not asked again: the list says so, apart from the providers asked.
      EXPECT_NE(e.message().find("providers asked: none (left out: fakedev)"), std::string::npos) << e.message();
    }
  }
}

// A compile that crashes the provider host on every try, during the session's creation: after the third
// process lost, fakedev falls back there and then, and the session is created on the CPU plugin (the
// placement planned without it), as a run after three crashes would be. The report says so.
TEST_P(ProviderIsolationDevice, ThreeCompileCrashesAtCreationCreateTheSessionOnTheCpuPlugin) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  StateChanges changes;
  Ephost::SessionOptions o = options_with_cpu();
  o.add_config("ep.fakedev.fault", "abort:compile");
  o.set_provider_state_callback(&StateChanges::record, &changes);
  Ephost::Session isolated(*env_, model_.data(), model_.size(), o);
  const size_t journaled = provider_host_calls();
  for (int seed = 0; seed < 3; ++seed) expect_run_matches(isolated, in_process, seed);
  EXPECT_EQ(provider_host_calls(), journaled) << "a provider host ran fakedev after it fell back";
  for (auto& [pid, counts] : journal())
    if (pid != static_cast<long>(::getpid())) EXPECT_EQ(counts["compute"], 0) << "provider host " << pid << " computed";

  const json report = json::parse(isolated.partition_report_json());
  for (const auto& [node, provider] : node_providers(report)) EXPECT_EQ(provider, "cpu") << node;
  EXPECT_TRUE(report["graphs"][0]["copies"].empty()) << report["graphs"][0]["copies"].dump(2);
  const json& isolation = report["providers"][0]["isolation"];
  EXPECT_EQ(isolation["state"], "fallen_back") << isolation.dump(2);
  EXPECT_EQ(isolation["failures"], 3);
  EXPECT_EQ(isolation["left_out_of_plan"], true);
  EXPECT_EQ(isolation["device_buffers"], 0);
  bool noted = false;
  for (const auto& note : report["graphs"][0]["refused_claims"])
    noted |= note["provider"] == "fakedev" && note["reason"].get<std::string>().find("fell back") != std::string::npos;
  EXPECT_TRUE(noted) << report["graphs"][0]["refused_claims"].dump(2);
  const auto states = isolated.provider_states();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].state, EPHOST_PROVIDER_FALLEN_BACK);
  EXPECT_NE(states[0].last_failure.find("SIGABRT"), std::string::npos) << states[0].last_failure;
  const std::string call = GetParam() == "fused" ? "compile of fused group" : "kernel for node";
  EXPECT_NE(states[0].last_failure.find(call), std::string::npos) << states[0].last_failure;
  std::lock_guard<std::mutex> lock(changes.mutex);
  ASSERT_FALSE(changes.seen.empty());
  EXPECT_EQ(changes.seen.back(), std::make_pair(EPHOST_PROVIDER_FALLEN_BACK, 3));
}

// The same with the CPU plugin kept out (the user named fakedev alone): nothing can take its nodes, so
// the session fails, saying why.
TEST_P(ProviderIsolationDevice, ThreeCompileCrashesAtCreationWithNoProviderLeftFailTheSession) {
  Ephost::SessionOptions o = options("process");
  o.add_config("ep.fakedev.fault", "abort:compile");
  try {
    Ephost::Session isolated(*env_, model_.data(), model_.size(), o);
    FAIL() << "the session was created with no provider for its nodes";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
    EXPECT_NE(e.message().find("provider 'fakedev' fell back after 3 failures"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("planning the session without it failed"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("providers asked: none (left out: fakedev)"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("session.disable_cpu_ep_fallback"), std::string::npos) << e.message();
  }
}

// 8 threads run one session while its provider host crashes three times: every run gives the right
// outputs or fails with EP_FAIL; the runs that start after the fallback was announced all succeed.
TEST_P(ProviderIsolationDevice, EightThreadsRunWhileTheProviderFallsBack) {
  Ephost::Session in_process(*env_, model_.data(), model_.size(), options("in_process"));
  StateChanges changes;
  Ephost::SessionOptions o = options_with_cpu();
  o.set_provider_state_callback(&StateChanges::record, &changes);
  Ephost::Session isolated(*env_, model_.data(), model_.size(), o);
  constexpr int kThreads = 8, kRunsAfter = 3;
  std::vector<std::vector<std::vector<float>>> want;
  for (int seed = 0; seed < kThreads; ++seed) want.push_back(run(in_process, seed));

  std::atomic<bool> stop{false};
  std::vector<std::string> problems(kThreads);
  std::vector<int> failed(kThreads, 0), correct_after(kThreads, 0);
  std::atomic<int> threads_done_after{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const auto i = static_cast<size_t>(t);
      while (!stop) {
        const bool after = changes.fallen_back;
        try {
          if (run(isolated, t) != want[i]) {
            problems[i] = "wrong outputs";
          } else if (after && ++correct_after[i] == kRunsAfter) {
            ++threads_done_after;
          }
        } catch (const Ephost::Exception& e) {
          ++failed[i];
          if (e.code() != EPHOST_EP_FAIL) problems[i] = "not EP_FAIL: " + e.message();
          if (after) problems[i] = "a run that started after the fallback failed: " + e.message();
        } catch (const std::exception& e) {
          problems[i] = e.what();
        }
        if (!problems[i].empty()) return;
      }
    });
  auto wait_for = [](const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return done();
  };
  for (int crash = 1; crash <= 3; ++crash) {
    std::ofstream(crash_file_) << "crash";
    EXPECT_TRUE(wait_for([&] { return isolated.provider_states()[0].failures >= crash; })) << "crash " << crash;
  }
  EXPECT_TRUE(wait_for([&] { return threads_done_after == kThreads; })) << "not every thread ran after the fallback";
  stop = true;
  for (auto& th : threads) th.join();
  int failures = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(problems[static_cast<size_t>(t)], "") << "thread " << t;
    failures += failed[static_cast<size_t>(t)];
  }
  EXPECT_GE(failures, 3) << "the runs whose compute crashed";
  const json report = json::parse(isolated.partition_report_json());
  for (const auto& [node, provider] : node_providers(report)) EXPECT_EQ(provider, "cpu") << node;
  EXPECT_EQ(report["providers"][0]["isolation"]["failures"], 3);
  EXPECT_EQ(report["providers"][0]["isolation"]["device_buffers"], 0);
}

}  // namespace
