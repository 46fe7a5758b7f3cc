#include "plan/execution_plan.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "plan/graph_index.h"
#include "plan/ready_set.h"

namespace ephost::plan {

namespace {

// The steps that read each value, as one flat array (CSR): consumers of v are
// steps[begin[v] .. begin[v + 1]). A step reading a value twice is listed twice, matching the two
// in-degree counts it contributes.
struct Consumers {
  std::vector<int> begin;
  std::vector<int> steps;
};

Consumers find_consumers(const GraphIndex& index, size_t value_count) {
  Consumers c;
  c.begin.assign(value_count + 1, 0);
  for (int v : index.inputs) ++c.begin[static_cast<size_t>(v) + 1];
  for (size_t v = 0; v < value_count; ++v) c.begin[v + 1] += c.begin[v];
  c.steps.resize(static_cast<size_t>(c.begin.back()));
  std::vector<int> next(c.begin.begin(), c.begin.end() - 1);
  const int step_count = static_cast<int>(index.input_begin.size()) - 1;
  for (int s = 0; s < step_count; ++s)
    for (int v : index.inputs_of(s)) c.steps[static_cast<size_t>(next[static_cast<size_t>(v)]++)] = s;
  return c;
}

// Walks back from a step that could not be ordered, always to a producer that could not be ordered
// either (one exists: that is why the step was never ready), until a step repeats: that loop is a
// cycle. Returned in execution direction from its smallest step id, which is repeated at the end.
std::vector<int> find_cycle(const GraphIndex& index, const std::vector<int>& in_degree) {
  std::vector<int> seen_at(in_degree.size(), -1);
  std::vector<int> walk;
  int s = static_cast<int>(std::find_if(in_degree.begin(), in_degree.end(), [](int d) { return d > 0; }) -
                           in_degree.begin());
  while (seen_at[static_cast<size_t>(s)] < 0) {
    seen_at[static_cast<size_t>(s)] = static_cast<int>(walk.size());
    walk.push_back(s);
    for (int v : index.inputs_of(s)) {
      const int p = index.producer[static_cast<size_t>(v)];
      if (p >= 0 && in_degree[static_cast<size_t>(p)] > 0) {
        s = p;
        break;
      }
    }
  }
  std::vector<int> cycle(walk.begin() + seen_at[static_cast<size_t>(s)], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // same text every time
  cycle.push_back(cycle.front());
  return cycle;
}

std::string join_steps(const PlanGraph& g, const std::vector<int>& steps, const char* separator, size_t limit) {
  std::string text;
  for (size_t i = 0; i < steps.size() && i < limit; ++i) {
    if (i > 0) text += separator;
    text += step_label(g, steps[i]);
  }
  if (steps.size() > limit) text += fmt::format("{}... ({} more)", separator, steps.size() - limit);
  return text;
}

[[noreturn]] void fail_cycle(const PlanGraph& g, const GraphIndex& index, const std::vector<int>& in_degree) {
  std::vector<int> left;
  for (int s = 0; s < static_cast<int>(in_degree.size()); ++s)
    if (in_degree[static_cast<size_t>(s)] > 0) left.push_back(s);
  const std::vector<int> cycle = find_cycle(index, in_degree);
  constexpr size_t kMaxNamed = 20;
  fail(EPHOST_INVALID_GRAPH, "the graph has a cycle: {}; {} step(s) cannot be ordered: {}",
       join_steps(g, cycle, " -> ", kMaxNamed), left.size(), join_steps(g, left, ", ", kMaxNamed));
}

}  // namespace

ExecutionPlan make_execution_plan(const PlanGraph& g) {
  const GraphIndex index = index_graph(g);
  const Consumers consumers = find_consumers(index, g.values.size());
  const int step_count = static_cast<int>(g.steps.size());

  std::vector<int> in_degree(g.steps.size(), 0);
  for (int s = 0; s < step_count; ++s)
    for (int v : index.inputs_of(s))
      if (index.producer[static_cast<size_t>(v)] >= 0) ++in_degree[static_cast<size_t>(s)];

  ReadySet ready(step_count);
  for (int s = 0; s < step_count; ++s)
    if (in_degree[static_cast<size_t>(s)] == 0) ready.insert(s);

  ExecutionPlan plan;
  plan.order.reserve(g.steps.size());
  while (!ready.empty()) {
    const int s = ready.pop_min();
    plan.order.push_back(s);
    for (int v : index.outputs_of(s)) {
      for (int i = consumers.begin[static_cast<size_t>(v)]; i < consumers.begin[static_cast<size_t>(v) + 1]; ++i) {
        const int c = consumers.steps[static_cast<size_t>(i)];
        if (--in_degree[static_cast<size_t>(c)] == 0) ready.insert(c);
      }
    }
  }
  if (static_cast<int>(plan.order.size()) != step_count) fail_cycle(g, index, in_degree);
  return plan;
}

}  // namespace ephost::plan
