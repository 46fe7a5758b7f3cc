// The one table of what the CPU plugin can run: (domain, op_type, opset range) -> a check of the
// node's types and attributes, and a factory. get_capability and create_kernel both read it, so a
// node is claimed exactly when a kernel can be made for it.
#pragma once

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu {

using KernelFactory = std::function<std::unique_ptr<sdk::Kernel>(const sdk::Node&, const KernelConfig&)>;
// True when the kernel handles this node's element types and attribute values.
using SupportCheck = std::function<bool(const sdk::Node&)>;

struct KernelDef {
  std::string domain;  // "" for the default ONNX domain
  std::string op;
  // Opsets of the model for which these semantics hold (inclusive). An ai.onnx `until` of 17 or more
  // names the newest version of the operator the kernel implements (the opset it came in): add()
  // extends it through the opsets that keep that version, up to kNewestOpset (op_versions.h).
  int64_t since = 1, until = 1;
  SupportCheck supports;
  KernelFactory create;
  // The kernel takes sequences and optionals (plugin ABI 2). Without this, nodes that read or
  // write a value declared as one are not matched: tensor kernels never see them.
  bool takes_non_tensor_values = false;
};

class KernelRegistry {
 public:
  static const KernelRegistry& instance();

  void add(KernelDef def);
  // Default-domain shorthand.
  void add(const std::string& op, int64_t since, int64_t until, SupportCheck supports, KernelFactory create) {
    add(KernelDef{"", op, since, until, std::move(supports), std::move(create)});
  }
  // Default-domain shorthand for a kernel that takes sequences and optionals.
  void add_value_kernel(const std::string& op, int64_t since, int64_t until, SupportCheck supports,
                        KernelFactory create) {
    add(KernelDef{"", op, since, until, std::move(supports), std::move(create), true});
  }

  // The definition covering the node's (domain, op, opset) whose check accepts it, or null.
  const KernelDef* match(const sdk::Node& node) const;
  std::vector<std::string> ops() const;

 private:
  std::unordered_map<std::string, std::vector<KernelDef>> defs_;  // by "domain\nop"
};

template <typename K>
KernelFactory make_factory() {
  return [](const sdk::Node& node, const KernelConfig& config) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<K>(node, config);
  };
}

// ---- support checks ---------------------------------------------------------------------------------
// A value whose type the host does not know passes: the kernel checks again at run time.

bool type_in(int32_t t, std::initializer_list<int32_t> types);
bool input_type_in(const sdk::Node& node, size_t i, std::initializer_list<int32_t> types);
bool output_type_in(const sdk::Node& node, size_t i, std::initializer_list<int32_t> types);
// Every present input and output has a movable (fixed-size, non-string) type.
bool all_movable(const sdk::Node& node);
// Some present input or output is declared a sequence or an optional.
bool has_non_tensor_value(const sdk::Node& node);

inline SupportCheck inputs_of(std::initializer_list<int32_t> types, std::vector<size_t> indices = {0}) {
  std::vector<int32_t> t(types);
  return [t, indices](const sdk::Node& node) {
    for (size_t i : indices)
      if (node.has_input(i)) {
        int32_t e = node.input(i).elem_type();
        if (e != EPHOST_ELEMENT_UNDEFINED && std::find(t.begin(), t.end(), e) == t.end()) return false;
      }
    return true;
  };
}

inline SupportCheck any_types() {
  return [](const sdk::Node& node) { return all_movable(node); };
}
// any_types() and the packed narrow types (int4, uint4, int2, uint2, float4e2m1), for kernels that move
// those as codes (math/narrow_types.h).
SupportCheck movable_or_narrow();

// Registration, one function per kernels/*.cpp.
void register_elementwise_kernels(KernelRegistry& r);
void register_opset18_spatial_kernels(KernelRegistry& r);
void register_opset19_20_kernels(KernelRegistry& r);
// Opsets 21 to 26: the transformer operators as fused kernels, blocked quantization, and the rest.
void register_attention_kernels(KernelRegistry& r);
void register_transformer_norm_kernels(KernelRegistry& r);
void register_rotary_embedding_kernels(KernelRegistry& r);
void register_block_quantize_kernels(KernelRegistry& r);
void register_opset24_26_kernels(KernelRegistry& r);
void register_activation_kernels(KernelRegistry& r);
void register_conv_kernels(KernelRegistry& r);
void register_pool_kernels(KernelRegistry& r);
void register_normalization_kernels(KernelRegistry& r);
void register_matmul_kernels(KernelRegistry& r);
void register_resize_kernels(KernelRegistry& r);
void register_tensor_kernels(KernelRegistry& r);
void register_shape_kernels(KernelRegistry& r);
void register_reduce_kernels(KernelRegistry& r);
void register_cast_kernels(KernelRegistry& r);
void register_index_kernels(KernelRegistry& r);
void register_quantize_kernels(KernelRegistry& r);
void register_nms_kernels(KernelRegistry& r);
void register_control_flow_kernels(KernelRegistry& r);
// Sequence and optional values, and the subgraph ops that carry them.
void register_sequence_kernels(KernelRegistry& r);
void register_optional_kernels(KernelRegistry& r);
void register_loop_kernels(KernelRegistry& r);
void register_scan_kernels(KernelRegistry& r);
void register_sequence_map_kernels(KernelRegistry& r);
void register_loss_kernels(KernelRegistry& r);
void register_quantized_linear_kernels(KernelRegistry& r);
void register_dynamic_quantize_kernels(KernelRegistry& r);
void register_string_kernels(KernelRegistry& r);
void register_random_kernels(KernelRegistry& r);
void register_batchnorm_training_kernels(KernelRegistry& r);
void register_optimizer_kernels(KernelRegistry& r);
void register_signal_kernels(KernelRegistry& r);
void register_linalg_kernels(KernelRegistry& r);
void register_selection_kernels(KernelRegistry& r);
void register_sampling_kernels(KernelRegistry& r);
void register_unpool_kernels(KernelRegistry& r);
void register_einsum_kernels(KernelRegistry& r);
void register_recurrent_kernels(KernelRegistry& r);

}  // namespace ephost::cpu
