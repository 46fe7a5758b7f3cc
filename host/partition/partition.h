// Partitioning (seed: ONNX Runtime's GraphPartitioner): providers are asked for their capability in
// registration-priority order; first come, first served; what nobody claims is an error naming the
// nodes (the session puts the built-in CPU plugin last, so normally it takes the rest).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "abi/handles.h"
#include "graph/graph.h"

namespace ephost {

// One unit of execution: a single node run by a provider's kernel, or a fused group it compiles.
struct PartitionGroup {
  size_t provider = 0;
  bool fused = false;
  std::vector<const Node*> nodes;   // topological order
  std::string name;                 // fused groups: "<provider>_fused_<graph>_<k>"; singles: node name
  std::unique_ptr<GraphView> view;  // fused groups: what compile receives
};

// A claim that was refused or trimmed, and why (reported, never silent).
struct PartitionNote {
  size_t provider = 0;
  std::vector<std::string> nodes;
  std::string reason;
  bool refused = true;  // false: the claim was accepted after trimming
};

struct GraphPartition {
  const Graph* graph = nullptr;
  std::vector<int> node_provider;  // per Node::index: provider index
  std::vector<PartitionGroup> groups;
  std::vector<PartitionNote> notes;
};

// Asks `provider` for its claims on `view`. Throws (or returns an error message through `error`)
// when the plugin's get_capability fails; the partitioner reports that and moves on.
using CapabilityQuery = std::function<std::vector<EphostCapability::Claim>(size_t provider, const GraphView& view)>;

// Partitions one graph (not its subgraphs: the session recurses). `provider_names` in priority order.
// Unclaimed nodes: INVALID_GRAPH with `unclaimed_hint` appended (what the user can do about it).
GraphPartition partition_graph(const Graph& graph, const std::vector<std::string>& provider_names,
                               const CapabilityQuery& query, const std::string& unclaimed_hint);

// The view of a fused group over `nodes` of `graph` (inputs, outputs, initializers computed).
std::unique_ptr<GraphView> make_group_view(const Graph& graph, const std::vector<const Node*>& nodes,
                                           const std::string& name);

}  // namespace ephost
