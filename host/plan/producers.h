// Checks a PlanGraph's ids and finds which step defines each value: the one walk over the steps that
// the execution plan and the allocation plan both start from.
#pragma once

#include <vector>

#include "plan/plan_graph.h"

namespace ephost::plan {

// producer[v] = the step that outputs value v, or -1 when no step does. Throws INVALID_GRAPH when a
// step names a value id outside the graph, when two steps (or one step twice) output the same value,
// or when a step outputs a graph input, an initializer or an outer-scope value.
std::vector<int> find_producers(const PlanGraph& g);

}  // namespace ephost::plan
