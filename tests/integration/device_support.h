// Helpers for the device tests (tests/integration/device_*_test.cpp): an env over a temporary plugin
// folder holding the fakedev test plugin (tests/plugins/fake_device_plugin.cpp) and any others, the
// plugin's test hooks found in the library the env loaded, the C API's status as code and message,
// and the models the device tests run.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "test_support.h"

namespace ephost_test {

// The hooks fakedev exports (see its header comment), looked up in the copy of the library the env
// loaded: RTLD_NOLOAD finds it, never loads another.
class FakeDevHooks {
 public:
  explicit FakeDevHooks(const std::string& library_path) {
    lib_ = dlopen(library_path.c_str(), RTLD_NOLOAD | RTLD_NOW);
    if (!lib_) return;
    reset_ = reinterpret_cast<void (*)()>(dlsym(lib_, "fakedev_reset"));
    count_ = reinterpret_cast<long (*)(const char*)>(dlsym(lib_, "fakedev_count"));
    fail_ = reinterpret_cast<void (*)(const char*, long)>(dlsym(lib_, "fakedev_fail"));
  }
  ~FakeDevHooks() {
    if (lib_) dlclose(lib_);
  }
  FakeDevHooks(const FakeDevHooks&) = delete;
  FakeDevHooks& operator=(const FakeDevHooks&) = delete;
  // The library is loaded and exports every hook.
  bool ok() const { return lib_ && reset_ && count_ && fail_; }
  void reset() const { reset_(); }
  long count(const char* what) const { return count_(what); }
  void fail(const char* call, long after) const { fail_(call, after); }
  long h2d() const { return count("h2d"); }
  long d2h() const { return count("d2h"); }
  long d2d() const { return count("d2d"); }
  long kernels() const { return count("kernels"); }
  long allocs() const { return count("allocs"); }
  long live() const { return count("live_allocs"); }

 private:
  void* lib_ = nullptr;
  void (*reset_)() = nullptr;
  long (*count_)(const char*) = nullptr;
  void (*fail_)(const char*, long) = nullptr;
};

// A temporary plugin folder with fakedev and `others`, an env that discovers only it, and fakedev's
// hooks (counters reset).
class FakeDevEnv {
 public:
  explicit FakeDevEnv(const std::vector<std::string>& others = {}) {
    unsetenv("FAKEDEV_UNPROTECTED");  // the trap stays armed in tests (benchmarks may disarm it)
    std::vector<std::string> names{"ephost_test_fakedev"};
    names.insert(names.end(), others.begin(), others.end());
    install_plugins(plugins_, names);
    // Probed in process, so loaded at once: the hooks are looked up in the loaded library (a probe in
    // the scanner would leave it unloaded until first needed).
    const std::vector<std::string> dirs{plugins_.path()};
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, &dirs,
                                         std::vector<std::pair<std::string, std::string>>{
                                             {kEphostEnvOptionsPluginScan, "inprocess"}});
    hooks_ = std::make_unique<FakeDevHooks>(plugins_.file("libephost_test_fakedev.so"));
    if (hooks_->ok()) hooks_->reset();
  }
  ~FakeDevEnv() {
    hooks_.reset();  // before the env unloads the library
    env_.reset();
  }
  Ephost::Env& env() { return *env_; }
  const FakeDevHooks& fake() const { return *hooks_; }
  std::string plugin_dir() const { return plugins_.path(); }

 private:
  TempDir plugins_;
  std::unique_ptr<Ephost::Env> env_;
  std::unique_ptr<FakeDevHooks> hooks_;
};

// A failed C API call: its code and message ("" and EPHOST_OK for success). Releases the status.
struct CallResult {
  EphostStatusCode code = EPHOST_OK;
  std::string message;
  bool ok() const { return code == EPHOST_OK; }
};
inline CallResult call_result(EphostStatus* status) {
  CallResult r;
  if (!status) return r;
  r.code = Ephost::api().GetErrorCode(status);
  r.message = Ephost::api().GetErrorMessage(status);
  Ephost::api().ReleaseStatus(status);
  return r;
}
// The same for a wrapper call that throws Ephost::Exception.
template <typename Fn>
CallResult catch_result(Fn&& fn) {
  CallResult r;
  try {
    fn();
  } catch (const Ephost::Exception& e) {
    r.code = e.code();
    r.message = e.message();
  }
  return r;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Session options: providers listed in order ("fakedev", "fakedev:1", "cpu", ...), config entries.
inline Ephost::SessionOptions options_with(const std::vector<std::string>& providers,
                                           const std::vector<std::pair<std::string, std::string>>& config = {}) {
  Ephost::SessionOptions o;
  for (const auto& p : providers) o.append_provider(p);
  for (const auto& [k, v] : config) o.add_config(k, v);
  return o;
}

// ---- models ------------------------------------------------------------------------------------

constexpr int64_t kRows = 3, kCols = 5;

inline std::vector<float> row_constant(float base, float step) {
  std::vector<float> c(kCols);
  for (int64_t i = 0; i < kCols; ++i) c[static_cast<size_t>(i)] = base + step * static_cast<float>(i);
  return c;
}

// Two inputs, two outputs, two constant initializers, five nodes that fakedev takes (Add, Mul, Relu):
//   a = Add(x, c1); b = Mul(a, z); y1 = Relu(b); d = Mul(b, c2); y2 = Add(d, x)
// x is read by two nodes (add1, add2), b by two (relu, mul2).
inline ModelBuilder device_chain_model(int64_t rows = kRows) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {rows, kCols}).input("z", onnx::TensorProto::FLOAT, {rows, kCols});
  m.output("y1", onnx::TensorProto::FLOAT, {rows, kCols}).output("y2", onnx::TensorProto::FLOAT, {rows, kCols});
  m.initializer("c1", {kCols}, row_constant(-0.5f, 0.25f)).initializer("c2", {kCols}, row_constant(1.5f, -0.5f));
  m.node("Add", {"x", "c1"}, {"a"}, "add1");
  m.node("Mul", {"a", "z"}, {"b"}, "mul1");
  m.node("Relu", {"b"}, {"y1"}, "relu");
  m.node("Mul", {"b", "c2"}, {"d"}, "mul2");
  m.node("Add", {"d", "x"}, {"y2"}, "add2");
  return m;
}

// The same with symbolic rows ("N"), for runs with several shapes.
inline ModelBuilder device_chain_model_dynamic() { return device_chain_model(-1); }

// A graph split device -> CPU -> device when fakedev claims Add and Relu only:
//   a = Add(x, c1) [device]; m = Mul(a, c2) [cpu]; n = Sub(m, a) [cpu]; y = Relu(n) [device]
// a crosses to the host once (read by mul and sub), n crosses back once.
inline ModelBuilder split_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {kRows, kCols}).output("y", onnx::TensorProto::FLOAT, {kRows, kCols});
  m.initializer("c1", {kCols}, row_constant(-0.5f, 0.25f)).initializer("c2", {kCols}, row_constant(1.5f, -0.5f));
  m.node("Add", {"x", "c1"}, {"a"}, "add");
  m.node("Mul", {"a", "c2"}, {"m"}, "mul");
  m.node("Sub", {"m", "a"}, {"n"}, "sub");
  m.node("Relu", {"n"}, {"y"}, "relu");
  return m;
}

// A host step reading the graph input: s = Sub(x, c1) [cpu]; y = Relu(s) [device].
inline ModelBuilder host_reads_input_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {kRows, kCols}).output("y", onnx::TensorProto::FLOAT, {kRows, kCols});
  m.initializer("c1", {kCols}, row_constant(-0.5f, 0.25f));
  m.node("Sub", {"x", "c1"}, {"s"}, "sub");
  m.node("Relu", {"s"}, {"y"}, "relu");
  return m;
}

inline Ephost::Tensor host_tensor(std::vector<float>& data, int64_t rows = kRows) {
  return Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, kCols}, data.data(), data.size());
}

// Inputs that differ per `seed`, with negative and positive values (Relu matters).
inline std::vector<float> input_values(int seed, int64_t rows = kRows) {
  return ramp(static_cast<size_t>(rows * kCols), 0.07f + 0.01f * static_cast<float>(seed),
              -1.0f + 0.1f * static_cast<float>(seed));
}

// A device tensor's contents, read back through CopyTensor.
inline std::vector<float> read_back(const Ephost::Tensor& t) {
  Ephost::Tensor host = Ephost::Tensor::allocate(t.type(), t.shape());
  host.copy_from(t);
  return host.to_vector<float>();
}

// The device of a tensor as "<plugin>:<index>", or "host".
inline std::string location_of(const Ephost::Tensor& t) {
  EphostMemoryLocation where = EPHOST_LOCATION_HOST;
  const char* provider = nullptr;
  uint32_t device = 0;
  Ephost::check(Ephost::api().TensorGetLocation(t.get(), &where, &provider, &device));
  return where == EPHOST_LOCATION_HOST ? "host" : std::string(provider) + ":" + std::to_string(device);
}

inline void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], want[i]) << what << " element " << i;
}

// node -> provider and node -> device ("" when none) of the partition report's main graph.
inline std::map<std::string, std::string> node_providers(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["provider"];
  return out;
}
inline std::map<std::string, std::string> node_devices(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n["device"].is_null() ? "" : n["device"];
  return out;
}

}  // namespace ephost_test
