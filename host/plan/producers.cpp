#include "plan/producers.h"

#include "core/error.h"

namespace ephost::plan {

namespace {

void check_value_id(const PlanGraph& g, int step, int value, const char* role) {
  if (value < -1 || value >= static_cast<int>(g.values.size())) {
    fail(EPHOST_INVALID_GRAPH, "step {} has {} value id {}, but the graph has values 0..{} (or -1 for absent)",
         step_label(g, step), role, value, static_cast<int>(g.values.size()) - 1);
  }
}

bool defined_outside_steps(const PlanValue& v) {
  return v.is_graph_input || v.is_initializer || v.is_outer_scope;
}

}  // namespace

std::vector<int> find_producers(const PlanGraph& g) {
  std::vector<int> producer(g.values.size(), -1);
  for (int s = 0; s < static_cast<int>(g.steps.size()); ++s) {
    for (int v : g.steps[static_cast<size_t>(s)].inputs) check_value_id(g, s, v, "an input");
    for (int v : g.steps[static_cast<size_t>(s)].outputs) {
      check_value_id(g, s, v, "an output");
      if (v < 0) continue;
      int& p = producer[static_cast<size_t>(v)];
      if (p >= 0) {
        fail(EPHOST_INVALID_GRAPH, "value {} is output by step {} and again by step {}; a value has one producer",
             value_label(g, v), step_label(g, p), step_label(g, s));
      }
      if (defined_outside_steps(g.values[static_cast<size_t>(v)])) {
        fail(EPHOST_INVALID_GRAPH,
             "step {} outputs value {}, which is a graph input, initializer or outer-scope value", step_label(g, s),
             value_label(g, v));
      }
      p = s;
    }
  }
  return producer;
}

}  // namespace ephost::plan
