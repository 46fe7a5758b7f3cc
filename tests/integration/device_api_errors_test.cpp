// Application API 3's device calls, what they report and how they refuse misuse: GetDeviceCount and
// GetDevice (every field of fakedev's two devices), and a clear INVALID_ARGUMENT for a device index out
// of range, a device tensor of an unknown plugin, device or element type, CopyTensor between tensors
// that differ, a provider naming a device the plugin lacks, a binding used with another session, and
// the other misuses of a binding. A refused call changes nothing: the session runs right afterwards.
#include <gtest/gtest.h>

#include "device_support.h"

namespace {

using namespace ephost_test;

class DeviceApiErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.fake().ok()); }
  const EphostApi& api() { return Ephost::api(); }
  EphostEnv* env() { return env_.env().get(); }
  void expect_invalid(const CallResult& r, const std::string& message) {
    EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT) << r.message;
    EXPECT_EQ(r.message, message);
  }
  FakeDevEnv env_{{"ephost_test_alpha"}};
};

TEST_F(DeviceApiErrorsTest, GetDeviceReportsBothFakeDevicesAndRefusesAnIndexOutOfRange) {
  ASSERT_EQ(api().GetDeviceCount(env()), 2u) << "fakedev's two devices; alpha and the CPU plugin have none";
  EXPECT_EQ(api().GetDeviceCount(nullptr), 0u);
  const struct {
    int32_t type;
    const char* name;
  } want[] = {{EPHOST_DEVICE_GPU, "fake gpu"}, {EPHOST_DEVICE_NPU, "fake npu"}};
  for (uint32_t i = 0; i < 2; ++i) {
    EphostDeviceReport r{};
    r.struct_size = sizeof(r);
    ASSERT_TRUE(call_result(api().GetDevice(env(), i, &r)).ok());
    EXPECT_STREQ(r.plugin, "fakedev");
    EXPECT_EQ(r.index, i);
    EXPECT_EQ(r.device_type, want[i].type);
    EXPECT_STREQ(r.vendor, "ephost tests");
    EXPECT_STREQ(r.name, want[i].name);
    EXPECT_STREQ(r.driver_version, "1.0.0");
    EXPECT_STREQ(r.hardware_architecture, "fake-arch-1");
    EXPECT_EQ(r.memory_bytes, 64ull << 20);
    EXPECT_EQ(r.host_memory_usable, 0);
    EXPECT_NE(r.memory_kinds & EPHOST_MEMORY_KIND_BIT(EPHOST_MEMORY_DEVICE), 0u);
  }
  EphostDeviceReport r{};
  r.struct_size = sizeof(r);
  expect_invalid(call_result(api().GetDevice(env(), 2, &r)), "device index 2 out of range (2 devices)");
  expect_invalid(call_result(api().GetDevice(env(), 0, nullptr)), "out must not be NULL");
  EphostDeviceReport unset{};
  expect_invalid(call_result(api().GetDevice(env(), 0, &unset)), "out->struct_size is not set");
  // A caller built against a smaller report gets what its struct holds.
  EphostDeviceReport small{};
  small.struct_size = offsetof(EphostDeviceReport, vendor);
  small.vendor = "untouched";
  ASSERT_TRUE(call_result(api().GetDevice(env(), 1, &small)).ok());
  EXPECT_EQ(small.device_type, EPHOST_DEVICE_NPU);
  EXPECT_STREQ(small.vendor, "untouched");
}

TEST_F(DeviceApiErrorsTest, CreateDeviceTensorRefusesUnknownPluginDeviceAndType) {
  const int64_t shape[] = {kRows, kCols};
  EphostTensor* t = nullptr;
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "nosuch", 0, EPHOST_ELEMENT_FLOAT, shape, 2, &t)),
                 "no loaded plugin is named 'nosuch' ('ephost plugins' lists them)");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "alpha", 0, EPHOST_ELEMENT_FLOAT, shape, 2, &t)),
                 "plugin 'alpha' drives no device of its own");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "cpu", 0, EPHOST_ELEMENT_FLOAT, shape, 2, &t)),
                 "plugin 'cpu' drives no device of its own");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "fakedev", 2, EPHOST_ELEMENT_FLOAT, shape, 2, &t)),
                 "plugin 'fakedev' has 2 device(s); device 2 does not exist");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "fakedev", 0, EPHOST_ELEMENT_STRING, shape, 2, &t)),
                 "a string tensor cannot live in device memory (fakedev:0)");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), nullptr, 0, EPHOST_ELEMENT_FLOAT, shape, 2, &t)),
                 "provider_name must not be NULL");
  expect_invalid(call_result(api().CreateDeviceTensor(env(), "fakedev", 0, EPHOST_ELEMENT_FLOAT, nullptr, 2, &t)),
                 "shape is NULL but rank is 2");
  const int64_t negative[] = {-1, 3};
  const CallResult r = call_result(api().CreateDeviceTensor(env(), "fakedev", 0, EPHOST_ELEMENT_FLOAT, negative, 2, &t));
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT) << r.message;
  EXPECT_EQ(t, nullptr) << "no tensor made by a refused call";
  EXPECT_EQ(env_.fake().live(), 0) << "nothing allocated by a refused call";
}

TEST_F(DeviceApiErrorsTest, CopyTensorRefusesTensorsThatDiffer) {
  std::vector<float> v = input_values(1);
  Ephost::Tensor host = host_tensor(v);
  Ephost::Tensor d = env_.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kCols, kRows});
  Ephost::Tensor i32 = env_.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_INT32, {kRows, kCols});
  expect_invalid(catch_result([&] { d.copy_from(host); }),
                 "cannot copy CopyTensor (float [3,5]) into a float [5,3] tensor");
  expect_invalid(catch_result([&] { host.copy_from(d); }),
                 "cannot copy CopyTensor (float [5,3]) into a float [3,5] tensor");
  expect_invalid(catch_result([&] { i32.copy_from(host); }),
                 "cannot copy CopyTensor (float [3,5]) into a int32 [3,5] tensor");
  Ephost::Tensor seq = Ephost::Tensor::sequence(EPHOST_ELEMENT_FLOAT, {host});
  const CallResult r = catch_result([&] { d.copy_from(seq); });
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT) << r.message;
  EXPECT_TRUE(contains(r.message, "src")) << r.message;
  const CallResult where = call_result(api().TensorGetLocation(seq.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(where.code, EPHOST_INVALID_ARGUMENT) << where.message;
  EXPECT_EQ(env_.fake().h2d() + env_.fake().d2h(), 0) << "nothing copied by refused calls";
}

TEST_F(DeviceApiErrorsTest, ProviderNamingADeviceThePluginLacksIsRefused) {
  const std::string model = device_chain_model().bytes();
  auto create = [&](const Ephost::SessionOptions& o) {
    return catch_result([&] { Ephost::Session s(env_.env(), model.data(), model.size(), o); });
  };
  expect_invalid(create(options_with({"fakedev:9"})),
                 "provider 'fakedev:9': plugin 'fakedev' has 2 device(s) (fakedev:0..fakedev:1; 'ephost plugins' lists "
                 "them)");
  Ephost::SessionOptions o;
  o.append_provider_for_device("fakedev", 2);
  expect_invalid(create(o),
                 "provider 'fakedev:2': plugin 'fakedev' has 2 device(s) (fakedev:0..fakedev:1; 'ephost plugins' lists "
                 "them)");
  expect_invalid(create(options_with({"alpha:0"})), "provider 'alpha:0': plugin 'alpha' drives no device of its own");
  expect_invalid(catch_result([&] { options_with({"fakedev:x"}); }),
                 "provider 'fakedev:x': expected '<name>' or '<name>:<device index>'");
  expect_invalid(catch_result([&] { options_with({"fakedev:"}); }),
                 "provider 'fakedev:': expected '<name>' or '<name>:<device index>'");
  expect_invalid(create(options_with({"fakedev:0", "fakedev:1"})),
                 "provider 'fakedev' is listed twice in the session options");
  const CallResult unknown = create(options_with({"nosuch:0"}));
  EXPECT_EQ(unknown.code, EPHOST_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(unknown.message, "provider 'nosuch' is not available; loaded providers: ")) << unknown.message;
  EXPECT_EQ(env_.fake().live(), 0);
}

TEST_F(DeviceApiErrorsTest, BindingMisuseIsRefusedAndTheSessionStaysUsable) {
  const std::string model = device_chain_model().bytes();
  Ephost::Session s(env_.env(), model.data(), model.size(), options_with({"fakedev"}));
  Ephost::Session other(env_.env(), model.data(), model.size(), options_with({"fakedev"}));
  std::vector<float> x = input_values(1), z = input_values(2);
  Ephost::Session::IoBinding b(s);
  b.bind_input("x", host_tensor(x)).bind_input("z", host_tensor(z));

  expect_invalid(call_result(api().RunWithBinding(s.get(), b.get())), "no output is bound: bind at least one output");
  expect_invalid(catch_result([&] { b.bind_output_to_device("nope", "fakedev", 0); }), "the model has no output 'nope'");
  expect_invalid(catch_result([&] { b.bind_output_to_device("y1", "nosuch", 0); }),
                 "no loaded plugin is named 'nosuch' ('ephost plugins' lists them)");
  expect_invalid(catch_result([&] { b.bind_output_to_device("y1", "fakedev", 5); }),
                 "plugin 'fakedev' has 2 device(s); device 5 does not exist");
  b.bind_output_to_device("y1", "fakedev", 0);
  expect_invalid(catch_result([&] { b.output("y1"); }), "output 'y1' has no value yet: run first");
  expect_invalid(catch_result([&] { b.output("y2"); }), "output 'y2' is not bound");
  expect_invalid(call_result(api().RunWithBinding(other.get(), b.get())), "the binding belongs to another session");

  // A bound output tensor of the wrong shape.
  Ephost::Tensor wrong = env_.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kCols, kRows});
  b.bind_output("y2", wrong);
  const CallResult r = call_result(api().RunWithBinding(s.get(), b.get()));
  EXPECT_EQ(r.code, EPHOST_INVALID_ARGUMENT) << r.message;
  EXPECT_TRUE(contains(r.message, "'y2'")) << r.message;
  EXPECT_TRUE(contains(r.message, "[3,5]") && contains(r.message, "[5,3]")) << r.message;

  // An input that is not the model's.
  Ephost::Session::IoBinding c(s);
  c.bind_input("x", host_tensor(x)).bind_input("z", host_tensor(z)).bind_input("w", host_tensor(z));
  c.bind_output_to_device("y1", "", 0);
  const CallResult unknown_input = call_result(api().RunWithBinding(s.get(), c.get()));
  EXPECT_EQ(unknown_input.code, EPHOST_INVALID_ARGUMENT) << unknown_input.message;
  EXPECT_TRUE(contains(unknown_input.message, "'w'")) << unknown_input.message;

  // Still usable: the same binding with the right output tensor, and a plain run.
  Ephost::Tensor right = env_.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  b.bind_output("y2", right);
  b.run();
  Ephost::Session cpu(env_.env(), model.data(), model.size(), options_with({"cpu"}));
  auto want = cpu.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  expect_same_floats(read_back(b.output("y1")), want[0].to_vector<float>(), "y1");
  expect_same_floats(read_back(right), want[1].to_vector<float>(), "y2");
  auto plain = s.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y1", "y2"});
  expect_same_floats(plain[1].to_vector<float>(), want[1].to_vector<float>(), "y2 (Run)");
}

}  // namespace
