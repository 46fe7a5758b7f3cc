// The planner's view of a partitioned graph: one plan step per partition group (a single node or a
// fused group), values indexed like the IR's; where each value lives (host memory or a device's) and
// the copies between them; and the plans the session makes from it. Shared by the session's plan
// stage and the planning benchmarks.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "partition/partition.h"
#include "plan/allocation_plan.h"
#include "plan/execution_plan.h"
#include "plan/plan_graph.h"

namespace ephost {

// All in host memory: plan value k is IR value k, plan step k is group k.
plan::PlanGraph make_plan_graph(const Graph& graph, const std::vector<PartitionGroup>& groups);

// One value copied to another location (MemcpyToHost/MemcpyFromHost in ONNX Runtime's terms): made
// once per value and destination, shared by every consumer there.
struct PlannedCopy {
  int source = -1;                  // plan value copied (an IR value)
  int target = -1;                  // plan value holding the copy
  int32_t device = 0;               // destination: plan device id (GraphPlan::devices)
  int step = -1;                    // the plan step that copies, -1 for a constant initializer
                                    // uploaded once when the session starts
  std::vector<std::string> consumers;  // the steps that read the copy, for the report
};

// Everything planned for one graph before it runs: where each value lives, the copies, the execution
// order (Kahn) and the allocation plan (lifetimes, reuse). Memory patterns are recorded per
// input-shape signature at run time, one block per device.
struct GraphPlan {
  plan::PlanGraph graph;  // values: the IR's (same ids), then the copies; steps: the groups, then copies
  plan::ExecutionPlan execution;
  plan::AllocationPlan allocation;
  // Plan device id -> device; id 0 is host memory (null).
  std::vector<const Device*> devices;
  std::vector<PlannedCopy> copies;
  // Per group: the plan value each kernel-context input of the step reads (its IR value, or the copy
  // on the step's device), -1 for an absent optional input.
  std::vector<std::vector<int>> step_inputs;
  // Per plan step: the copy it performs, -1 for a group's step.
  std::vector<int> copy_of_step;
};

// Plans `partition` of `graph`. `step_devices[k]` is the device whose memory group k's provider reads
// and writes, null for host memory (every step of CPU and ABI 1/2 providers). A tensor read by a step
// on another location than where it is made (its producer's device; host memory for graph inputs,
// initializers and outer-scope values) gets one copy per destination; a constant initializer's copy is
// uploaded once. Sequences and optionals stay in host memory. Graph outputs made on a device are
// copied out when the run returns (not a step). Plan step k is group k; copy steps follow.
// `step_in_place[k]`: group k's kernel's in-place pairs (ComputeUnit::in_place), none when absent.
GraphPlan plan_partitioned_graph(const Graph& graph, const GraphPartition& partition,
                                 const std::vector<const Device*>& step_devices, bool enable_mem_reuse,
                                 const std::vector<std::vector<plan::InPlacePair>>& step_in_place = {});

}  // namespace ephost
