// How the opaque handles of the plugin ABI map onto host objects. Only host/abi and the executor
// include this; everything else works with the IR types directly.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "ephost/ephost_plugin.h"
#include "graph/graph.h"

// EphostKernelContext: one compute call's inputs and outputs. The executor implements it.
struct EphostKernelContext {
  virtual ~EphostKernelContext() = default;
  virtual size_t num_inputs() const = 0;
  // nullptr for an absent optional input.
  virtual const ephost::Tensor* input(size_t index) const = 0;
  virtual size_t num_outputs() const = 0;
  // Allocates output `index`; throws INVALID_ARGUMENT when called twice or out of range.
  virtual ephost::Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) = 0;
  // An output allocated earlier, or nullptr.
  virtual ephost::Tensor* allocated_output(size_t index) = 0;
  virtual int32_t num_threads() const = 0;
  // Runs the subgraph in attribute `attribute` of the node being computed.
  virtual std::vector<ephost::Tensor> run_subgraph(const std::string& attribute,
                                                   std::vector<ephost::Tensor> inputs) = 0;
};

// EphostValue: a tensor the host hands a plugin (subgraph results).
struct EphostValue {
  ephost::Tensor tensor;
};

// EphostContextSink: what context_emit hands the host for one compiled group.
struct EphostContextSink {
  std::vector<std::vector<uint8_t>> pieces;           // concatenated in order
  std::vector<std::pair<std::string, std::string>> attributes;  // plugin-set EPContext attributes
};

// EphostCapability: what get_capability claims, collected for the partitioner.
struct EphostCapability {
  struct Claim {
    bool fused = false;
    std::vector<const ephost::Node*> nodes;
  };
  const ephost::GraphView* graph = nullptr;
  std::vector<Claim> claims;
};

namespace ephost {

inline const GraphView* from_handle(const EphostGraph* g) { return reinterpret_cast<const GraphView*>(g); }
inline const EphostGraph* to_handle(const GraphView* g) { return reinterpret_cast<const EphostGraph*>(g); }
inline const Node* from_handle(const EphostNode* n) { return reinterpret_cast<const Node*>(n); }
inline const EphostNode* to_handle(const Node* n) { return reinterpret_cast<const EphostNode*>(n); }
inline const Value* from_handle(const EphostValueInfo* v) { return reinterpret_cast<const Value*>(v); }
inline const EphostValueInfo* to_handle(const Value* v) { return reinterpret_cast<const EphostValueInfo*>(v); }
inline const Node::AttributeRef* from_handle(const EphostAttribute* a) {
  return reinterpret_cast<const Node::AttributeRef*>(a);
}
inline const EphostAttribute* to_handle(const Node::AttributeRef* a) {
  return reinterpret_cast<const EphostAttribute*>(a);
}

// Fills Node::attributes for every node of `graph` and its subgraphs (after build_graph_ir).
void index_node_attributes(Graph& graph);

}  // namespace ephost
