// Device dispatch (plugin ABI 3) on the fakedev test plugin (tests/plugins/fake_device_plugin.cpp):
//
//  - per-node cost: a chain of N tiny nodes (Relu, Mul by a constant, Add of an earlier value) run on
//    fakedev against the same chain on the CPU plugin (one step per node), ns_per_node;
//  - with and without binding: the chain run with host tensors in and out (one copy in, one copy out
//    per run) and with device tensors bound in and out (IoBinding: no copy), ns per run at small N;
//  - per-copy cost: CopyTensor host->device and device->host of a small tensor, and copies inside a
//    run: a chain alternating a device node and a CPU node, every edge a copy (ns_per_node against the
//    same chain all on the device and all on the CPU; the difference is the copies' cost).
//
// fakedev opens its device memory (mprotect) around each of its own calls that touch it, which costs
// more than the host's bookkeeping; FAKEDEV_UNPROTECTED=1 leaves it open, so the figures are the host's
// and the plugin's bookkeeping only. The machines are shared and noisy: compare ratios within one run.
//
//   ephost_device_dispatch_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace {

constexpr int64_t kWidth = 1;  // elements per tensor: tiny, so that dispatch is what is measured

Ephost::Env& env() {
  static Ephost::Env* e = [] {
    auto* created = new Ephost::Env(EPHOST_LOG_ERROR, std::vector<std::string>{});
    created->register_plugin(EPHOST_FAKEDEV_PLUGIN);
    return created;
  }();
  return *e;
}

void set_type(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(1);
  t->mutable_shape()->add_dim()->set_dim_value(kWidth);
}

// x[1,W] -> n nodes -> y. `alternate`: Relu, Mul(c), Relu, Mul(c), ... (a device node and a CPU node in
// turn when fakedev claims Relu only). Otherwise graph_bench's shape: node i reads the previous value
// and, every third node, one from 2..5 steps back (Add), else Mul by c or Relu; branches and joins
// give lifetimes of different lengths.
std::string chain_model(int n, bool alternate) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  set_type(g->add_input(), "x");
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(kWidth);
  for (int64_t i = 0; i < kWidth; ++i) c->add_float_data(1.0f);
  std::vector<std::string> names{"x"};
  for (int i = 0; i < n; ++i) {
    auto* node = g->add_node();
    node->set_name("n" + std::to_string(i));
    const std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    if (!alternate && i % 3 == 2 && names.size() > 5) {
      node->set_op_type("Add");
      node->add_input(names.back());
      node->add_input(names[names.size() - 2 - static_cast<size_t>(i % 4)]);
    } else if (i % 2) {
      node->set_op_type("Mul");
      node->add_input(names.back());
      node->add_input("c");
    } else {
      node->set_op_type("Relu");
      node->add_input(names.back());
    }
    node->add_output(out);
    names.push_back(out);
  }
  set_type(g->add_output(), "y");
  std::string s;
  m.SerializeToString(&s);
  return s;
}

enum class Where { kCpu, kDevice, kAlternating };

std::unique_ptr<Ephost::Session> make_session(const std::string& model, Where where) {
  Ephost::SessionOptions o;
  o.set_threads(1);
  o.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
  o.add_config("ep.cpu.fuse_elementwise", "0");  // one step per node on the CPU too
  if (where == Where::kCpu) {
    o.append_provider("cpu");
  } else {
    o.append_provider("fakedev");
    if (where == Where::kAlternating) o.add_config("ep.fakedev.claim", "Relu");
  }
  return std::make_unique<Ephost::Session>(env(), model.data(), model.size(), o);
}

void per_node_counter(benchmark::State& state, int n) {
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Run with a host tensor in and out.
void run_chain(benchmark::State& state, Where where, bool alternate) {
  const int n = static_cast<int>(state.range(0));
  const std::string model = chain_model(n, alternate);
  auto s = make_session(model, where);
  std::vector<float> x(kWidth, 0.5f);
  const Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, kWidth}, x.data(), x.size());
  for (auto _ : state) {
    auto out = s->run({"x"}, {in}, {"y"});
    benchmark::DoNotOptimize(out);
  }
  per_node_counter(state, n);
}

void BM_HostChain(benchmark::State& state) { run_chain(state, Where::kCpu, false); }
void BM_DeviceChain(benchmark::State& state) { run_chain(state, Where::kDevice, false); }
BENCHMARK(BM_HostChain)->Arg(1)->Arg(10)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeviceChain)->Arg(1)->Arg(10)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The device chain with x and y bound as device tensors: no copy per run.
void BM_DeviceChainBound(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string model = chain_model(n, false);
  auto s = make_session(model, Where::kDevice);
  std::vector<float> x(kWidth, 0.5f);
  Ephost::Tensor xd = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {1, kWidth});
  xd.copy_from(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, kWidth}, x.data(), x.size()));
  Ephost::Tensor yd = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {1, kWidth});
  Ephost::Session::IoBinding binding(*s);
  binding.bind_input("x", xd).bind_output("y", yd);
  for (auto _ : state) binding.run();
  per_node_counter(state, n);
}
BENCHMARK(BM_DeviceChainBound)->Arg(1)->Arg(10)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Host tensors bound (IoBinding with host memory): the binding's own cost against plain Run.
void BM_DeviceChainBoundHost(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string model = chain_model(n, false);
  auto s = make_session(model, Where::kDevice);
  std::vector<float> x(kWidth, 0.5f);
  Ephost::Tensor xh = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, kWidth}, x.data(), x.size());
  Ephost::Tensor yh = Ephost::Tensor::allocate(EPHOST_ELEMENT_FLOAT, {1, kWidth});
  Ephost::Session::IoBinding binding(*s);
  binding.bind_input("x", xh).bind_output("y", yh);
  for (auto _ : state) binding.run();
  per_node_counter(state, n);
}
BENCHMARK(BM_DeviceChainBoundHost)->Arg(1)->Arg(10)->Unit(benchmark::kMicrosecond);

// Every edge crosses between fakedev (Relu) and the CPU plugin (Mul): n - 1 copies inside the run, plus
// x in. Against the same alternating chain all on the device and all on the CPU.
void BM_CrossingChain(benchmark::State& state) {
  run_chain(state, Where::kAlternating, true);
  state.counters["copies_per_run"] = static_cast<double>(state.range(0));
}
void BM_AlternatingChainAllDevice(benchmark::State& state) { run_chain(state, Where::kDevice, true); }
void BM_AlternatingChainAllHost(benchmark::State& state) { run_chain(state, Where::kCpu, true); }
BENCHMARK(BM_CrossingChain)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AlternatingChainAllDevice)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AlternatingChainAllHost)->Arg(1000)->Unit(benchmark::kMicrosecond);

// CopyTensor of a small tensor: host -> device, device -> host (synchronous, no stream).
void BM_CopyToDevice(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> v(static_cast<size_t>(n), 1.0f);
  Ephost::Tensor h = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {n}, v.data(), v.size());
  Ephost::Tensor d = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {n});
  for (auto _ : state) d.copy_from(h);
}
void BM_CopyToHost(benchmark::State& state) {
  const int64_t n = state.range(0);
  Ephost::Tensor h = Ephost::Tensor::allocate(EPHOST_ELEMENT_FLOAT, {n});
  Ephost::Tensor d = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {n});
  d.copy_from(h);
  for (auto _ : state) h.copy_from(d);
}
void BM_CopyBetweenDevices(benchmark::State& state) {
  const int64_t n = state.range(0);
  Ephost::Tensor a = env().device_tensor("fakedev", 0, EPHOST_ELEMENT_FLOAT, {n});
  Ephost::Tensor b = env().device_tensor("fakedev", 1, EPHOST_ELEMENT_FLOAT, {n});
  for (auto _ : state) b.copy_from(a);
}
BENCHMARK(BM_CopyToDevice)->Arg(1)->Arg(256);
BENCHMARK(BM_CopyToHost)->Arg(1)->Arg(256);
BENCHMARK(BM_CopyBetweenDevices)->Arg(1)->Arg(256);

}  // namespace

BENCHMARK_MAIN();
