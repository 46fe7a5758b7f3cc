// The planner's view of a partitioned graph: one plan step per partition group (a single node or a
// fused group), values indexed like the IR's. Shared by the executor and the planning benchmarks.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "partition/partition.h"
#include "plan/plan_graph.h"

namespace ephost {

// Call before the groups' views are moved elsewhere (fused groups read their boundary from them).
plan::PlanGraph make_plan_graph(const Graph& graph, const std::vector<PartitionGroup>& groups);

}  // namespace ephost
