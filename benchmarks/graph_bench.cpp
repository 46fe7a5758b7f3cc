// Partition + plan time on synthetic graphs of 1k..100k nodes (must grow linearly), session creation
// on the same graphs, and per-node dispatch overhead on a long chain of tiny ops.
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include "plugin_abi/handles.h"
#include "plan/plan_input.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "partition/partition.h"
#include "plan/allocation_plan.h"
#include "plan/execution_plan.h"
#include "plan/plan_graph.h"
#include "session/session.h"

namespace ephost {
namespace {

// x[1,8] -> n nodes; node i reads the previous value and, every third node, one from 2..5 steps back
// (Add), so the graph has branches and joins and lifetimes of different lengths.
std::string synthetic_model(int n, int64_t width = 8) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("synthetic");
  auto vi = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(width);
  };
  vi(g->add_input(), "x");
  std::vector<std::string> names{"x"};
  for (int i = 0; i < n; ++i) {
    auto* node = g->add_node();
    node->set_name("n" + std::to_string(i));
    std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    if (i % 3 == 2 && names.size() > 5) {
      node->set_op_type("Add");
      node->add_input(names.back());
      node->add_input(names[names.size() - 2 - static_cast<size_t>(i % 4)]);
    } else {
      node->set_op_type(i % 2 ? "Sigmoid" : "Relu");
      node->add_input(names.back());
    }
    node->add_output(out);
    names.push_back(out);
  }
  vi(g->add_output(), "y");
  std::string s;
  m.SerializeToString(&s);
  return s;
}

void BM_PartitionAndPlan(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  std::string bytes = synthetic_model(n);
  LoadOptions lo;
  auto model = load_model_from_buffer(bytes.data(), bytes.size(), lo);
  std::unique_ptr<Graph> graph = build_graph_ir(*model);
  const Graph& g = *graph;
  // One provider claiming every node as a single node, as the CPU plugin does.
  CapabilityQuery all = [](size_t, const GraphView& view) {
    std::vector<EphostCapability::Claim> claims;
    claims.reserve(view.nodes.size());
    for (const Node* node : view.nodes) claims.push_back({false, {node}, {}});
    return claims;
  };
  for (auto _ : state) {
    GraphPartition p = partition_graph(g, {"cpu"}, all, "");
    plan::PlanGraph pg = make_plan_graph(g, p.groups);
    auto order = plan::make_execution_plan(pg);
    auto alloc = plan::make_allocation_plan(pg, order, true);
    benchmark::DoNotOptimize(alloc);
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetComplexityN(n);
}
BENCHMARK(BM_PartitionAndPlan)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Complexity();

Env& bench_env() {
  static std::vector<std::string> none;
  static Env env(EPHOST_LOG_ERROR, &none);
  return env;
}

void BM_SessionCreate(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  std::string bytes = synthetic_model(n);
  SessionOptions o;
  o.optimization_level = 0;
  for (auto _ : state) {
    auto s = Session::create_from_buffer(bench_env(), bytes.data(), bytes.size(), o);
    benchmark::DoNotOptimize(s);
  }
  state.SetComplexityN(n);
}
BENCHMARK(BM_SessionCreate)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Complexity();

// Run time of a chain of tiny ops divided by its length: the host's per-node dispatch cost.
void BM_DispatchPerNode(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  std::string bytes = synthetic_model(n, 1);
  SessionOptions o;
  o.optimization_level = 0;
  o.intra_op_threads = 1;
  o.set("ep.cpu.fuse_elementwise", "0");  // one step per node: that is what this measures
  auto s = Session::create_from_buffer(bench_env(), bytes.data(), bytes.size(), o);
  Tensor x = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {1, 1});
  x.data_as<float>()[0] = 0.5f;
  for (auto _ : state) {
    auto out = s->run({"x"}, {x}, {"y"});
    benchmark::DoNotOptimize(out);
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DispatchPerNode)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ephost

BENCHMARK_MAIN();
