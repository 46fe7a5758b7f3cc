// Device tensors and bound runs (IoBinding, application API 3) through the fakedev test plugin:
// inputs bound as device tensors and outputs bound to the device (BindOutput into a device tensor,
// BindOutputToDevice) make repeated runs move nothing between host and device; a device tensor bound
// where a host step reads it is copied there on demand; one on the plugin's other device is copied
// device to device. Memory patterns per device: once a shape has run, bound runs allocate no device
// memory. Every count comes from the plugin (fakedev_count), every result is read back with CopyTensor
// and compared with the CPU plugin's.
#include <gtest/gtest.h>

#include "device_support.h"

namespace {

using namespace ephost_test;

class DeviceBindingTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_env_.fake().ok()) << "fakedev's test hooks not found"; }
  FakeDevEnv fake_env_;
  const FakeDevHooks& fake() { return fake_env_.fake(); }
  Ephost::Env& env() { return fake_env_.env(); }

  // A device tensor on fakedev:`device` holding `values`.
  Ephost::Tensor on_device(std::vector<float> values, uint32_t device = 0, int64_t rows = kRows) {
    Ephost::Tensor t = env().device_tensor("fakedev", device, EPHOST_ELEMENT_FLOAT, {rows, kCols});
    t.copy_from(host_tensor(values, rows));
    return t;
  }
  std::vector<std::vector<float>> cpu(const std::string& model, const std::vector<std::string>& in_names,
                                      std::vector<std::vector<float>> inputs, const std::vector<std::string>& out_names,
                                      int64_t rows = kRows) {
    Ephost::Session s(env(), model.data(), model.size(), options_with({"cpu"}));
    std::vector<Ephost::Tensor> in;
    for (auto& v : inputs) in.push_back(host_tensor(v, rows));
    std::vector<std::vector<float>> out;
    for (const auto& t : s.run(in_names, in, out_names)) out.push_back(t.to_vector<float>());
    return out;
  }
};

TEST_F(DeviceBindingTest, DeviceTensorsKnowTheirLocationAndCopyBothWays) {
  std::vector<float> v = input_values(3);
  fake().reset();
  Ephost::Tensor d0 = on_device(v, 0);
  EXPECT_TRUE(d0.on_device());
  EXPECT_EQ(location_of(d0), "fakedev:0");
  EXPECT_EQ(d0.data<float>(), nullptr) << "a device tensor has no host data";
  EXPECT_EQ(d0.shape(), (std::vector<int64_t>{kRows, kCols}));
  EXPECT_EQ(fake().h2d(), 1);
  Ephost::Tensor d1 = env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  EXPECT_EQ(location_of(d1), "fakedev:1");
  d1.copy_from(d0);  // device to device, on the plugin's own copy
  EXPECT_EQ(fake().d2d(), 1);
  EXPECT_EQ(fake().h2d(), 1);
  EXPECT_EQ(fake().d2h(), 0);
  expect_same_floats(read_back(d1), v, "fakedev:0 -> fakedev:1 -> host");
  EXPECT_EQ(fake().d2h(), 1);
  EXPECT_EQ(fake().live(), 2);
  d0 = Ephost::Tensor();
  d1 = Ephost::Tensor();
  EXPECT_EQ(fake().live(), 0) << "ReleaseTensor frees device memory";
}

TEST_F(DeviceBindingTest, BoundDeviceInputsAndOutputsMoveNothingOnRepeatedRuns) {
  const std::string model = device_chain_model().bytes();
  const long live_before = fake().live();
  {
    Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev"}));
    std::vector<float> x = input_values(1), z = input_values(2);
    const auto want = cpu(model, {"x", "z"}, {x, z}, {"y1", "y2"});
    Ephost::Tensor xd = on_device(x), zd = on_device(z);
    Ephost::Tensor y1d = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
    Ephost::Session::IoBinding binding(s);
    binding.bind_input("x", xd).bind_input("z", zd);
    binding.bind_output("y1", y1d);                     // written into this tensor
    binding.bind_output_to_device("y2", "fakedev", 0);  // handed over on the device
    fake().reset();
    constexpr int kRuns = 5;
    for (int run = 0; run < kRuns; ++run) {
      binding.run();
      EXPECT_EQ(fake().h2d(), 0) << "run " << run;
      EXPECT_EQ(fake().d2h(), 0) << "run " << run;
      EXPECT_EQ(fake().d2d(), 0) << "run " << run;
    }
    EXPECT_EQ(fake().kernels(), 5 * kRuns);
    Ephost::Tensor y1 = binding.output("y1"), y2 = binding.output("y2");
    EXPECT_EQ(location_of(y1), "fakedev:0");
    EXPECT_EQ(location_of(y2), "fakedev:0");
    expect_same_floats(read_back(y1d), want[0], "y1 (bound device tensor)");
    expect_same_floats(read_back(y1), want[0], "y1 (IoBindingGetOutput)");
    expect_same_floats(read_back(y2), want[1], "y2 (bound to the device)");
    EXPECT_EQ(fake().d2h(), 3) << "only the read-backs";

    // New input values in the same device tensors: the next run sees them.
    std::vector<float> x2 = input_values(5);
    xd.copy_from(host_tensor(x2));
    const auto want2 = cpu(model, {"x", "z"}, {x2, z}, {"y1", "y2"});
    const long h2d = fake().h2d(), d2h = fake().d2h();
    binding.run();
    EXPECT_EQ(fake().h2d(), h2d);
    EXPECT_EQ(fake().d2h(), d2h);
    expect_same_floats(read_back(y1d), want2[0], "y1 after new x");
    expect_same_floats(read_back(binding.output("y2")), want2[1], "y2 after new x");
  }
  EXPECT_EQ(fake().live(), live_before) << "device memory left allocated";
}

TEST_F(DeviceBindingTest, HostOutputBindingCopiesOutOnceAndHostInputsGoInOnce) {
  const std::string model = device_chain_model().bytes();
  Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev"}));
  std::vector<float> x = input_values(4), z = input_values(6);
  const auto want = cpu(model, {"x", "z"}, {x, z}, {"y1", "y2"});
  Ephost::Tensor xd = on_device(x);
  Ephost::Tensor zh = host_tensor(z);
  Ephost::Tensor y1h = Ephost::Tensor::allocate(EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  Ephost::Session::IoBinding binding(s);
  binding.bind_input("x", xd).bind_input("z", zh).bind_output("y1", y1h).bind_output_to_device("y2", "", 0);
  fake().reset();
  for (int run = 0; run < 3; ++run) {
    const long h2d = fake().h2d(), d2h = fake().d2h();
    binding.run();
    EXPECT_EQ(fake().h2d() - h2d, 1) << "z (host) goes in; x is already there";
    EXPECT_EQ(fake().d2h() - d2h, 2) << "y1 into the bound host tensor, y2 to the host";
  }
  expect_same_floats(y1h.to_vector<float>(), want[0], "y1 (bound host tensor)");
  Ephost::Tensor y2 = binding.output("y2");
  EXPECT_EQ(location_of(y2), "host");
  expect_same_floats(y2.to_vector<float>(), want[1], "y2 (bound to the host)");
}

TEST_F(DeviceBindingTest, DeviceTensorReadByAHostStepIsCopiedOnDemand) {
  const std::string model = host_reads_input_model().bytes();
  Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev"}));
  ASSERT_EQ(node_providers(nlohmann::json::parse(s.partition_report_json())).at("sub"), "cpu");
  std::vector<float> x = input_values(2);
  const auto want = cpu(model, {"x"}, {x}, {"y"});
  Ephost::Tensor xd = on_device(x);
  Ephost::Session::IoBinding binding(s);
  binding.bind_input("x", xd).bind_output_to_device("y", "fakedev", 0);
  fake().reset();
  for (int run = 0; run < 3; ++run) {
    const long h2d = fake().h2d(), d2h = fake().d2h();
    binding.run();
    EXPECT_EQ(fake().d2h() - d2h, 1) << "x to the host for sub (on demand)";
    EXPECT_EQ(fake().h2d() - h2d, 1) << "s to the device for relu (planned)";
  }
  expect_same_floats(read_back(binding.output("y")), want[0], "y");
  // Plain Run with the device tensor as input: the same.
  auto out = s.run({"x"}, {xd}, {"y"});
  expect_same_floats(out[0].to_vector<float>(), want[0], "y (Run with a device input)");
}

TEST_F(DeviceBindingTest, InputOnTheOtherDeviceIsCopiedDeviceToDevice) {
  const std::string model = device_chain_model().bytes();
  Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev:0"}));
  std::vector<float> x = input_values(1), z = input_values(2);
  const auto want = cpu(model, {"x", "z"}, {x, z}, {"y1", "y2"});
  Ephost::Tensor x1 = on_device(x, 1), z0 = on_device(z, 0);
  Ephost::Tensor y1d = env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  Ephost::Session::IoBinding binding(s);
  binding.bind_input("x", x1).bind_input("z", z0).bind_output("y1", y1d).bind_output_to_device("y2", "fakedev", 0);
  fake().reset();
  for (int run = 0; run < 3; ++run) {
    const long d2d = fake().d2d();
    binding.run();
    EXPECT_EQ(fake().d2d() - d2d, 2) << "x from fakedev:1 in, y1 out to fakedev:1";
    EXPECT_EQ(fake().h2d(), 0);
    EXPECT_EQ(fake().d2h(), 0);
  }
  expect_same_floats(read_back(y1d), want[0], "y1 on fakedev:1");
  expect_same_floats(read_back(binding.output("y2")), want[1], "y2 on fakedev:0");
}

// Memory patterns per device: the first run with given input shapes records one block per device;
// later bound runs with those shapes allocate no device memory at all. Another shape records its own
// pattern; going back to the first shape allocates nothing either.
TEST_F(DeviceBindingTest, MemoryPatternsLeaveBoundRunsWithoutDeviceAllocations) {
  const std::string model = device_chain_model_dynamic().bytes();
  const long live_before = fake().live();
  {
    Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev"}));
    struct Bound {
      Ephost::Tensor x, z, y1, y2;
      std::vector<std::vector<float>> want;
    };
    auto bind = [&](Ephost::Session::IoBinding& b, int64_t rows, int seed) {
      std::vector<float> x = input_values(seed, rows), z = input_values(seed + 1, rows);
      Bound r;
      r.want = cpu(model, {"x", "z"}, {x, z}, {"y1", "y2"}, rows);
      r.x = on_device(x, 0, rows);
      r.z = on_device(z, 0, rows);
      r.y1 = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {rows, kCols});
      r.y2 = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {rows, kCols});
      b.bind_input("x", r.x).bind_input("z", r.z).bind_output("y1", r.y1).bind_output("y2", r.y2);
      return r;
    };
    Ephost::Session::IoBinding small(s), large(s);
    Bound a = bind(small, 3, 1), b = bind(large, 40, 2);
    for (auto* shape : {&small, &large}) {
      const long allocs = fake().allocs();
      shape->run();  // records the pattern of these shapes
      EXPECT_GT(fake().allocs(), allocs) << "the first run of a shape allocates its values";
      const long after_first = fake().allocs();
      for (int run = 0; run < 4; ++run) shape->run();
      EXPECT_EQ(fake().allocs(), after_first + 1) << "one memory-pattern block, then nothing";
      const long flat = fake().allocs();
      for (int run = 0; run < 4; ++run) shape->run();
      EXPECT_EQ(fake().allocs(), flat) << "the block is reused";
    }
    const long flat = fake().allocs();
    for (int run = 0; run < 3; ++run) {
      small.run();
      large.run();
    }
    EXPECT_EQ(fake().allocs(), flat) << "alternating shapes reuse their blocks";
    expect_same_floats(read_back(a.y1), a.want[0], "y1 small");
    expect_same_floats(read_back(a.y2), a.want[1], "y2 small");
    expect_same_floats(read_back(b.y1), b.want[0], "y1 large");
    expect_same_floats(read_back(b.y2), b.want[1], "y2 large");
  }
  EXPECT_EQ(fake().live(), live_before) << "device memory left allocated";
}

// Plain Run: the values inside the run come from the pattern, so a later run allocates only the device
// buffers of its graph outputs (each copied to the host and freed at the end of the run).
TEST_F(DeviceBindingTest, MemoryPatternsLeavePlainRunsAllocatingOnlyTheirOutputs) {
  const std::string model = device_chain_model().bytes();
  Ephost::Session s(env(), model.data(), model.size(), options_with({"fakedev"}));
  std::vector<float> x = input_values(1), z = input_values(2);
  const auto want = cpu(model, {"x", "z"}, {x, z}, {"y1", "y2"});
  s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});  // takes the pattern's block
  for (int run = 0; run < 4; ++run) {
    const long allocs = fake().allocs(), live = fake().live();
    auto out = s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
    EXPECT_EQ(fake().allocs() - allocs, 2) << "y1 and y2 only";
    EXPECT_EQ(fake().live(), live) << "and they are freed when the run returns";
    expect_same_floats(out[0].to_vector<float>(), want[0], "y1");
    expect_same_floats(out[1].to_vector<float>(), want[1], "y2");
  }
}

}  // namespace
