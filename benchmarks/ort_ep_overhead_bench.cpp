// The ONNX Runtime adapter's cost per call (host/ort_ep, provider/ort_ep_provider.*): the same work done by
// an ONNX Runtime plugin EP through the adapter and by a native ephost plugin through plugin ABI 4.
//
// The model: N blocks of Add(x, c) -> Sigmoid on tiny tensors. Each plugin claims each Add (Sigmoid, which
// none takes, goes to the CPU plugin and cuts the chain), so a run makes N compute calls into the plugin.
// Fused groups of one node:
//   - ort:    ortadd (tests/plugins/ort_ep, C, ONNX Runtime's ABI): OrtKernelContext, GetInput /
//             GetTensorTypeAndShape / GetTensorData / GetOutput per call;
//   - native: beta (tests/plugins/beta_plugin.cpp, ephost SDK), which also records each call it gets
//             (a mutex and a vector push), so its figure is an upper bound of a native plugin's.
// Single-node (kernel) claims:
//   - ort kernels:    ortkern (tests/plugins/ort_ep/ort_kernel_ep.c): a kernel from its kernel registry
//                     (OrtKernelImpl::Compute), the same OrtKernelContext calls;
//   - native kernels: alpha (tests/plugins/alpha_plugin.cpp, ephost SDK, also recording each call).
// per_group is (run time) / N; the CPU plugin's Sigmoid steps are in all.
//
//   ephost_ort_ep_overhead_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace {

void set_type(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(1);
  t->mutable_shape()->add_dim()->set_dim_value(4);
}

std::string blocks_model(int n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("blocks");
  set_type(g->add_input(), "x");
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(1);
  c->add_dims(4);
  for (int i = 0; i < 4; ++i) c->add_float_data(0.01f);
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("add" + std::to_string(i));
    add->add_input(prev);
    add->add_input("c");
    add->add_output("a" + std::to_string(i));
    auto* sig = g->add_node();
    sig->set_op_type("Sigmoid");
    sig->set_name("sig" + std::to_string(i));
    sig->add_input("a" + std::to_string(i));
    prev = i + 1 == n ? "y" : "s" + std::to_string(i);
    sig->add_output(prev);
  }
  set_type(g->add_output(), "y");
  return m.SerializeAsString();
}

Ephost::Env& env_with(const char* plugin) {
  auto* created = new Ephost::Env(EPHOST_LOG_ERROR, std::vector<std::string>{});  // kept for the process
  created->register_plugin(plugin);
  return *created;
}

void run_blocks(benchmark::State& state, Ephost::Env& env, const char* provider) {
  const int n = static_cast<int>(state.range(0));
  const std::string bytes = blocks_model(n);
  Ephost::SessionOptions options;
  options.set_threads(1);
  options.append_provider(provider);
  Ephost::Session session(env, bytes.data(), bytes.size(), options);
  std::vector<float> x(4, 0.5f);
  const Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 4}, x.data(), x.size());
  for (auto _ : state) benchmark::DoNotOptimize(session.run({"x"}, {in}, {"y"}));
  // Seconds per fused group's step (printed with an SI prefix: 1.2u is 1.2 microseconds).
  state.counters["per_group"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void BM_OrtAdapter(benchmark::State& state) {
  static Ephost::Env& env = env_with(EPHOST_ORT_TEST_PLUGIN);
  run_blocks(state, env, "ortadd");
}
void BM_NativePlugin(benchmark::State& state) {
  static Ephost::Env& env = env_with(EPHOST_NATIVE_TEST_PLUGIN);
  run_blocks(state, env, "beta");
}
void BM_OrtKernelAdapter(benchmark::State& state) {
  static Ephost::Env& env = env_with(EPHOST_ORT_KERNEL_TEST_PLUGIN);
  run_blocks(state, env, "ortkern");
}
void BM_NativeKernelPlugin(benchmark::State& state) {
  static Ephost::Env& env = env_with(EPHOST_NATIVE_KERNEL_TEST_PLUGIN);
  run_blocks(state, env, "alpha");
}
BENCHMARK(BM_OrtAdapter)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativePlugin)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OrtKernelAdapter)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeKernelPlugin)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
