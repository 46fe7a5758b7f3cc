#include "kernel_registry.h"

#include <algorithm>

#include "kernels/recurrent_state_kernels.h"
#include "math/narrow_types.h"
#include "op_versions.h"

namespace ephost::cpu {

namespace {
std::string key(const std::string& domain, const std::string& op) {
  return (domain == "ai.onnx" ? std::string() : domain) + "\n" + op;
}
}  // namespace

const KernelRegistry& KernelRegistry::instance() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_elementwise_kernels(r);
    register_activation_kernels(r);
    register_conv_kernels(r);
    register_pool_kernels(r);
    register_normalization_kernels(r);
    register_matmul_kernels(r);
    register_resize_kernels(r);
    register_tensor_kernels(r);
    register_shape_kernels(r);
    register_reduce_kernels(r);
    register_cast_kernels(r);
    register_index_kernels(r);
    register_quantize_kernels(r);
    register_nms_kernels(r);
    register_control_flow_kernels(r);
    register_sequence_kernels(r);
    register_optional_kernels(r);
    register_loop_kernels(r);
    register_scan_kernels(r);
    register_sequence_map_kernels(r);
    register_loss_kernels(r);
    register_quantized_linear_kernels(r);
    register_dynamic_quantize_kernels(r);
    register_string_kernels(r);
    register_random_kernels(r);
    register_batchnorm_training_kernels(r);
    register_optimizer_kernels(r);
    register_signal_kernels(r);
    register_linalg_kernels(r);
    register_selection_kernels(r);
    register_sampling_kernels(r);
    register_unpool_kernels(r);
    register_einsum_kernels(r);
    register_recurrent_kernels(r);
    register_opset18_spatial_kernels(r);
    register_opset19_20_kernels(r);
    register_attention_kernels(r);
    register_transformer_norm_kernels(r);
    register_rotary_embedding_kernels(r);
    register_causal_conv_with_state_kernels(r);
    register_linear_attention_kernels(r);
    register_block_quantize_kernels(r);
    register_opset24_26_kernels(r);
    return r;
  }();
  return registry;
}

void KernelRegistry::add(KernelDef def) {
  const std::string k = key(def.domain, def.op);
  // An ai.onnx kernel implementing the operator's version at opset `until` (17 or later) covers the
  // model opsets up to that version's last (op_versions.h).
  if ((def.domain.empty() || def.domain == "ai.onnx") && def.until >= kOnnxLibraryNewestOpset)
    def.until = last_opset_of_version(def.op, def.until);
  defs_[k].push_back(std::move(def));
}

const KernelDef* KernelRegistry::match(const sdk::Node& node) const {
  auto it = defs_.find(key(node.domain(), node.op_type()));
  if (it == defs_.end()) return nullptr;
  const int64_t opset = node.opset();
  const bool non_tensor = has_non_tensor_value(node);
  for (const KernelDef& d : it->second)
    if (opset >= d.since && opset <= d.until && (!non_tensor || d.takes_non_tensor_values) &&
        (!d.supports || d.supports(node)))
      return &d;
  return nullptr;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : defs_) out.push_back(k.substr(k.find('\n') + 1));
  std::sort(out.begin(), out.end());
  return out;
}

bool type_in(int32_t t, std::initializer_list<int32_t> types) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

bool input_type_in(const sdk::Node& node, size_t i, std::initializer_list<int32_t> types) {
  if (!node.has_input(i)) return true;
  const int32_t t = node.input(i).elem_type();
  return t == EPHOST_ELEMENT_UNDEFINED || type_in(t, types);
}

bool output_type_in(const sdk::Node& node, size_t i, std::initializer_list<int32_t> types) {
  if (!node.has_output(i)) return true;
  const int32_t t = node.output(i).elem_type();
  return t == EPHOST_ELEMENT_UNDEFINED || type_in(t, types);
}

bool has_non_tensor_value(const sdk::Node& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i)
    if (node.has_input(i) && node.input(i).is_non_tensor()) return true;
  for (size_t i = 0; i < node.num_outputs(); ++i)
    if (node.has_output(i) && node.output(i).is_non_tensor()) return true;
  return false;
}

bool all_movable(const sdk::Node& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i)
    if (node.has_input(i)) {
      const int32_t t = node.input(i).elem_type();
      if (t != EPHOST_ELEMENT_UNDEFINED && !is_movable_type(t)) return false;
    }
  for (size_t i = 0; i < node.num_outputs(); ++i)
    if (node.has_output(i)) {
      const int32_t t = node.output(i).elem_type();
      if (t != EPHOST_ELEMENT_UNDEFINED && !is_movable_type(t)) return false;
    }
  return true;
}

SupportCheck movable_or_narrow() {
  return [](const sdk::Node& node) {
    auto ok = [](int32_t t) { return t == EPHOST_ELEMENT_UNDEFINED || is_movable_type(t) || math::is_narrow_type(t); };
    for (size_t i = 0; i < node.num_inputs(); ++i)
      if (node.has_input(i) && !ok(node.input(i).elem_type())) return false;
    for (size_t i = 0; i < node.num_outputs(); ++i)
      if (node.has_output(i) && !ok(node.output(i).elem_type())) return false;
    return true;
  };
}

}  // namespace ephost::cpu
