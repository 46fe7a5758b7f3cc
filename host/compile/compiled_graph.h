// Compiling a partitioned graph (seed: ONNX Runtime's session initialization, "compile" after
// partitioning): every partition group becomes a step the executor runs -- a kernel the provider
// creates for a single node (kernel_create), or a compute unit for a fused group (compile, or what
// context_load made from a cached EPContext) with its state (create_state), all made through the
// provider door (provider/provider.h). The CompiledGraph owns those units; destroying one gives it back
// to its provider.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "graph/graph.h"
#include "partition/partition.h"
#include "provider/provider.h"

namespace ephost {

struct CompiledStep {
  std::string name;
  const Provider* provider = nullptr;
  const Node* node = nullptr;  // the node of a single-node step; the first node of a fused group
  bool fused = false;
  // What the provider runs (Provider::compute): a kernel, or a fused group's unit with its state.
  // Shared with the partition for units loaded from a cached context.
  std::shared_ptr<ComputeUnit> unit;
  const GraphView* view = nullptr;  // fused groups: the group's boundary (owned by the partition)
  std::vector<const Value*> inputs;   // kernel-context order; nullptr for absent optional inputs
  std::vector<const Value*> outputs;  // kernel-context order; nullptr for omitted optional outputs
};

class CompiledGraph {
 public:
  CompiledGraph(const Graph& graph, GraphPartition partition) : graph_(graph), partition_(std::move(partition)) {}
  // Gives every compute unit and kernel back to its provider, in reverse creation order.
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  const Graph& graph() const { return graph_; }
  const GraphPartition& partition() const { return partition_; }
  // One step per partition group, in group order.
  const std::vector<std::unique_ptr<CompiledStep>>& steps() const { return steps_; }

 private:
  friend std::unique_ptr<CompiledGraph> compile_graph(const Graph&, GraphPartition,
                                                      const std::vector<Provider*>&,
                                                      const std::function<void(const CompiledStep&)>&);
  const Graph& graph_;
  GraphPartition partition_;
  std::vector<std::unique_ptr<CompiledStep>> steps_;
};

// Compiles one graph's partition (not its subgraphs: the session compiles each graph). `providers`
// are indexed like the partition's provider indices. `step_done` (may be empty) is called after each
// step is made, with it. Throws EP_FAIL naming the provider and the node or group when a plugin fails (what was
// created so far is released).
std::unique_ptr<CompiledGraph> compile_graph(const Graph& graph, GraphPartition partition,
                                             const std::vector<Provider*>& providers,
                                             const std::function<void(const CompiledStep&)>& step_done = {});

}  // namespace ephost
