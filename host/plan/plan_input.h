// The planner's view of a partitioned graph: one plan step per partition group (a single node or a
// fused group), values indexed like the IR's; and the plans the session makes from it. Shared by the
// session's plan stage and the planning benchmarks.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "partition/partition.h"
#include "plan/allocation_plan.h"
#include "plan/execution_plan.h"
#include "plan/plan_graph.h"

namespace ephost {

plan::PlanGraph make_plan_graph(const Graph& graph, const std::vector<PartitionGroup>& groups);

// Everything planned for one graph before it runs: the execution order (Kahn) and the allocation plan
// (lifetimes, reuse). Memory patterns are recorded per input-shape signature at run time.
struct GraphPlan {
  plan::PlanGraph graph;
  plan::ExecutionPlan execution;
  plan::AllocationPlan allocation;
};

// Plans `partition` of `graph`: step k of the plans is partition group k.
GraphPlan plan_partitioned_graph(const Graph& graph, const GraphPartition& partition, bool enable_mem_reuse);

}  // namespace ephost
