// Shared tensors (API 6, CreateSharedTensor) with a provider in a provider host process: an input in
// shared memory is read where it is and an output bound to a shared tensor is written where it is, so
// the bytes the host copies per run (the report's providers[].isolation.bytes_copied) drop to 0, and
// the outputs are the copying path's, bit for bit. A fused group's constant initializers are copied into
// shared memory once and then pass in place too. A provider host that dies mid-run fails that run
// with EP_FAIL and leaves the application's shared tensors valid; misuse gets a clear error. The
// plugin is "faulty" (beta: Add, Mul and Relu fused into one group), which crashes or hangs on demand.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "provider_host_kill.h"
#include "test_support.h"

namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kRows = 64, kCols = 32;
constexpr uint64_t kBytes = kRows * kCols * sizeof(float);
// c1 and c2, the group's constant initializers: copied into shared memory at its first compute, then passed
// in place by every compute.
constexpr uint64_t kConstantBytes = 2 * kCols * sizeof(float);

// x -> Add(c1) -> Mul(c2) -> Relu -> y: one fused group of the plugin, reading x and writing y.
std::string relu_chain_model() {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {kRows, kCols}).output("y", onnx::TensorProto::FLOAT, {kRows, kCols});
  std::vector<float> c1(kCols), c2(kCols);
  for (int64_t i = 0; i < kCols; ++i) {
    c1[i] = 0.5f - 0.1f * static_cast<float>(i % 7);
    c2[i] = 1.5f + 0.25f * static_cast<float>(i % 3);
  }
  m.initializer("c1", {kCols}, c1).initializer("c2", {kCols}, c2);
  m.node("Add", {"x", "c1"}, {"a"}, "add");
  m.node("Mul", {"a", "c2"}, {"m"}, "mul");
  m.node("Relu", {"m"}, {"y"}, "relu");
  return m.bytes();
}

struct Counters {
  uint64_t copied = 0, in_place = 0;
};

Counters counters(const Ephost::Session& s) {
  const nlohmann::json isolation = nlohmann::json::parse(s.partition_report_json())["providers"][0]["isolation"];
  return {isolation.value("bytes_copied", uint64_t{0}), isolation.value("bytes_in_place", uint64_t{0})};
}

class ProviderIsolationSharedTensor : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_plugins(dir_, {"ephost_test_faulty"});
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    model_ = relu_chain_model();
    x_.resize(kRows * kCols);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  }

  std::unique_ptr<Ephost::Session> session(const std::string& mode, Options options = {}) {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", mode);
    options.emplace_back("isolation_timeout_ms", "3000");
    o.append_provider("faulty", options);
    return std::make_unique<Ephost::Session>(*env_, model_.data(), model_.size(), o);
  }

  Ephost::Tensor shared_x() const {
    Ephost::Tensor t = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    std::memcpy(t.data<float>(), x_.data(), kBytes);
    return t;
  }

  // y through the copying path: a plain host input, the output handed back.
  std::vector<float> copied_run(const Ephost::Session& s) {
    return s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x_.data(), x_.size())}, {"y"})[0]
        .to_vector<float>();
  }

  ephost_test::TempDir dir_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_;
  std::vector<float> x_;
};

TEST_F(ProviderIsolationSharedTensor, SharedInputAndBoundOutputCrossInPlaceWithTheCopyingPathsOutputs) {
  auto isolated = session("process");
  auto in_process = session("in_process");
  const std::vector<float> want = copied_run(*in_process);
  Counters before = counters(*isolated);
  EXPECT_EQ(copied_run(*isolated), want) << "the copying path gives the in-process outputs";
  Counters after = counters(*isolated);
  EXPECT_EQ(after.copied - before.copied, 2 * kBytes + kConstantBytes) << "x in, y out, the constants once";
  before = after;
  EXPECT_EQ(copied_run(*isolated), want);
  after = counters(*isolated);
  EXPECT_EQ(after.copied - before.copied, kBytes) << "x copied in; y, unbound, left in the host's shared memory";
  EXPECT_EQ(after.in_place - before.in_place, kBytes + kConstantBytes) << "y and the constants in place";

  Ephost::Tensor x = shared_x(), y = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  EXPECT_TRUE(x.is_shared());
  EXPECT_FALSE(Ephost::Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2}).is_shared());
  Ephost::Session::IoBinding binding(*isolated);
  binding.bind_input("x", x).bind_output("y", y);
  for (int r = 0; r < 3; ++r) {
    std::memset(y.data<float>(), 0xff, kBytes);  // NaNs: an output not written shows
    before = counters(*isolated);
    binding.run();
    after = counters(*isolated);
    EXPECT_EQ(y.to_vector<float>(), want) << "run " << r;
    EXPECT_EQ(binding.output("y").data<float>(), y.data<float>()) << "the bound shared tensor is the output";
    EXPECT_EQ(after.copied - before.copied, 0u) << "run " << r << ": nothing copied through the arena";
    EXPECT_EQ(after.in_place - before.in_place, 2 * kBytes + kConstantBytes) << "run " << r;
  }

  // A plain run with a shared input: nothing is copied (the output stays in the host's shared memory).
  before = counters(*isolated);
  EXPECT_EQ(isolated->run({"x"}, {x}, {"y"})[0].to_vector<float>(), want);
  after = counters(*isolated);
  EXPECT_EQ(after.copied - before.copied, 0u);
  EXPECT_EQ(after.in_place - before.in_place, 2 * kBytes + kConstantBytes);

  // In process a shared tensor is an ordinary host tensor.
  Ephost::Session::IoBinding local(*in_process);
  std::memset(y.data<float>(), 0, kBytes);
  local.bind_input("x", x).bind_output("y", y);
  local.run();
  EXPECT_EQ(y.to_vector<float>(), want);
}

// Sessions of two envs (two provider host processes) read one shared tensor; releasing the caller's
// handle while it is bound is safe (the binding holds the memory).
TEST_F(ProviderIsolationSharedTensor, OneSharedTensorServesSessionsOfOtherEnvsAndOutlivesItsHandle) {
  auto first = session("process");
  const std::vector<float> want = copied_run(*first);
  Ephost::Env other_env(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
  Ephost::SessionOptions o;
  o.add_config("session.provider_isolation", "process");
  o.append_provider("faulty");
  Ephost::Session second(other_env, model_.data(), model_.size(), o);
  ASSERT_NE(ephost_test::provider_host_pid(*first), ephost_test::provider_host_pid(second));

  Ephost::Session::IoBinding a(*first), b(second);
  {
    Ephost::Tensor x = shared_x();
    a.bind_input("x", x).bind_output_to_device("y", "", 0);
    b.bind_input("x", x).bind_output_to_device("y", "", 0);
  }  // the caller's handle is gone; the bindings hold the memory
  for (int r = 0; r < 2; ++r) {
    a.run();
    b.run();
    EXPECT_EQ(a.output("y").to_vector<float>(), want);
    EXPECT_EQ(b.output("y").to_vector<float>(), want);
  }
  EXPECT_EQ(counters(second).in_place, 2 * (kBytes + kConstantBytes) + kBytes)
      << "x read in place in the second env's provider host too, and y left in shared memory at the second run";
  EXPECT_EQ(counters(second).copied, kConstantBytes + kBytes) << "the constants once, y out at the first run";
}

// Outputs the application did not bind stay in shared memory the host allocates for them (after the
// first compute, which tells their size): handed over as ordinary tensors in shared memory, reused once
// released, valid after their provider host died, and at most 4 per output are held (then copied).
TEST_F(ProviderIsolationSharedTensor, UnboundOutputsStayInTheHostsSharedMemory) {
  auto isolated = session("process");
  const std::vector<float> want = copied_run(*session("in_process"));
  Ephost::Tensor x = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x_.data(), x_.size());
  EXPECT_EQ(isolated->run({"x"}, {x}, {"y"})[0].to_vector<float>(), want);  // learns y's size
  std::vector<Ephost::Tensor> kept;
  for (int r = 0; r < 5; ++r) {
    const Counters before = counters(*isolated);
    kept.push_back(isolated->run({"x"}, {x}, {"y"})[0]);
    const Counters after = counters(*isolated);
    EXPECT_EQ(kept.back().to_vector<float>(), want) << "run " << r;
    EXPECT_EQ(kept.back().is_shared(), r < 4) << "run " << r;
    EXPECT_EQ(after.copied - before.copied, (r < 4 ? 1 : 2) * kBytes) << "run " << r << ": x in; y only past 4 kept";
  }
  std::vector<const float*> regions;
  for (size_t i = 0; i < 4; ++i) regions.push_back(kept[i].data<float>());
  for (size_t i = 1; i < 4; ++i) EXPECT_NE(regions[i], regions[i - 1]) << "a region each";
  kept.clear();
  Ephost::Tensor again = isolated->run({"x"}, {x}, {"y"})[0];
  EXPECT_TRUE(again.is_shared());
  EXPECT_EQ(again.to_vector<float>(), want);
  EXPECT_NE(std::find(regions.begin(), regions.end(), again.data<float>()), regions.end())
      << "a released region serves the next run";

  // The provider host dies: the output the application holds stays valid, and the next run maps the
  // regions in a new process.
  ASSERT_NO_FATAL_FAILURE(ephost_test::kill_provider_host(*isolated));
  EXPECT_EQ(again.to_vector<float>(), want);
  EXPECT_EQ(isolated->run({"x"}, {x}, {"y"})[0].to_vector<float>(), want);
  const Counters before = counters(*isolated);
  EXPECT_EQ(isolated->run({"x"}, {x}, {"y"})[0].to_vector<float>(), want);
  EXPECT_EQ(counters(*isolated).copied - before.copied, kBytes) << "in place in the new process too";

  auto copying = session("process", {{"isolation_shared_outputs", "0"}});
  for (int r = 0; r < 2; ++r) {
    const Counters b = counters(*copying);
    Ephost::Tensor y = copying->run({"x"}, {x}, {"y"})[0];
    EXPECT_EQ(y.to_vector<float>(), want);
    EXPECT_FALSE(y.is_shared());
    EXPECT_EQ(counters(*copying).copied - b.copied, 2 * kBytes + (r == 0 ? kConstantBytes : 0))
        << "isolation_shared_outputs=0: y copied out (and the constants into shared memory at the first run)";
  }
}

// A value passed between two steps of one isolated provider (alpha's single-node Add and Mul) stays in
// shared memory: written there by the first, read there by the second. One that a kernel of another
// provider reads too (the CPU plugin's Relu) is copied out, so that no kernel of the application's
// process reads memory a provider host can still change.
TEST(ProviderIsolationSharedOutputs, ValuesBetweenStepsOfOneIsolatedProviderAreNotCopied) {
  ephost_test::TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_alpha"});
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{dir.path()});
  auto model = [](bool cpu_reads_a) {
    ephost_test::ModelBuilder m;
    m.input("x", onnx::TensorProto::FLOAT, {kRows, kCols}).output("y", onnx::TensorProto::FLOAT, {kRows, kCols});
    m.node("Add", {"x", "x"}, {"a"}, "add");
    m.node("Mul", {"a", "a"}, {"y"}, "mul");
    if (cpu_reads_a) {
      m.output("r", onnx::TensorProto::FLOAT, {kRows, kCols});
      m.node("Relu", {"a"}, {"r"}, "relu");
    }
    return m.bytes();
  };
  std::vector<float> x(kRows * kCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.21f * static_cast<float>(i)) * 2.0f;
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = (x[i] + x[i]) * (x[i] + x[i]);
  for (bool cpu_reads_a : {false, true}) {
    SCOPED_TRACE(cpu_reads_a ? "a read by the CPU plugin too" : "a read by alpha only");
    const std::string bytes = model(cpu_reads_a);
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", "process");
    o.append_provider("alpha");
    Ephost::Session s(env, bytes.data(), bytes.size(), o);
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x.data(), x.size());
    EXPECT_EQ(s.run({"x"}, {in}, {"y"})[0].to_vector<float>(), want);  // learns the sizes
    const Counters before = counters(s);
    EXPECT_EQ(s.run({"x"}, {in}, {"y"})[0].to_vector<float>(), want);
    const Counters after = counters(s);
    if (!cpu_reads_a) {
      EXPECT_EQ(after.copied - before.copied, 2 * kBytes) << "x in, twice (Add reads it twice): nothing else";
      EXPECT_EQ(after.in_place - before.in_place, 4 * kBytes) << "a out, a in twice, y out";
    } else {
      EXPECT_EQ(after.copied - before.copied, 5 * kBytes) << "x in twice, a out, a in twice";
      EXPECT_EQ(after.in_place - before.in_place, kBytes) << "y out";
    }
  }
}

// A provider host that crashes (SIGSEGV in compute) or is killed from outside (SIGKILL while it hangs in
// compute) mid-run with bound shared tensors: the run fails with EP_FAIL, the tensors stay valid (the
// input unchanged, the output readable), and the next runs are correct in a new process.
TEST_F(ProviderIsolationSharedTensor, ProviderHostDyingMidRunFailsTheRunAndLeavesTheTensorsValid) {
  for (const char* fault : {"segfault", "hang"}) {
    SCOPED_TRACE(fault);
    const std::string trigger = dir_.file(std::string("fault-") + fault);
    auto s = session("process", {{"fault", std::string(fault) + ":compute"}, {"fault_while", trigger}});
    const std::vector<float> want = copied_run(*s);
    Ephost::Tensor x = shared_x(), y = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    Ephost::Session::IoBinding binding(*s);
    binding.bind_input("x", x).bind_output("y", y);
    binding.run();
    EXPECT_EQ(y.to_vector<float>(), want);

    std::ofstream(trigger).put('1');
    std::thread killer;
    if (std::string(fault) == "hang") {
      const long pid = ephost_test::provider_host_pid(*s);
      ASSERT_GT(pid, 0);
      killer = std::thread([pid] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(static_cast<pid_t>(pid), SIGKILL);
      });
    }
    try {
      binding.run();
      ADD_FAILURE() << "the run whose provider host died succeeded";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_EP_FAIL) << e.message();
      EXPECT_NE(e.message().find("provider 'faulty'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(std::string(fault) == "hang" ? "SIGKILL" : "SIGSEGV"), std::string::npos)
          << e.message();
    }
    if (killer.joinable()) killer.join();
    EXPECT_EQ(std::memcmp(x.data<float>(), x_.data(), kBytes), 0) << "the input is intact and readable";
    volatile float sum = 0;
    for (float v : y.to_vector<float>()) sum = sum + v;  // readable: still mapped here
    std::remove(trigger.c_str());
    for (int r = 0; r < 2; ++r) {
      binding.run();  // a new provider host maps the tensors again
      EXPECT_EQ(y.to_vector<float>(), want);
    }
  }
}

TEST_F(ProviderIsolationSharedTensor, MisuseGetsAClearError) {
  auto expect_error = [](EphostStatusCode code, const std::string& says, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected an error saying: " << says;
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), code) << e.message();
      EXPECT_NE(e.message().find(says), std::string::npos) << e.message();
    }
  };
  expect_error(EPHOST_INVALID_ARGUMENT, "string tensor cannot live in shared memory",
               [] { Ephost::Tensor::shared(EPHOST_ELEMENT_STRING, {2}); });
  expect_error(EPHOST_INVALID_ARGUMENT, "negative", [] { Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {2, -3}); });
  // A tensor made over a shared tensor's memory must lie within it (its memory is whole pages: 8 KiB here).
  Ephost::Tensor x = shared_x();
  float* inside = x.data<float>() + 2000;
  expect_error(EPHOST_INVALID_ARGUMENT, "runs past its end",
               [&] { Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1000}, inside, 1000); });
  Ephost::Tensor part = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {kRows, kCols}, x.data<float>(), x_.size());
  EXPECT_TRUE(part.is_shared());
  // A shared output of the wrong shape.
  auto s = session("process");
  Ephost::Session::IoBinding binding(*s);
  Ephost::Tensor wrong = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {kCols, kRows});
  binding.bind_input("x", part).bind_output("y", wrong);
  try {
    binding.run();
    ADD_FAILURE() << "a bound output of the wrong shape was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << e.message();
    EXPECT_NE(e.message().find("into a float [32,64] tensor"), std::string::npos) << e.message();
  }
  EXPECT_EQ(std::memcmp(x.data<float>(), x_.data(), kBytes), 0);
}

}  // namespace
