#include "plan/graph_index.h"

#include "core/error.h"

namespace ephost::plan {

namespace {

void check_value_id(const PlanGraph& g, int step, int value, const char* role) {
  if (value < -1 || value >= static_cast<int>(g.values.size())) {
    fail(EPHOST_INVALID_GRAPH, "step {} has {} value id {}, but the graph has values 0..{} (or -1 for absent)",
         step_label(g, step), role, value, static_cast<int>(g.values.size()) - 1);
  }
}

bool defined_outside_steps(const PlanValue& v) { return v.is_graph_input || v.is_initializer || v.is_outer_scope; }

void claim_output(const PlanGraph& g, int step, int value, std::vector<int>& producer) {
  int& p = producer[static_cast<size_t>(value)];
  if (p >= 0) {
    fail(EPHOST_INVALID_GRAPH, "value {} is output by step {} and again by step {}; a value has one producer",
         value_label(g, value), step_label(g, p), step_label(g, step));
  }
  if (defined_outside_steps(g.values[static_cast<size_t>(value)])) {
    fail(EPHOST_INVALID_GRAPH, "step {} outputs value {}, which is a graph input, initializer or outer-scope value",
         step_label(g, step), value_label(g, value));
  }
  p = step;
}

}  // namespace

GraphIndex index_graph(const PlanGraph& g) {
  GraphIndex index;
  index.producer.assign(g.values.size(), -1);
  index.input_begin.reserve(g.steps.size() + 1);
  index.output_begin.reserve(g.steps.size() + 1);
  index.input_begin.push_back(0);
  index.output_begin.push_back(0);
  for (int s = 0; s < static_cast<int>(g.steps.size()); ++s) {
    const PlanStep& step = g.steps[static_cast<size_t>(s)];
    for (int v : step.inputs) {
      check_value_id(g, s, v, "an input");
      if (v >= 0) index.inputs.push_back(v);
    }
    for (int v : step.outputs) {
      check_value_id(g, s, v, "an output");
      if (v < 0) continue;
      claim_output(g, s, v, index.producer);
      index.outputs.push_back(v);
    }
    index.input_begin.push_back(static_cast<int>(index.inputs.size()));
    index.output_begin.push_back(static_cast<int>(index.outputs.size()));
  }
  return index;
}

}  // namespace ephost::plan
