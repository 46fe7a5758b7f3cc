// Every failure of a device call (allocate, the three copies, stream creation and synchronization,
// and compute) is an EP_FAIL that names the provider, the value (or node) and the call; the session
// stays usable (the next run succeeds with the right numbers) and no device memory is left allocated
// once the session is released. fakedev_fail(call, k) makes the call fail after k more successes: each
// test sweeps k over every occurrence of the call in a run, on a session's first run (values allocated
// one by one, streams created) and on a later one (memory-pattern blocks, pooled streams).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "device_support.h"

namespace {

using namespace ephost_test;

// What the host's message must say for a failure of each fakedev call.
struct Injection {
  const char* call;       // fakedev_fail's name
  const char* host_call;  // the call as the host names it
};
const Injection kInjections[] = {
    {"allocate", "device_allocate"},
    {"copy_to_device", "copy_to_device"},
    {"copy_to_host", "copy_to_host"},
    {"copy_between_devices", "copy_between_devices"},
    {"stream_create", "stream_create"},
    {"stream_synchronize", "stream_synchronize"},
    {"compute", "kernel for node"},
};

// The split model's values and nodes (device_support.h), quoted as messages quote them: a value
// possibly with the location of its copy ('a@host'), or a node.
const std::regex kNamesAValue(R"('(x|a|m|n|y|c1)(@[a-z:0-9]+)?'|node '(add|relu)')");

// How x goes in and y comes out.
enum class Binding {
  kNone,         // plain Run: x from the host, y to the host
  kOtherDevice,  // x on fakedev:1, y into a fakedev:1 tensor: copies between devices
  kSameDevice,   // x on fakedev:0, y handed over on fakedev:0: no copy in or out
};

struct Scenario {
  std::string name;
  int runs_before;  // 0: values allocated one by one, streams created; 1: the memory-pattern block is
                    // allocated; 2: block and streams come from the pools
  Binding binding;
};

class DeviceFailureTest : public ::testing::TestWithParam<Scenario> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_env_.fake().ok()) << "fakedev's test hooks not found";
    model_ = split_model().bytes();
    Ephost::Session cpu(env(), model_.data(), model_.size(), options_with({"cpu"}));
    x_ = input_values(3);
    want_ = cpu.run({"x"}, {host_tensor(x_)}, {"y"})[0].to_vector<float>();
  }
  FakeDevEnv fake_env_;
  const FakeDevHooks& fake() { return fake_env_.fake(); }
  Ephost::Env& env() { return fake_env_.env(); }

  // What one run in the scenario's way needs: device tensors made and filled, the binding set.
  struct Prepared {
    Ephost::Tensor x, y;
    std::unique_ptr<Ephost::Session::IoBinding> binding;
    std::vector<float> host_x;
  };
  Prepared prepare(Ephost::Session& s, Binding binding) {
    Prepared p;
    p.host_x = x_;
    if (binding == Binding::kNone) return p;
    const uint32_t device = binding == Binding::kOtherDevice ? 1 : 0;
    p.x = env().device_tensor("fakedev", device, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    p.x.copy_from(host_tensor(p.host_x));
    p.binding = std::make_unique<Ephost::Session::IoBinding>(s);
    p.binding->bind_input("x", p.x);
    if (binding == Binding::kOtherDevice) {
      p.y = env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
      p.binding->bind_output("y", p.y);
    } else {
      p.binding->bind_output_to_device("y", "fakedev", 0);
    }
    return p;
  }
  // Runs; y is in p.y, or in `out` for a plain run.
  void run_only(Ephost::Session& s, Prepared& p, Ephost::Tensor* out) {
    if (!p.binding) {
      *out = s.run({"x"}, {host_tensor(p.host_x)}, {"y"})[0];
      return;
    }
    p.binding->run();
    *out = p.binding->output("y");
  }
  // Runs; returns y read back to the host.
  std::vector<float> run(Ephost::Session& s, Prepared& p) {
    Ephost::Tensor y;
    run_only(s, p, &y);
    return y.on_device() ? read_back(y) : y.to_vector<float>();
  }
  std::vector<float> run(Ephost::Session& s, Binding binding) {
    Prepared p = prepare(s, binding);
    return run(s, p);
  }

  std::string model_;
  std::vector<float> x_, want_;
  std::set<std::string> messages_;
};

INSTANTIATE_TEST_SUITE_P(
    Runs, DeviceFailureTest,
    ::testing::Values(Scenario{"first_run", 0, Binding::kNone}, Scenario{"second_run", 1, Binding::kNone},
                      Scenario{"later_run", 2, Binding::kNone},
                      Scenario{"bound_other_device_first_run", 0, Binding::kOtherDevice},
                      Scenario{"bound_other_device_second_run", 1, Binding::kOtherDevice},
                      Scenario{"bound_other_device_later_run", 2, Binding::kOtherDevice},
                      Scenario{"bound_same_device_first_run", 0, Binding::kSameDevice},
                      Scenario{"bound_same_device_second_run", 1, Binding::kSameDevice},
                      Scenario{"bound_same_device_later_run", 2, Binding::kSameDevice}),
    [](const ::testing::TestParamInfo<Scenario>& info) { return info.param.name; });

TEST_P(DeviceFailureTest, EveryCallFailureIsAnEpFailNamingProviderValueAndCallAndTheSessionStaysUsable) {
  const Scenario sc = GetParam();
  // fakedev takes Add and Relu: the run copies both ways and runs kernels on a stream.
  const Ephost::SessionOptions options = options_with({"fakedev"}, {{"ep.fakedev.claim", "Add,Relu"}});
  std::map<std::string, int> failures_seen;
  for (const Injection& inj : kInjections) {
    for (long k = 0;; ++k) {
      SCOPED_TRACE(std::string(inj.call) + " failing after " + std::to_string(k) + " successes");
      ASSERT_LT(k, 20) << "the call never stops failing";
      const long live_before = fake().live();
      bool failed = false;
      {
        Ephost::Session s(env(), model_.data(), model_.size(), options);
        for (int i = 0; i < sc.runs_before; ++i) expect_same_floats(run(s, sc.binding), want_, "a run before");
        // Device tensors made and filled first: what fails is the run, not its preparation.
        Prepared p = prepare(s, sc.binding);
        Ephost::Tensor y;
        fake().fail(inj.call, k);
        const CallResult r = catch_result([&] { run_only(s, p, &y); });
        fake().fail(inj.call, -1);
        failed = !r.ok();
        // A run the failure did not stop (k past the last such call, or a failure the host may
        // absorb: a kernel whose stream could not be made runs synchronously) is right.
        if (!failed) expect_same_floats(y.on_device() ? read_back(y) : y.to_vector<float>(), want_, "the run");
        if (failed) {
          ++failures_seen[inj.call];
          EXPECT_EQ(r.code, EPHOST_EP_FAIL) << r.message;
          EXPECT_TRUE(contains(r.message, "provider 'fakedev'")) << r.message;
          EXPECT_TRUE(contains(r.message, inj.host_call)) << r.message;
          EXPECT_TRUE(contains(r.message, std::string("fakedev: injected failure of ") + inj.call)) << r.message;
          EXPECT_TRUE(std::regex_search(r.message, kNamesAValue)) << "names no value or node: " << r.message;
          messages_.insert(std::regex_replace(r.message, std::regex("[0-9]+ bytes"), "N bytes"));
          // Usable afterwards: the same session runs again, right, with the same binding and anew.
          expect_same_floats(run(s, p), want_, "the run after the failure");
          expect_same_floats(run(s, sc.binding), want_, "a second run after the failure");
        }
      }
      EXPECT_EQ(fake().live(), live_before) << "device memory leaked";
      if (!failed) break;  // k is past the last call of this kind in a run
    }
  }
  // Every call the scenario makes was made to fail at least once.
  EXPECT_GT(failures_seen["allocate"], 0);
  EXPECT_GT(failures_seen["copy_to_device"], 0);
  EXPECT_GT(failures_seen["copy_to_host"], 0);
  EXPECT_GT(failures_seen["stream_synchronize"], 0);
  EXPECT_GT(failures_seen["compute"], 0);
  if (sc.binding == Binding::kOtherDevice) {
    EXPECT_GT(failures_seen["copy_between_devices"], 0);
  }
  // The first stream of a run is made for the first copy, except when nothing is copied before the
  // first kernel: then the kernel runs synchronously and the next copy makes the stream.
  if (sc.runs_before == 0 && sc.binding != Binding::kSameDevice) {
    EXPECT_GT(failures_seen["stream_create"], 0);
  }
  if (sc.runs_before == 1) {
    bool block = false;
    for (const auto& m : messages_) block = block || contains(m, "the memory-pattern block of graph 'test'");
    EXPECT_TRUE(block) << "the memory-pattern block's allocation failed in no run";
  }
  // The messages, for whoever reads the test's output.
  for (const auto& m : messages_) std::cout << "  " << m << "\n";
}

// A failure while the session is created (uploading a constant initializer) fails the creation with
// the same kind of message, and frees what was allocated.
TEST(DeviceFailureAtCreation, InitializerUploadFailureFailsTheSessionCleanly) {
  FakeDevEnv fake_env;
  ASSERT_TRUE(fake_env.fake().ok());
  const FakeDevHooks& fake = fake_env.fake();
  const std::string model = device_chain_model().bytes();
  for (const char* call : {"allocate", "copy_to_device"}) {
    for (long k = 0; k < 2; ++k) {
      SCOPED_TRACE(std::string(call) + " after " + std::to_string(k));
      const long live = fake.live();
      fake.fail(call, k);
      const CallResult r = catch_result([&] {
        Ephost::Session s(fake_env.env(), model.data(), model.size(), options_with({"fakedev"}));
      });
      fake.fail(call, -1);
      EXPECT_EQ(r.code, EPHOST_EP_FAIL) << r.message;
      EXPECT_TRUE(contains(r.message, "provider 'fakedev'")) << r.message;
      EXPECT_TRUE(contains(r.message, std::string(call) == "allocate" ? "device_allocate" : "copy_to_device"))
          << r.message;
      EXPECT_TRUE(contains(r.message, k == 0 ? "initializer 'c1'" : "initializer 'c2'")) << r.message;
      EXPECT_EQ(fake.live(), live) << "device memory leaked by the failed creation";
    }
  }
  // And a session made afterwards works.
  Ephost::Session s(fake_env.env(), model.data(), model.size(), options_with({"fakedev"}));
  std::vector<float> x = input_values(1), z = input_values(2);
  Ephost::Session cpu(fake_env.env(), model.data(), model.size(), options_with({"cpu"}));
  auto want = cpu.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  auto got = s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  expect_same_floats(got[0].to_vector<float>(), want[0].to_vector<float>(), "y1");
  expect_same_floats(got[1].to_vector<float>(), want[1].to_vector<float>(), "y2");
}

// CopyTensor's failures name the provider and the call too.
TEST(DeviceFailureInCopyTensor, CopyFailuresAreEpFail) {
  FakeDevEnv fake_env;
  ASSERT_TRUE(fake_env.fake().ok());
  const FakeDevHooks& fake = fake_env.fake();
  std::vector<float> v = input_values(1);
  Ephost::Tensor host = host_tensor(v);
  Ephost::Tensor d0 = fake_env.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  Ephost::Tensor d1 = fake_env.env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  struct Case {
    const char* call;
    std::function<void()> copy;
  };
  for (const Case& c : {Case{"copy_to_device", [&] { d0.copy_from(host); }},
                        Case{"copy_to_host", [&] { host.copy_from(d0); }},
                        Case{"copy_between_devices", [&] { d1.copy_from(d0); }}}) {
    fake.fail(c.call, 0);
    const CallResult r = catch_result(c.copy);
    EXPECT_EQ(r.code, EPHOST_EP_FAIL) << r.message;
    EXPECT_TRUE(contains(r.message, "provider 'fakedev'")) << r.message;
    EXPECT_TRUE(contains(r.message, c.call)) << r.message;
    EXPECT_TRUE(contains(r.message, "CopyTensor")) << r.message;
    c.copy();  // works again
  }
  const CallResult r = catch_result([&] {
    fake.fail("allocate", 0);
    fake_env.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  });
  EXPECT_EQ(r.code, EPHOST_EP_FAIL) << r.message;
  EXPECT_TRUE(contains(r.message, "provider 'fakedev' device 0: device_allocate of 60 bytes for a device tensor"))
      << r.message;
}

}  // namespace
