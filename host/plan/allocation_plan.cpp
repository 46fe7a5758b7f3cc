#include "plan/allocation_plan.h"

#include <algorithm>

#include "core/error.h"
#include "plan/graph_index.h"
#include "plan/reuse_pool.h"

namespace ephost::plan {

namespace {

// position[s] = where step s runs in the order. Throws unless the order lists every step once.
std::vector<int> positions_in(const PlanGraph& g, const ExecutionPlan& order) {
  if (order.order.size() != g.steps.size()) {
    fail(EPHOST_INVALID_ARGUMENT, "the execution order lists {} steps but the graph has {}", order.order.size(),
         g.steps.size());
  }
  std::vector<int> position(g.steps.size(), -1);
  for (int p = 0; p < static_cast<int>(order.order.size()); ++p) {
    const int s = order.order[static_cast<size_t>(p)];
    if (s < 0 || s >= static_cast<int>(g.steps.size())) {
      fail(EPHOST_INVALID_ARGUMENT, "the execution order has step id {} at position {}; the graph has steps 0..{}", s,
           p, static_cast<int>(g.steps.size()) - 1);
    }
    if (position[static_cast<size_t>(s)] >= 0) {
      fail(EPHOST_INVALID_ARGUMENT, "the execution order lists step {} twice (positions {} and {})", step_label(g, s),
           position[static_cast<size_t>(s)], p);
    }
    position[static_cast<size_t>(s)] = p;
  }
  return position;
}

bool is_executor_owned(AllocKind kind) { return kind == AllocKind::kAllocate || kind == AllocKind::kReuse; }

AllocKind kind_of(const PlanValue& v, bool produced) {
  if (v.is_graph_input || v.is_outer_scope) return AllocKind::kPreExisting;
  if (v.is_initializer) return AllocKind::kStaticInitializer;
  if (produced && v.is_graph_output) return AllocKind::kGraphOutput;
  return AllocKind::kAllocate;
}

void assign_kinds(const PlanGraph& g, const std::vector<int>& producer, AllocationPlan& plan) {
  for (int v = 0; v < static_cast<int>(g.values.size()); ++v) {
    const PlanValue& value = g.values[static_cast<size_t>(v)];
    const bool produced = producer[static_cast<size_t>(v)] >= 0;
    plan.values[static_cast<size_t>(v)].kind = kind_of(value, produced);
    if (value.is_graph_output && !produced && plan.values[static_cast<size_t>(v)].kind == AllocKind::kAllocate) {
      fail(EPHOST_INVALID_GRAPH, "graph output {} is output by no step and is not a graph input or initializer",
           value_label(g, v));
    }
  }
}

void check_readable(const PlanGraph& g, const AllocationPlan& plan, const std::vector<int>& producer,
                    const std::vector<int>& position, int v, int reader, int p) {
  const int prod = producer[static_cast<size_t>(v)];
  if (prod >= 0 && position[static_cast<size_t>(prod)] >= p) {
    fail(EPHOST_INVALID_ARGUMENT,
         "the execution order runs step {} at position {}, before step {} (position {}) that outputs its input {}",
         step_label(g, reader), p, step_label(g, prod), position[static_cast<size_t>(prod)], value_label(g, v));
  }
  if (prod < 0 && is_executor_owned(plan.values[static_cast<size_t>(v)].kind)) {
    fail(EPHOST_INVALID_GRAPH, "step {} reads value {}, which no step outputs and which is not a graph input, "
         "initializer or outer-scope value", step_label(g, reader), value_label(g, v));
  }
}

void compute_lifetimes(const PlanGraph& g, const ExecutionPlan& order, const GraphIndex& index,
                       const std::vector<int>& position, AllocationPlan& plan) {
  for (int p = 0; p < static_cast<int>(order.order.size()); ++p) {
    const int s = order.order[static_cast<size_t>(p)];
    for (int v : index.inputs_of(s)) {
      check_readable(g, plan, index.producer, position, v, s, p);
      plan.values[static_cast<size_t>(v)].last_use_step = p;
    }
    for (int v : index.outputs_of(s)) {
      plan.values[static_cast<size_t>(v)].def_step = p;
      plan.values[static_cast<size_t>(v)].last_use_step = p;  // raised by later readers
    }
  }
  const int last_position = static_cast<int>(order.order.size()) - 1;
  for (auto& value : plan.values)
    if (value.kind == AllocKind::kGraphOutput) value.last_use_step = last_position;
}

// The step's input `in` may give its buffer to output `out` of the same step (an in-place pair).
bool can_take_in_place(const PlanGraph& g, const PlanStep& step, const AllocationPlan& plan, int p, int in, int out,
                       const std::vector<bool>& dead) {
  if (in < 0 || out < 0 || dead[static_cast<size_t>(in)]) return false;
  const ValuePlan& input = plan.values[static_cast<size_t>(in)];
  if (plan.values[static_cast<size_t>(out)].kind != AllocKind::kAllocate || !is_executor_owned(input.kind) ||
      input.def_step < 0 || input.last_use_step != p)
    return false;
  if (g.values[static_cast<size_t>(in)].device != g.values[static_cast<size_t>(out)].device) return false;
  // Read twice by the step (Add(x, x)): the other read would see the bytes being written.
  return std::count(step.inputs.begin(), step.inputs.end(), in) == 1;
}

// The step's in-place pairs whose input dies here: the output takes that buffer. The input is marked
// dead (the pool never sees it) but stays in release_after, so its slot is emptied after the step.
void assign_in_place(const PlanGraph& g, int s, int p, AllocationPlan& plan, std::vector<bool>& dead) {
  const PlanStep& step = g.steps[static_cast<size_t>(s)];
  for (const InPlacePair& pair : step.in_place) {
    if (pair.input < 0 || pair.output < 0 || static_cast<size_t>(pair.input) >= step.inputs.size() ||
        static_cast<size_t>(pair.output) >= step.outputs.size())
      continue;
    const int in = step.inputs[static_cast<size_t>(pair.input)];
    const int out = step.outputs[static_cast<size_t>(pair.output)];
    if (!can_take_in_place(g, step, plan, p, in, out, dead)) continue;
    ValuePlan& output = plan.values[static_cast<size_t>(out)];
    output.kind = AllocKind::kReuse;
    output.reuse_of = in;
    output.in_place = true;
    dead[static_cast<size_t>(in)] = true;
    plan.release_after[static_cast<size_t>(p)].push_back(in);
  }
}

// Walks the order: each step's outputs first take a free buffer (if reuse is on), then the values
// whose last use is this step die. Deaths are recorded in release_after and filtered at the end,
// once it is known which buffers were handed over.
void assign_buffers(const PlanGraph& g, const ExecutionPlan& order, const GraphIndex& index, bool enable_reuse,
                    AllocationPlan& plan) {
  ReusePool pool(g);
  std::vector<bool> dead(g.values.size(), false);
  std::vector<bool> handed_over(g.values.size(), false);
  for (int p = 0; p < static_cast<int>(order.order.size()); ++p) {
    const int s = order.order[static_cast<size_t>(p)];
    if (enable_reuse) assign_in_place(g, s, p, plan, dead);
    for (int v : index.outputs_of(s)) {
      if (plan.values[static_cast<size_t>(v)].kind != AllocKind::kAllocate) continue;
      if (!enable_reuse || !pool.has_provable_size(v)) continue;
      const int previous_owner = pool.take(v);
      if (previous_owner < 0) continue;
      plan.values[static_cast<size_t>(v)].kind = AllocKind::kReuse;
      plan.values[static_cast<size_t>(v)].reuse_of = previous_owner;
      handed_over[static_cast<size_t>(previous_owner)] = true;
    }
    auto die_if_last_use = [&](int v) {
      if (dead[static_cast<size_t>(v)]) return;
      const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
      if (!is_executor_owned(vp.kind) || vp.last_use_step != p) return;
      dead[static_cast<size_t>(v)] = true;
      plan.release_after[static_cast<size_t>(p)].push_back(v);
      if (enable_reuse && pool.has_provable_size(v)) pool.release(v);
    };
    for (int v : index.inputs_of(s)) die_if_last_use(v);
    for (int v : index.outputs_of(s)) die_if_last_use(v);
  }
  for (auto& released : plan.release_after) {
    released.erase(std::remove_if(released.begin(), released.end(),
                                  [&](int v) { return handed_over[static_cast<size_t>(v)]; }),
                   released.end());
  }
}

}  // namespace

const char* alloc_kind_name(AllocKind kind) {
  switch (kind) {
    case AllocKind::kAllocate: return "allocate";
    case AllocKind::kReuse: return "reuse";
    case AllocKind::kPreExisting: return "pre-existing";
    case AllocKind::kStaticInitializer: return "static initializer";
    case AllocKind::kGraphOutput: return "graph output";
  }
  return "unknown";
}

AllocationPlan make_allocation_plan(const PlanGraph& g, const ExecutionPlan& order, bool enable_reuse) {
  const GraphIndex index = index_graph(g);
  const std::vector<int> position = positions_in(g, order);
  AllocationPlan plan;
  plan.values.resize(g.values.size());
  plan.release_after.resize(order.order.size());
  assign_kinds(g, index.producer, plan);
  compute_lifetimes(g, order, index, position, plan);
  assign_buffers(g, order, index, enable_reuse, plan);
  return plan;
}

std::string describe(const AllocationPlan& plan, const PlanGraph& g) {
  std::string text;
  size_t allocated = 0;
  size_t reused = 0;
  for (int v = 0; v < static_cast<int>(plan.values.size()); ++v) {
    const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
    allocated += vp.kind == AllocKind::kAllocate && vp.def_step >= 0;
    reused += vp.kind == AllocKind::kReuse;
    text += fmt::format("  {}: {}", value_label(g, v), alloc_kind_name(vp.kind));
    if (vp.kind == AllocKind::kReuse) text += (vp.in_place ? " in place of " : " of ") + value_label(g, vp.reuse_of);
    text += fmt::format(", def {}, last use {}\n", vp.def_step, vp.last_use_step);
  }
  return fmt::format("allocation plan: {} values, {} buffers allocated, {} values reuse a buffer\n", plan.values.size(),
                     allocated, reused) + text;
}

}  // namespace ephost::plan
