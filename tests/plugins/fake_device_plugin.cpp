// Test plugin "fakedev" (plugin ABI 3): two fake devices whose memory the host must never touch, in
// the habit of Vulkan-Loader's fake drivers.
//
// Device memory. Each device owns one anonymous mapping that is PROT_NONE except while one of this
// plugin's own functions runs (copies, stream synchronization, kernels): any host access to a device
// buffer crashes the test instead of passing silently. Buffers are carved from the mapping (first fit).
//
// Devices: 0 "fake gpu" (GPU), 1 "fake npu" (NPU), each FAKEDEV_DEVICE_MB (default 64) MiB.
// FAKEDEV_UNPROTECTED=1 leaves device memory open all the time, for benchmarks that measure the host's
// cost without the plugin's mprotect calls (never in tests: it disarms the trap).
//
// Work is truly asynchronous: a copy or kernel given a stream is only queued, and runs when the host
// synchronizes that stream (in queue order). A host that reads a device-to-host copy before
// synchronizing reads stale bytes; one that frees memory under queued work gets a test failure.
//
// Provider options: `claim` — comma-separated ops it takes among Add, Mul, Relu (default these three) and
// ReduceMax (over axis 0 with keepdims only; for benchmarks whose output is smaller than their input);
// `mode` — "kernels" (one kernel per node, default) or "fused" (connected claimed nodes as fused
// groups). Float32 tensors; Add and Mul broadcast like numpy.
//
// Exported test hooks (the tests dlsym them from the loaded library): fakedev_reset(),
// fakedev_count(name) for "h2d", "d2h", "d2d", "kernels", "allocs", "live_allocs", "streams" (the
// successful calls of copy_to_device, copy_to_host, copy_between_devices, kernel_compute and compute,
// device_allocate, device_allocate less device_free, stream_create, as the plugin observer in front of
// its table counts them: tools/plugin_observer/plugin_interposer.h); fakedev_last_allocation() is the address of the last buffer allocated (for tests
// showing that the host touching it crashes); fakedev_fail(call, after) makes `call` (allocate, copy_to_device, copy_to_host,
// copy_between_devices, stream_create, stream_synchronize, compute) fail after `after` more successes.
//
// For runs in a provider host process, where the tests cannot reach the hooks: FAKEDEV_JOURNAL names a
// file that every successful copy_to_device, copy_to_host, device_allocate, stream_synchronize and compute
// (kernel or fused) appends a line to ("fakedev <call> <pid>"), from every process; and a compute that finds the file
// FAKEDEV_CRASH_FILE names removes it and aborts its process (a crash in compute, once; in copy_to_device
// instead when FAKEDEV_CRASH_CALL=copy_to_device: a crash while a tensor crosses). The provider
// options `fault` and `fault_while` inject a fault of injected_fault.hpp into provider_create,
// get_capability or compile, on every call while they hold ("compile" is create_kernel in mode
// "kernels", compile in mode "fused").
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "elementwise.hpp"
#include "injected_fault.hpp"
#include "ephost/sdk/plugin.hpp"
#include "plugin_interposer.h"

namespace {

using namespace ephost::sdk;
using ephost_test::BinaryOp;

// ---- failure injection ------------------------------------------------------------------------------

struct Hooks {
  std::mutex mutex;
  std::map<std::string, long> fail_after;  // call -> successes left before it fails (-1: never)
};
Hooks& hooks() {
  static Hooks h;
  return h;
}
// Throws when `call` is set to fail now.
void maybe_fail(const std::string& call) {
  std::lock_guard<std::mutex> lock(hooks().mutex);
  auto it = hooks().fail_after.find(call);
  if (it == hooks().fail_after.end() || it->second < 0) return;
  if (it->second-- == 0) {
    it->second = -1;
    fail(EPHOST_EP_FAIL, "fakedev: injected failure of " + call);
  }
}

// ---- the journal and the crash for provider host processes -----------------------------------------

void journal(const char* call) {
  const char* path = std::getenv("FAKEDEV_JOURNAL");
  if (!path || !*path) return;
  const std::string line = std::string("fakedev ") + call + " " + std::to_string(::getpid()) + "\n";
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const ssize_t written = ::write(fd, line.data(), line.size());  // one write: lines of processes never mix
  (void)written;
  ::close(fd);
}

// In `call` ("compute", or what FAKEDEV_CRASH_CALL names: "copy_to_device"), once per crash file.
void maybe_crash(const char* call = "compute") {
  const char* path = std::getenv("FAKEDEV_CRASH_FILE");
  const char* when = std::getenv("FAKEDEV_CRASH_CALL");
  if (std::string(when && *when ? when : "compute") != call) return;
  if (path && *path && ::unlink(path) == 0) std::abort();
}

// ---- device memory: a PROT_NONE mapping opened only inside the plugin's own calls ------------------

struct DeviceMemory {
  char* base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> used;  // offset -> bytes
};

class Memory {
 public:
  static Memory& instance() {
    static Memory m;
    return m;
  }
  // While an Access lives, device memory is readable and writable (for every thread: the protection is
  // per mapping, so it stays open while any call of this plugin runs).
  class Access {
   public:
    Access() { Memory::instance().open(); }
    ~Access() { Memory::instance().close(); }
  };
  char* address(uint32_t device, const DeviceBuffer& b) const {
    auto* p = static_cast<char*>(b.handle) + b.offset;
    const DeviceMemory& d = devices_[device];
    if (p < d.base || p >= d.base + d.size) fail(EPHOST_INVALID_ARGUMENT, "fakedev: a buffer not of this device");
    return p;
  }
  DeviceBuffer allocate(uint32_t device, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    DeviceMemory& d = devices_.at(device);
    const size_t size = (bytes + 63) / 64 * 64;
    size_t at = 0;
    for (const auto& [offset, n] : d.used) {
      if (offset - at >= size) break;
      at = offset + n;
    }
    if (at + size > d.size)
      fail(EPHOST_FAIL, "fakedev: out of device memory (" + std::to_string(bytes) + " bytes asked)");
    d.used[at] = size;
    last_allocation_ = d.base + at;
    return DeviceBuffer{d.base + at, 0};
  }
  void free(uint32_t device, const DeviceBuffer& b) {
    std::lock_guard<std::mutex> lock(alloc_mutex_);
    DeviceMemory& d = devices_.at(device);
    d.used.erase(static_cast<size_t>(static_cast<char*>(b.handle) - d.base));
  }
  size_t device_count() const { return devices_.size(); }
  void* last_allocation() const { return last_allocation_; }

 private:
  Memory() {
    const char* mb = std::getenv("FAKEDEV_DEVICE_MB");
    const size_t size = static_cast<size_t>(mb ? std::atol(mb) : 64) << 20;
    const char* unprotected = std::getenv("FAKEDEV_UNPROTECTED");
    unprotected_ = unprotected && std::string(unprotected) == "1";
    for (int i = 0; i < 2; ++i) {
      void* p = mmap(nullptr, size, unprotected_ ? PROT_READ | PROT_WRITE : PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) std::abort();  // a test plugin: no device memory, no test
      devices_.push_back(DeviceMemory{static_cast<char*>(p), size, {}});
    }
  }
  void open() {
    if (unprotected_) return;
    std::lock_guard<std::mutex> lock(protect_mutex_);
    if (open_++ == 0)
      for (auto& d : devices_) mprotect(d.base, d.size, PROT_READ | PROT_WRITE);
  }
  void close() {
    if (unprotected_) return;
    std::lock_guard<std::mutex> lock(protect_mutex_);
    if (--open_ == 0)
      for (auto& d : devices_) mprotect(d.base, d.size, PROT_NONE);
  }
  std::vector<DeviceMemory> devices_;
  std::mutex alloc_mutex_;
  std::mutex protect_mutex_;
  int open_ = 0;
  bool unprotected_ = false;
  std::atomic<void*> last_allocation_{nullptr};
};

// ---- streams: queues of work run at synchronize ----------------------------------------------------

struct Stream {
  uint32_t device;
  std::mutex mutex;
  std::deque<std::function<void()>> queue;
};

// Runs `work` now (no stream) or queues it on `stream`.
void run_or_queue(EphostStream* stream, std::function<void()> work) {
  if (!stream) {
    Memory::Access access;
    work();
    return;
  }
  auto* s = reinterpret_cast<Stream*>(stream);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->queue.push_back(std::move(work));
}

class FakeDevices : public Devices {
 public:
  std::vector<DeviceDescription> enumerate() override {
    DeviceDescription gpu, npu;
    gpu.type = EPHOST_DEVICE_GPU;
    gpu.vendor = "ephost tests";
    gpu.name = "fake gpu";
    gpu.driver_version = "1.0.0";
    gpu.hardware_architecture = "fake-arch-1";
    npu = gpu;
    npu.type = EPHOST_DEVICE_NPU;
    npu.name = "fake npu";
    for (DeviceDescription* d : {&gpu, &npu}) d->memory_bytes = 64ull << 20;
    return {gpu, npu};
  }
  DeviceBuffer allocate(uint32_t device, EphostMemoryKind kind, uint64_t bytes) override {
    if (kind != EPHOST_MEMORY_DEVICE) fail(EPHOST_INVALID_ARGUMENT, "fakedev: only device memory is offered");
    maybe_fail("allocate");
    DeviceBuffer b = Memory::instance().allocate(device, bytes);
    journal("device_allocate");
    return b;
  }
  void free(uint32_t device, EphostMemoryKind, DeviceBuffer buffer) noexcept override {
    try {
      Memory::instance().free(device, buffer);
    } catch (...) {
    }
  }
  void copy_to_device(uint32_t device, EphostStream* stream, const void* src, DeviceBuffer dst,
                      uint64_t bytes) override {
    maybe_fail("copy_to_device");
    maybe_crash("copy_to_device");
    run_or_queue(stream, [=] { std::memcpy(Memory::instance().address(device, dst), src, bytes); });
    journal("copy_to_device");
  }
  void copy_to_host(uint32_t device, EphostStream* stream, DeviceBuffer src, void* dst, uint64_t bytes) override {
    maybe_fail("copy_to_host");
    run_or_queue(stream, [=] { std::memcpy(dst, Memory::instance().address(device, src), bytes); });
    journal("copy_to_host");
  }
  bool has_device_to_device_copy() const override { return true; }
  void copy_between_devices(EphostStream* stream, uint32_t src_device, DeviceBuffer src, uint32_t dst_device,
                            DeviceBuffer dst, uint64_t bytes) override {
    maybe_fail("copy_between_devices");
    run_or_queue(stream, [=] {
      std::memcpy(Memory::instance().address(dst_device, dst), Memory::instance().address(src_device, src), bytes);
    });
  }
  bool has_streams() const override { return true; }
  EphostStream* create_stream(uint32_t device) override {
    maybe_fail("stream_create");
    auto* s = new Stream;
    s->device = device;
    return reinterpret_cast<EphostStream*>(s);
  }
  void synchronize(EphostStream* stream) override {
    auto* s = reinterpret_cast<Stream*>(stream);
    std::deque<std::function<void()>> work;
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      work.swap(s->queue);
    }
    maybe_fail("stream_synchronize");
    Memory::Access access;
    for (auto& w : work) w();
    journal("stream_synchronize");
  }
  void release_stream(EphostStream* stream) noexcept override { delete reinterpret_cast<Stream*>(stream); }
};

// ---- kernels: elementwise float ops on device buffers ----------------------------------------------

enum class Op { kAdd, kMul, kRelu, kReduceMax };

bool op_of(const std::string& name, Op* op) {
  if (name == "Add") *op = Op::kAdd;
  else if (name == "Mul") *op = Op::kMul;
  else if (name == "Relu") *op = Op::kRelu;
  else if (name == "ReduceMax") *op = Op::kReduceMax;
  else return false;
  return true;
}

std::vector<int64_t> shape_of(const EphostTensorMemory& m) { return std::vector<int64_t>(m.shape, m.shape + m.rank); }

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// One node's computation on host pointers into device memory (valid inside Memory::Access).
void apply(Op op, const std::vector<const float*>& in, const std::vector<std::vector<int64_t>>& in_shapes,
           float* out, const std::vector<int64_t>& out_shape) {
  if (op == Op::kRelu) {
    ephost_test::unary(ephost_test::UnaryOp::kRelu, in[0], elements(out_shape), out);
    return;
  }
  if (op == Op::kReduceMax) {  // over axis 0, kept as a dimension of 1
    const int64_t row = elements(out_shape), rows = in_shapes[0].empty() ? 1 : in_shapes[0][0];
    std::memcpy(out, in[0], static_cast<size_t>(row) * sizeof(float));
    for (int64_t r = 1; r < rows; ++r)
      for (int64_t i = 0; i < row; ++i) out[i] = std::max(out[i], in[0][r * row + i]);
    return;
  }
  ephost_test::broadcast_binary(op == Op::kAdd ? BinaryOp::kAdd : BinaryOp::kMul, in[0], in_shapes[0], in[1],
                                in_shapes[1], out, out_shape);
}

std::vector<int64_t> output_shape(Op op, const std::vector<std::vector<int64_t>>& in_shapes) {
  if (op == Op::kReduceMax) {
    std::vector<int64_t> shape = in_shapes[0];
    if (!shape.empty()) shape[0] = 1;
    return shape;
  }
  return op == Op::kRelu ? in_shapes[0] : ephost_test::broadcast_shape(in_shapes[0], in_shapes[1]);
}

size_t input_count(Op op) { return op == Op::kRelu || op == Op::kReduceMax ? 1 : 2; }

// ReduceMax is taken over axis 0 with keepdims only (opset 13's attributes), in float.
bool takes(const Node& node, Op op) {
  if (op == Op::kReduceMax && (node.attr_ints("axes") != std::vector<int64_t>{0} || node.attr_int("keepdims", 1) != 1))
    return false;
  return ephost_test::is_float_node(node, input_count(op));
}

class NodeKernel : public Kernel {
 public:
  NodeKernel(Op op, uint32_t device) : op_(op), device_(device) {}
  void compute(KernelContext& ctx) override {
    maybe_fail("compute");
    maybe_crash();
    journal("compute");
    const size_t n = input_count(op_);
    std::vector<EphostTensorMemory> in;
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < n; ++i) {
      in.push_back(ctx.input_memory(i));
      if (in.back().location != EPHOST_LOCATION_DEVICE || in.back().device != device_)
        fail(EPHOST_EP_FAIL, "fakedev: input " + std::to_string(i) + " is not in this device's memory");
      shapes.push_back(shape_of(in.back()));
    }
    const std::vector<int64_t> out_shape = output_shape(op_, shapes);
    const EphostTensorMemory out = ctx.output_device(0, EPHOST_ELEMENT_FLOAT, out_shape);
    std::vector<DeviceBuffer> buffers;
    for (const auto& m : in) buffers.push_back(m.buffer);
    const uint32_t device = device_;
    const Op op = op_;
    run_or_queue(ctx.stream(), [=] {
      std::vector<const float*> ptrs;
      for (const auto& b : buffers) ptrs.push_back(reinterpret_cast<const float*>(Memory::instance().address(device, b)));
      apply(op, ptrs, shapes, reinterpret_cast<float*>(Memory::instance().address(device, out.buffer)), out_shape);
    });
  }

 private:
  Op op_;
  uint32_t device_;
};

// A fused group: its nodes in order, each reading group inputs or earlier nodes' results.
class FusedGroup : public CompiledGroup {
 public:
  struct Step {
    Op op;
    std::vector<int> inputs;  // >= 0: group input index; < 0: -(k+1) = result of step k
  };
  FusedGroup(std::vector<Step> steps, std::vector<int> outputs, uint32_t device)
      : steps_(std::move(steps)), outputs_(std::move(outputs)), device_(device) {}
  void compute(void*, KernelContext& ctx) override {
    maybe_fail("compute");
    maybe_crash();
    journal("compute");
    std::vector<EphostTensorMemory> in;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) in.push_back(ctx.input_memory(i));
    // Shapes first (the host needs the outputs' shapes now); the arithmetic may run later.
    std::vector<std::vector<int64_t>> shapes;
    for (const Step& s : steps_) {
      std::vector<std::vector<int64_t>> in_shapes;
      for (int k : s.inputs) in_shapes.push_back(k >= 0 ? shape_of(in[static_cast<size_t>(k)]) : shapes[static_cast<size_t>(-k - 1)]);
      shapes.push_back(output_shape(s.op, in_shapes));
    }
    std::vector<EphostTensorMemory> out;
    for (size_t o = 0; o < outputs_.size(); ++o)
      out.push_back(ctx.output_device(o, EPHOST_ELEMENT_FLOAT, shapes[static_cast<size_t>(outputs_[o])]));
    std::vector<DeviceBuffer> in_buffers, out_buffers;
    std::vector<std::vector<int64_t>> in_shapes;
    for (const auto& m : in) {
      in_buffers.push_back(m.buffer);
      in_shapes.push_back(shape_of(m));
    }
    for (const auto& m : out) out_buffers.push_back(m.buffer);
    const uint32_t device = device_;
    const auto steps = steps_;
    const auto outputs = outputs_;
    run_or_queue(ctx.stream(), [=] {
      std::vector<std::vector<float>> results(steps.size());
      for (size_t k = 0; k < steps.size(); ++k) {
        std::vector<const float*> ptrs;
        std::vector<std::vector<int64_t>> step_shapes;
        for (int i : steps[k].inputs) {
          if (i >= 0) {
            ptrs.push_back(reinterpret_cast<const float*>(Memory::instance().address(device, in_buffers[static_cast<size_t>(i)])));
            step_shapes.push_back(in_shapes[static_cast<size_t>(i)]);
          } else {
            ptrs.push_back(results[static_cast<size_t>(-i - 1)].data());
            step_shapes.push_back(shapes[static_cast<size_t>(-i - 1)]);
          }
        }
        results[k].resize(static_cast<size_t>(elements(shapes[k])));
        apply(steps[k].op, ptrs, step_shapes, results[k].data(), shapes[k]);
      }
      for (size_t o = 0; o < outputs.size(); ++o) {
        const auto& r = results[static_cast<size_t>(outputs[o])];
        std::memcpy(Memory::instance().address(device, out_buffers[o]), r.data(), r.size() * sizeof(float));
      }
    });
  }

 private:
  std::vector<Step> steps_;
  std::vector<int> outputs_;
  uint32_t device_;
};

class FakeProvider : public Provider {
 public:
  FakeProvider(const Options& options, uint32_t device) : device_(device), fault_(options) {
    fault_.at("provider_create");
    std::stringstream claims(option(options, "claim", "Add,Mul,Relu"));
    for (std::string op; std::getline(claims, op, ',');)
      if (!op.empty()) claim_.insert(op);
    fused_ = option(options, "mode", "kernels") == "fused";
  }
  void get_capability(const Graph& graph, Capability& capability) override {
    fault_.at("get_capability");
    const NodeDependencies dependencies(graph);
    std::vector<bool> wanted(dependencies.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      const Node& node = dependencies.nodes()[i];
      Op op;
      wanted[i] = claim_.count(node.op_type()) && op_of(node.op_type(), &op) && takes(node, op);
    }
    if (!fused_) {
      for (size_t i = 0; i < wanted.size(); ++i)
        if (wanted[i]) capability.add_node(dependencies.nodes()[i]);
      return;
    }
    for (const auto& group : acyclic_groups(dependencies, wanted))
      capability.add_fused_group(dependencies.nodes_at(group));
  }
  std::unique_ptr<Kernel> create_kernel(const Node& node) override {
    fault_.at("compile");
    Op op;
    if (!op_of(node.op_type(), &op)) fail(EPHOST_NOT_IMPLEMENTED, "fakedev: no kernel for " + node.op_type());
    return std::make_unique<NodeKernel>(op, device_);
  }
  std::unique_ptr<CompiledGroup> compile(const Graph& group, const std::string&) override {
    fault_.at("compile");
    std::map<std::string, int> produced;  // value -> step (encoded -(k+1))
    std::map<std::string, int> inputs;
    for (size_t i = 0; i < group.num_inputs(); ++i) inputs[group.input(i).name()] = static_cast<int>(i);
    std::vector<FusedGroup::Step> steps;
    for (const Node& node : group.nodes()) {
      FusedGroup::Step s;
      if (!op_of(node.op_type(), &s.op)) fail(EPHOST_NOT_IMPLEMENTED, "fakedev: cannot fuse " + node.op_type());
      for (size_t i = 0; i < node.num_inputs(); ++i) {
        const std::string name = node.input(i).name();
        auto p = produced.find(name);
        s.inputs.push_back(p != produced.end() ? p->second : inputs.at(name));
      }
      produced[node.output(0).name()] = -static_cast<int>(steps.size()) - 1;
      steps.push_back(s);
    }
    std::vector<int> outputs;
    for (size_t o = 0; o < group.num_outputs(); ++o) outputs.push_back(-produced.at(group.output(o).name()) - 1);
    return std::make_unique<FusedGroup>(std::move(steps), std::move(outputs), device_);
  }

 private:
  uint32_t device_;
  ephost_test::InjectedFault fault_;
  std::set<std::string> claim_;
  bool fused_ = false;
};

struct Describe {
  Description operator()() const {
    Description d;
    d.name = "fakedev";
    d.vendor = "ephost tests";
    d.version = "1.0.0";
    d.device_type = EPHOST_DEVICE_GPU;
    d.default_priority = 150;
    return d;
  }
};
struct Create {
  std::unique_ptr<FakeProvider> operator()(const Options& options, uint32_t device) const {
    return std::make_unique<FakeProvider>(options, device);
  }
};

}  // namespace

EPHOST_DEFINE_DEVICE_PLUGIN_ENTRY(fakedev_sdk_negotiate, Describe, Create, FakeDevices)

// The SDK's table with the plugin observer in front: it counts the calls fakedev_count reports.
extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation);
extern "C" EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation) {
  EphostStatus* status = fakedev_sdk_negotiate(negotiation);
  if (status == nullptr && negotiation != nullptr && negotiation->plugin != nullptr) {
    ephost::observer::ObserverOptions options;
    options.plugin_name = "fakedev";
    negotiation->plugin = ephost::observer::observe_plugin(negotiation->plugin, negotiation->host_api, options);
  }
  return status;
}

// ---- test hooks ------------------------------------------------------------------------------------

extern "C" EPHOST_EXPORT void fakedev_reset() {
  ephost::observer::reset_observed_counts();  // what is allocated stays allocated
  std::lock_guard<std::mutex> lock(hooks().mutex);
  hooks().fail_after.clear();
}
extern "C" EPHOST_EXPORT long fakedev_count(const char* name) {
  const ephost::observer::ObservedCounts counts = ephost::observer::observed_counts();
  auto succeeded = [&](const char* function) {
    auto calls = counts.calls.find(function);
    auto failures = counts.failures.find(function);
    return static_cast<long>((calls == counts.calls.end() ? 0 : calls->second) -
                             (failures == counts.failures.end() ? 0 : failures->second));
  };
  const std::string what = name;
  if (what == "h2d") return succeeded("copy_to_device");
  if (what == "d2h") return succeeded("copy_to_host");
  if (what == "d2d") return succeeded("copy_between_devices");
  if (what == "kernels") return succeeded("kernel_compute") + succeeded("compute");
  if (what == "allocs") return succeeded("device_allocate");
  if (what == "live_allocs") return static_cast<long>(counts.live_device_buffers);
  if (what == "streams") return succeeded("stream_create");
  return 0;
}
extern "C" EPHOST_EXPORT void fakedev_fail(const char* call, long after) {
  std::lock_guard<std::mutex> lock(hooks().mutex);
  hooks().fail_after[call] = after;
}
extern "C" EPHOST_EXPORT void* fakedev_last_allocation() { return Memory::instance().last_allocation(); }
