// The trap is armed: fakedev's device memory is PROT_NONE outside the plugin's own calls, so a host
// that dereferenced a device buffer would crash (SIGSEGV) instead of passing silently. These death
// tests read a device tensor's buffer from the host (its address from the fakedev_last_allocation
// hook) and die; before that, the same memory was written and read back through the plugin (CopyTensor,
// a run), so the other device tests' not crashing means the host never touched device memory.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>

#include "device_support.h"

namespace {

using namespace ephost_test;

void* last_allocation(const FakeDevEnv& env) {
  void* lib = dlopen((env.plugin_dir() + "/libephost_test_fakedev.so").c_str(), RTLD_NOLOAD | RTLD_NOW);
  if (!lib) return nullptr;
  auto hook = reinterpret_cast<void* (*)()>(dlsym(lib, "fakedev_last_allocation"));
  void* p = hook ? hook() : nullptr;
  dlclose(lib);
  return p;
}

float host_read(const void* p) { return *static_cast<const volatile float*>(p); }

// Each writes and reads device memory through the plugin, says so on stderr, then reads it from the
// host: the death tests expect SIGSEGV after that message. Exit code 3: the setup went wrong.
void read_device_tensor_from_host() {
  FakeDevEnv env;
  Ephost::Tensor t = env.env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {kRows, kCols});
  void* buffer = last_allocation(env);
  std::vector<float> v = input_values(1);
  t.copy_from(host_tensor(v));
  if (read_back(t) != v || !buffer || t.data<float>() != nullptr) std::exit(3);
  std::fprintf(stderr, "written and read back through the plugin\n");
  std::fprintf(stderr, "host read %f\n", host_read(buffer));
  std::exit(0);
}

// A run computed into device memory (its outputs bound to the device); y2, the last value made, is
// the last buffer allocated.
void read_run_output_from_host() {
  FakeDevEnv env;
  const std::string model = device_chain_model().bytes();
  Ephost::Session s(env.env(), model.data(), model.size(), options_with({"fakedev"}));
  std::vector<float> x = input_values(1), z = input_values(2);
  Ephost::Session::IoBinding b(s);
  b.bind_input("x", host_tensor(x)).bind_input("z", host_tensor(z));
  b.bind_output_to_device("y1", "fakedev", 0).bind_output_to_device("y2", "fakedev", 0);
  b.run();
  Ephost::Tensor y2 = b.output("y2");
  void* buffer = last_allocation(env);
  Ephost::Session cpu(env.env(), model.data(), model.size(), options_with({"cpu"}));
  if (!buffer || read_back(y2) != cpu.run({"x", "z"}, {host_tensor(x), host_tensor(z)}, {"y2"})[0].to_vector<float>())
    std::exit(3);
  std::fprintf(stderr, "the run's output read back through the plugin\n");
  std::fprintf(stderr, "host read %f\n", host_read(buffer));
  std::exit(0);
}

// The mapping stays closed whatever is allocated in it: a freed buffer's address crashes as well.
void read_freed_device_memory_from_host() {
  FakeDevEnv env;
  void* buffer = nullptr;
  {
    Ephost::Tensor t = env.env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {4});
    buffer = last_allocation(env);
  }
  if (!buffer || env.fake().live() != 0) std::exit(3);
  std::fprintf(stderr, "freed\n");
  std::fprintf(stderr, "host read %f\n", host_read(buffer));
  std::exit(0);
}

class DeviceTrapDeathTest : public ::testing::Test {
 protected:
  // The env loads plugins and may start threads: the child runs the test from the start.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(DeviceTrapDeathTest, HostReadOfADeviceTensorCrashes) {
  EXPECT_EXIT(read_device_tensor_from_host(), ::testing::KilledBySignal(SIGSEGV),
              "written and read back through the plugin");
}

TEST_F(DeviceTrapDeathTest, HostReadOfARunsDeviceOutputCrashes) {
  EXPECT_EXIT(read_run_output_from_host(), ::testing::KilledBySignal(SIGSEGV),
              "the run's output read back through the plugin");
}

TEST_F(DeviceTrapDeathTest, HostReadOfFreedDeviceMemoryCrashes) {
  EXPECT_DEATH(read_freed_device_memory_from_host(), "freed");
}

}  // namespace
