// Planning cost per step: execution order + allocation plan + memory pattern on synthetic graphs of
// 1k, 10k and 100k steps (a chain with branches: each step reads 1-3 of the latest values, now and
// then a skip connection up to 64 values back). Planning should grow linearly: the per_step counter
// (seconds per step, "250n" = 250 ns) should stay roughly flat, and the fitted BigO is N.
//
// BM_Plan lists the steps in node order, as the executor builds them from an ONNX graph (whose nodes
// are stored topologically sorted); BM_PlanShuffledIds gives the steps random ids, so every phase
// walks the graph in random memory order (the cache-unfriendly worst case).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "plan/allocation_plan.h"
#include "plan/execution_plan.h"
#include "plan/memory_pattern.h"

namespace {

using namespace ephost::plan;

PlanGraph synthetic_graph(int steps, bool shuffle_ids) {
  std::mt19937 rng(12345);
  static const int64_t kSizes[] = {4096, 16384, 65536, 262144};
  PlanGraph g;
  PlanValue input;
  input.is_graph_input = true;
  input.static_bytes = kSizes[0];
  g.values.push_back(input);
  for (int s = 0; s < steps; ++s) {
    const int produced = static_cast<int>(g.values.size());
    PlanStep step;
    const int reads = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < reads && r < produced; ++r) step.inputs.push_back(produced - 1 - r);
    if (rng() % 16 == 0) step.inputs.push_back(produced - 1 - static_cast<int>(rng() % std::min(produced, 64)));
    PlanValue out;
    out.static_bytes = kSizes[rng() % 4];
    out.is_graph_output = s + 1 == steps;
    step.outputs.push_back(produced);
    g.values.push_back(out);
    g.steps.push_back(std::move(step));
  }
  if (shuffle_ids) std::shuffle(g.steps.begin(), g.steps.end(), rng);
  return g;
}

std::vector<int64_t> observed_sizes(const PlanGraph& g, const AllocationPlan& plan) {
  std::vector<int64_t> observed(g.values.size(), -1);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (plan.values[v].kind == AllocKind::kAllocate || plan.values[v].kind == AllocKind::kReuse)
      observed[v] = g.values[v].static_bytes;
  return observed;
}

void report_per_step(benchmark::State& state) {
  state.SetComplexityN(state.range(0));
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void plan_everything(benchmark::State& state, bool shuffle_ids) {
  const PlanGraph g = synthetic_graph(static_cast<int>(state.range(0)), shuffle_ids);
  const std::vector<int64_t> observed = observed_sizes(g, make_allocation_plan(g, make_execution_plan(g), true));
  for (auto _ : state) {
    const ExecutionPlan order = make_execution_plan(g);
    const AllocationPlan plan = make_allocation_plan(g, order, true);
    const MemoryPattern pattern = make_memory_pattern(g, plan, observed);
    benchmark::DoNotOptimize(pattern.peak_bytes);
  }
  report_per_step(state);
}

void BM_Plan(benchmark::State& state) { plan_everything(state, false); }
void BM_PlanShuffledIds(benchmark::State& state) { plan_everything(state, true); }

void BM_ExecutionPlan(benchmark::State& state) {
  const PlanGraph g = synthetic_graph(static_cast<int>(state.range(0)), false);
  for (auto _ : state) benchmark::DoNotOptimize(make_execution_plan(g).order.data());
  report_per_step(state);
}

void BM_AllocationPlan(benchmark::State& state) {
  const PlanGraph g = synthetic_graph(static_cast<int>(state.range(0)), false);
  const ExecutionPlan order = make_execution_plan(g);
  for (auto _ : state) benchmark::DoNotOptimize(make_allocation_plan(g, order, true).values.data());
  report_per_step(state);
}

void BM_MemoryPattern(benchmark::State& state) {
  const PlanGraph g = synthetic_graph(static_cast<int>(state.range(0)), false);
  const AllocationPlan plan = make_allocation_plan(g, make_execution_plan(g), true);
  const std::vector<int64_t> observed = observed_sizes(g, plan);
  for (auto _ : state) benchmark::DoNotOptimize(make_memory_pattern(g, plan, observed).peak_bytes);
  report_per_step(state);
}

void steps(benchmark::internal::Benchmark* b) {
  b->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond)->Complexity(benchmark::oN);
}

}  // namespace

BENCHMARK(BM_Plan)->Apply(steps);
BENCHMARK(BM_PlanShuffledIds)->Apply(steps);
BENCHMARK(BM_ExecutionPlan)->Apply(steps);
BENCHMARK(BM_AllocationPlan)->Apply(steps);
BENCHMARK(BM_MemoryPattern)->Apply(steps);

BENCHMARK_MAIN();
