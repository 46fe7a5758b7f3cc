// How the opaque handles of the plugin ABI map onto host objects. Included where the host hands a
// plugin a handle or takes one back: host/plugin_abi (the host table), the executor (kernel contexts),
// partitioning and the session (get_capability's graph views and capability sink), and EPContext
// generation, loading and inspection (context sinks, EPContext nodes). The rest of the host works with
// the IR types directly.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "core/handle_tag.h"
#include "core/device.h"
#include "core/run_control.h"
#include "core/runtime_value.h"
#include "core/tensor.h"
#include "ephost/ephost_plugin.h"
#include "graph/graph.h"

// Every struct below begins its data with a HandleTag (core/handle_tag.h): host/plugin_abi checks it on each
// handle a plugin passes in.

// EphostKernelContext: one compute call's inputs and outputs. The executor implements it.
struct EphostKernelContext {
  ephost::HandleTag<ephost::HandleKind::kKernelContext> handle_tag;
  virtual ~EphostKernelContext() = default;
  virtual size_t num_inputs() const = 0;
  // Input `index` (a tensor, a sequence or none); nullptr for an absent optional input. Throws
  // INVALID_ARGUMENT when out of range.
  virtual const ephost::RuntimeValue* input(size_t index) const = 0;
  virtual size_t num_outputs() const = 0;
  // Allocates tensor output `index`; throws INVALID_ARGUMENT when it is already set or out of range.
  virtual ephost::Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) = 0;
  // A tensor output allocated earlier, or nullptr.
  virtual ephost::Tensor* allocated_output(size_t index) = 0;
  // Sets output `index` to `value`: a sequence, none, or a tensor that owns its buffer (it is kept as
  // is and its buffer never handed to another value). Throws INVALID_ARGUMENT when already set.
  virtual void set_output(size_t index, ephost::RuntimeValue value) = 0;
  // Makes output `index` a sequence of `length` unset elements of `elem_type`, which the plugin fills
  // through sequence_output() before compute returns (checked afterwards).
  virtual void begin_sequence_output(size_t index, int32_t elem_type, size_t length) = 0;
  // The sequence begun for output `index` by begin_sequence_output, still writable during compute.
  virtual ephost::TensorSequence& sequence_output(size_t index) = 0;
  virtual int32_t num_threads() const = 0;
  // Runs the subgraph in attribute `attribute` of the node being computed.
  virtual std::vector<ephost::RuntimeValue> run_subgraph(const std::string& attribute,
                                                         std::vector<ephost::RuntimeValue> inputs) = 0;
  // Plugin ABI 3: the device whose memory the step's tensors live in (null: host memory). Inputs are
  // there; allocate_output places outputs there.
  virtual const ephost::Device* memory_device() const = 0;
  // Plugin ABI 3: the run's stream on memory_device(), or null.
  virtual EphostStream* stream() = 0;
  // Plugin ABI 4: whether the session records a profile of this step (kernel_profiling).
  virtual bool profiling() const { return false; }
  // Plugin ABI 4: nanoseconds since the step's span began; 0 when not profiling.
  virtual int64_t profile_clock_ns() const { return 0; }
  // Plugin ABI 4: files `span` (checked by the caller) inside the step's span; nothing when not profiling.
  virtual void record_span(const EphostProfileSpan& /*span*/) {}
  // Plugin ABI 4: the limits of the run this compute belongs to (terminate, deadline), or null when
  // nothing can stop it. Read from any thread the compute uses.
  virtual const ephost::RunLimits* run_limits() const = 0;
  // The tensor the caller asked output `index` to be written into (a graph output bound to a tensor of
  // its type and shape, IoBinding), which allocate_output of that type and shape returns; null when none.
  // Lets a provider that makes its outputs elsewhere (a provider host process) write them there in place.
  virtual const ephost::Tensor* output_destination(size_t /*index*/) const { return nullptr; }
  // Whether output `index` is read by nothing in this process but steps of the computing step's own
  // provider and the application (a graph output of the run itself, not of a subgraph): then it may stay
  // in memory that provider's host process can still write after the compute (shared memory the host
  // allocates, isolated_provider.h), since no kernel here reads it and could see it change between two
  // reads. False when unknown.
  virtual bool output_read_only_by_provider(size_t /*index*/) const { return false; }
};

// EphostValue: a value the host hands a plugin (subgraph results, a kernel input, a copy the plugin
// asked for). `borrowed` marks a tensor that aliases memory the executor manages (a kernel input):
// it is copied before it is stored anywhere that outlives the compute call.
struct EphostValue {
  EphostValue(ephost::RuntimeValue v, bool is_borrowed) : value(std::move(v)), borrowed(is_borrowed) {}
  ephost::HandleTag<ephost::HandleKind::kValue> handle_tag;
  ephost::RuntimeValue value;
  bool borrowed = false;
};

// EphostContextSink: what context_emit hands the host for one compiled group.
struct EphostContextSink {
  ephost::HandleTag<ephost::HandleKind::kContextSink> handle_tag;
  std::vector<std::vector<uint8_t>> pieces;           // concatenated in order
  std::vector<std::pair<std::string, std::string>> attributes;  // plugin-set EPContext attributes
};

// EphostCapability: what get_capability claims, collected for the partitioner.
struct EphostCapability {
  ephost::HandleTag<ephost::HandleKind::kCapability> handle_tag;
  struct Claim {
    bool fused = false;
    std::vector<const ephost::Node*> nodes;
    std::string refused;  // non-empty: the host refused this claim (why); the partitioner reports it
  };
  const ephost::GraphView* graph = nullptr;
  // The graph's nodes by address, filled on the first claim: a claimed pointer is looked up here
  // before it is dereferenced.
  std::unordered_set<const ephost::Node*> graph_nodes;
  // False for plugins that negotiated plugin ABI 1: they know nothing of sequences and optionals, so
  // claims of nodes that read or write such values are refused.
  bool non_tensor_values = true;
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

}  // namespace ephost
