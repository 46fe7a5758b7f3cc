// Constants the plugin can see beyond the graph's own initializers.
//
// The host folds constants (host/transform/constant_folding.cpp), in subgraphs too, at optimization
// level 1 and above. What it leaves on purpose reaches the plugin: DequantizeLinear of constant weights
// (kept for QDQ fusion, so the plugin folds the ones it does not fuse), values of 16 to 64 MiB, and
// everything when the host's optimizations are off (a PyTorch-exported LSTM inside an If rebuilds its
// gate weights with Constant/Slice/Concat/Unsqueeze on every call otherwise). A body's references to
// the enclosing graph's initializers are outer-scope values, not constants. So:
//  - constant_of() resolves an outer-scope value through the parent node's implicit inputs;
//  - fold_constants() evaluates the pure data-movement nodes (Constant, Identity, Unsqueeze, Squeeze,
//    Reshape, Flatten, Concat, Slice, Transpose, Gather, Cast, Shape) and DequantizeLinear (a QDQ
//    model's quantized weights) whose inputs are all constant;
//    the provider claims them as one fused group whose outputs are those values (handed out without
//    copying), and registers them so that kernels built afterwards (Conv, MatMul, LSTM...) treat
//    them as constants and pack them once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu {

// A tensor the plugin owns (a folded value).
struct OwnedTensor {
  int32_t elem_type = EPHOST_ELEMENT_UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  sdk::Tensor view() const;

 private:
  mutable EphostTensorView view_{};
};

// v's value when it is constant: an initializer, an initializer of an enclosing graph (outer scope),
// or a value fold_constants() registered. An absent tensor (present() == false) otherwise.
sdk::Tensor constant_of(const sdk::Value& v);
inline bool is_constant(const sdk::Value& v) { return constant_of(v).present(); }

// The nodes of `graph` that fold, in topological order, with the values they produce (registered for
// constant_of until `owner` unregisters them). Nodes for which `skip` is true are not folded (nor,
// unless their outputs are registered already, what reads them).
struct FoldedNodes {
  std::vector<sdk::Node> nodes;
  std::vector<std::pair<const EphostValueInfo*, std::shared_ptr<OwnedTensor>>> values;
};
FoldedNodes fold_constants(const sdk::Graph& graph, const std::function<bool(const sdk::Node&)>& skip = nullptr);

// Registration of folded values (by value handle) for constant_of.
void register_constants(const void* owner, const FoldedNodes& folded);
void unregister_constants(const void* owner);

// The compiled group of folded nodes: outputs are the folded values.
std::unique_ptr<sdk::CompiledGroup> compile_constant_group(const sdk::Graph& group);

}  // namespace ephost::cpu
