// What an isolated provider's compute unit becomes once the provider fell back (isolated_provider.h):
// the unit's nodes as single-node kernels of the fallback provider (the session's CPU plugin), run in
// order in this process. A fused group's intermediate values live here for the call; its inputs and
// outputs are the step's own. (A fused group cannot simply be compiled by the fallback: a provider
// compiles only the groups it claimed itself.)
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/runtime_value.h"
#include "plugin_abi/handles.h"
#include "graph/graph.h"
#include "provider/provider.h"

namespace ephost {

class FallbackGroup {
 public:
  // Kernels of `fallback` for `nodes` (topological order) of `graph`; `fused`: the nodes were one fused
  // group (else a single node's kernel, computed on the step's context as is). Throws the fallback's
  // error when it has no kernel for a node.
  FallbackGroup(const Provider& fallback, const Graph& graph, const std::vector<const Node*>& nodes, bool fused,
                const std::string& name);
  // Kernels of `fallback` for the nodes of `view`, a fused group whose inputs and outputs are the step's,
  // in the step's order. The constant initializers its nodes read that are not among its inputs come
  // from the view's graph (the source nodes of an EPContext node, whose node reads no such constant:
  // session/context_source_fallback.h).
  FallbackGroup(const Provider& fallback, std::unique_ptr<GraphView> view);
  ~FallbackGroup();

  // Runs the nodes on `context` (the step's), from any thread.
  void compute(EphostKernelContext* context) const;

 private:
  const Provider& fallback_;
  bool fused_;
  std::unique_ptr<GraphView> view_;  // the group's inputs and outputs, in the step's order
  std::vector<std::unique_ptr<ComputeUnit>> kernels_;  // one per view_->nodes entry
  std::map<const Value*, RuntimeValue> constants_;     // read by the nodes, not among the view's inputs
};

}  // namespace ephost
