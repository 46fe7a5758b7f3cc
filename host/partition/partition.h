// Partitioning (seed: ONNX Runtime's GraphPartitioner): providers are asked for their capability in
// registration-priority order; first come, first served; what nobody claims is an error naming the
// nodes (the session puts the built-in CPU plugin last, so normally it takes the rest).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plugin_abi/handles.h"
#include "graph/graph.h"

namespace ephost {

// A compute unit a provider made (provider/provider.h): here, one it loaded from a cached EPContext
// before partitioning (Provider::load_context). Opaque to the partitioner, which only passes it on to
// the compiled step; the last owner gives it back to its provider.
class ComputeUnit;
class Provider;

// One unit of execution: a single node run by a provider's kernel, or a fused group it compiles (or
// loaded from a cached context: `preloaded`).
struct PartitionGroup {
  size_t provider = 0;
  bool fused = false;
  std::shared_ptr<ComputeUnit> preloaded;  // EPContext nodes: what context_load made
  // Runs `preloaded` in place of the provider at index `provider` (whose device it shares): the source
  // nodes of an EPContext node whose provider fell back (session/context_source_fallback.h). Null: that
  // provider runs the group.
  const Provider* runner = nullptr;
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

struct PartitionOptions {
  // Appended to the INVALID_GRAPH for unclaimed nodes: what the user can do about it.
  std::string unclaimed_hint;
  // Fused groups are named "<fused_name_prefix><provider>_<k>"; with no prefix
  // "<provider>_fused_<graph>_<k>". EPContext generation names them after the model.
  std::string fused_name_prefix;
  // Nodes given to a provider before any provider is asked: EPContext nodes whose context the
  // provider loaded. Each becomes a one-node fused group running `compute`.
  struct Preassigned {
    const Node* node = nullptr;
    size_t provider = 0;
    std::shared_ptr<ComputeUnit> compute;
    const Provider* runner = nullptr;  // PartitionGroup::runner
  };
  std::vector<Preassigned> preassigned;
  // Claims a provider may not make: the original nodes of a cached context that provider rejected
  // go to the providers after it. Null: no exclusions.
  std::function<bool(size_t provider, const Node& node)> excluded;
  // Providers not asked at all, by index, each with why ("" or past the end: asked): an isolated device
  // provider that fell back (session/provider_fallback.h). The error for unclaimed nodes lists them
  // apart from the providers asked.
  std::vector<std::string> left_out;
};

// Partitions one graph (not its subgraphs: the session recurses). `provider_names` in priority order.
// Unclaimed nodes: INVALID_GRAPH with options.unclaimed_hint appended.
GraphPartition partition_graph(const Graph& graph, const std::vector<std::string>& provider_names,
                               const CapabilityQuery& query, const PartitionOptions& options);
inline GraphPartition partition_graph(const Graph& graph, const std::vector<std::string>& provider_names,
                                      const CapabilityQuery& query, const std::string& unclaimed_hint) {
  PartitionOptions options;
  options.unclaimed_hint = unclaimed_hint;
  return partition_graph(graph, provider_names, query, options);
}

// The view of a fused group over `nodes` of `graph` (inputs, outputs, initializers computed).
std::unique_ptr<GraphView> make_group_view(const Graph& graph, const std::vector<const Node*>& nodes,
                                           const std::string& name);

}  // namespace ephost
