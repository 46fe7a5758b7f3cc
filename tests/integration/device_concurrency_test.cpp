// Concurrent runs on one session whose nodes run on a device (fakedev: asynchronous streams, device
// memory closed outside the plugin's calls): 8 threads, each with its own inputs, get exactly the
// outputs a single-threaded run gives for those inputs, with plain Run and with one IoBinding per
// thread (device tensors in and out); the copies add up to what the runs need and no device memory
// is left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "device_support.h"

namespace {

using namespace ephost_test;

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 100;

class DeviceConcurrencyTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_env_.fake().ok()) << "fakedev's test hooks not found"; }
  FakeDevEnv fake_env_;
  const FakeDevHooks& fake() { return fake_env_.fake(); }
  Ephost::Env& env() { return fake_env_.env(); }
};

// "chain": every node on the device; "split": device -> CPU -> device (copies both ways every run).
INSTANTIATE_TEST_SUITE_P(Models, DeviceConcurrencyTest, ::testing::Values("chain", "split"));

struct Case {
  std::string model;
  std::vector<std::string> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> config;
};

Case make_case(const std::string& name) {
  if (name == "chain") return {device_chain_model().bytes(), {"x", "z"}, {"y1", "y2"}, {}};
  return {split_model().bytes(), {"x"}, {"y"}, {{"ep.fakedev.claim", "Add,Relu"}}};
}

// Per thread: its inputs and the single-threaded outputs for them.
struct Expected {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> outputs;
};

std::vector<Expected> expectations(Ephost::Session& s, const Case& c) {
  std::vector<Expected> out(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    std::vector<Ephost::Tensor> in;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      out[t].inputs.push_back(input_values(t * 3 + static_cast<int>(i)));
      in.push_back(host_tensor(out[t].inputs.back()));
    }
    for (const auto& y : s.run(c.inputs, in, c.outputs)) out[t].outputs.push_back(y.to_vector<float>());
  }
  return out;
}

TEST_P(DeviceConcurrencyTest, EightThreadsOfPlainRunsGetTheSingleThreadedOutputs) {
  const Case c = make_case(GetParam());
  const long live_before = fake().live();
  {
    Ephost::Session s(env(), c.model.data(), c.model.size(), options_with({"fakedev"}, c.config));
    const std::vector<Expected> want = expectations(s, c);
    // The reference itself is the CPU plugin's.
    Ephost::Session cpu(env(), c.model.data(), c.model.size(), options_with({"cpu"}));
    for (int t = 0; t < kThreads; ++t) {
      std::vector<float> in0 = want[t].inputs[0];
      std::vector<Ephost::Tensor> in{host_tensor(in0)};
      std::vector<float> in1;
      if (c.inputs.size() > 1) {
        in1 = want[t].inputs[1];
        in.push_back(host_tensor(in1));
      }
      auto ref = cpu.run(c.inputs, in, c.outputs);
      for (size_t o = 0; o < ref.size(); ++o) expect_same_floats(want[t].outputs[o], ref[o].to_vector<float>(), "ref");
    }
    fake().reset();
    std::atomic<int> mismatches{0}, errors{0};
    std::vector<std::string> first_error(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        try {
          std::vector<std::vector<float>> inputs = want[t].inputs;
          for (int r = 0; r < kRunsPerThread; ++r) {
            std::vector<Ephost::Tensor> in;
            for (auto& v : inputs) in.push_back(host_tensor(v));
            auto out = s.run(c.inputs, in, c.outputs);
            for (size_t o = 0; o < out.size(); ++o)
              if (out[o].to_vector<float>() != want[t].outputs[o]) ++mismatches;
          }
        } catch (const std::exception& e) {
          ++errors;
          first_error[t] = e.what();
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(first_error[t], "") << "thread " << t;
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(mismatches.load(), 0) << "outputs differ from the single-threaded run's";
    const long runs = kThreads * kRunsPerThread;
    // chain: x and z in, y1 and y2 out; split: x and n in, a and y out.
    const long ins = 2, outs = 2;
    EXPECT_EQ(fake().h2d(), ins * runs) << "copies in per run, whatever the interleaving";
    EXPECT_EQ(fake().d2h(), outs * runs);
  }
  EXPECT_EQ(fake().live(), live_before) << "device memory left allocated";
}

TEST_P(DeviceConcurrencyTest, EightThreadsWithTheirOwnBindingsGetTheSingleThreadedOutputs) {
  const Case c = make_case(GetParam());
  const long live_before = fake().live();
  {
    Ephost::Session s(env(), c.model.data(), c.model.size(), options_with({"fakedev"}, c.config));
    const std::vector<Expected> want = expectations(s, c);
    // Each thread: device inputs, one output into a device tensor, the others handed over on the device.
    struct PerThread {
      std::vector<Ephost::Tensor> inputs;
      Ephost::Tensor first_output;
      std::unique_ptr<Ephost::Session::IoBinding> binding;
    };
    std::vector<PerThread> per(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      per[t].binding = std::make_unique<Ephost::Session::IoBinding>(s);
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        Ephost::Tensor d = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
        std::vector<float> v = want[t].inputs[i];
        d.copy_from(host_tensor(v));
        per[t].binding->bind_input(c.inputs[i], d);
        per[t].inputs.push_back(d);
      }
      per[t].first_output = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
      per[t].binding->bind_output(c.outputs[0], per[t].first_output);
      for (size_t o = 1; o < c.outputs.size(); ++o) per[t].binding->bind_output_to_device(c.outputs[o], "fakedev", 0);
    }
    fake().reset();
    std::atomic<int> mismatches{0};
    std::vector<std::string> first_error(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        try {
          for (int r = 0; r < kRunsPerThread; ++r) {
            per[t].binding->run();
            // Read back every few runs (CopyTensor is synchronous and thread-safe).
            if (r % 5 != 4) continue;
            for (size_t o = 0; o < c.outputs.size(); ++o) {
              const Ephost::Tensor y = o == 0 ? per[t].first_output : per[t].binding->output(c.outputs[o]);
              const std::vector<float> got = read_back(y);
              if (!std::equal(got.begin(), got.end(), want[t].outputs[o].begin(), want[t].outputs[o].end()))
                ++mismatches;
            }
          }
        } catch (const std::exception& e) {
          first_error[t] = e.what();
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(first_error[t], "") << "thread " << t;
    EXPECT_EQ(mismatches.load(), 0) << "outputs differ from the single-threaded run's";
    const long runs = kThreads * kRunsPerThread, readbacks = kThreads * (kRunsPerThread / 5);
    if (GetParam() == "chain") {
      EXPECT_EQ(fake().h2d(), 0) << "bound device inputs are not copied";
      EXPECT_EQ(fake().d2h(), 2 * readbacks) << "only the read-backs leave the device";
    } else {
      EXPECT_EQ(fake().h2d(), runs) << "n back to the device, once per run";
      EXPECT_EQ(fake().d2h(), runs + readbacks) << "a to the host once per run, and the read-backs";
    }
    EXPECT_EQ(fake().d2d(), 0);
  }
  EXPECT_EQ(fake().live(), live_before) << "device memory left allocated";
}

}  // namespace
