// The execution plan: the order in which the executor runs the steps of a PlanGraph.
#pragma once

#include <vector>

#include "plan/plan_graph.h"

namespace ephost::plan {

struct ExecutionPlan {
  std::vector<int> order;  // step ids; each step exactly once; every step after the producers of its inputs
};

// Topological order by Kahn's algorithm. Among steps that are ready at the same time the smallest
// step id runs first, so a graph whose steps are already in a valid order keeps that order, and the
// result never depends on hashing or memory addresses. O(steps + values + step inputs/outputs).
//
// Throws INVALID_GRAPH when a step names a value id outside the graph, when a value has two
// producers, when a step outputs a graph input, initializer or outer-scope value, and when the steps
// form a cycle: the message shows one cycle ('a' (#0) -> 'b' (#1) -> 'a' (#0)) and names the steps
// that cannot be ordered.
ExecutionPlan make_execution_plan(const PlanGraph& g);

}  // namespace ephost::plan
