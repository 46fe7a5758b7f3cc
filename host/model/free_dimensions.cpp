#include "model/free_dimensions.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "core/log.h"

namespace ephost {
namespace {

bool matches(const onnx::TensorShapeProto_Dimension& dim, const FreeDimensionOverride& o) {
  if (o.by_denotation) return dim.denotation() == o.name;
  return dim.has_dim_param() && dim.dim_param() == o.name;
}

}  // namespace

std::vector<OverriddenDimension> apply_free_dimension_overrides(onnx::GraphProto& graph,
                                                                const std::vector<FreeDimensionOverride>& overrides) {
  std::vector<OverriddenDimension> fixed;
  if (overrides.empty()) return fixed;
  std::vector<bool> used(overrides.size(), false);
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int axis = 0; axis < shape->dim_size(); ++axis) {
      onnx::TensorShapeProto_Dimension* dim = shape->mutable_dim(axis);
      if (dim->has_dim_value()) continue;
      for (size_t i = 0; i < overrides.size(); ++i) {
        if (!matches(*dim, overrides[i])) continue;
        used[i] = true;
        dim->set_dim_value(overrides[i].value);  // clears dim_param (one of the two); keeps the denotation
        fixed.push_back({input.name(), static_cast<size_t>(axis), overrides[i].key, overrides[i].value});
        break;
      }
    }
  }
  for (size_t i = 0; i < overrides.size(); ++i)
    if (!used[i])
      log_warning(fmt::format("{}={}: no graph input has a symbolic dimension {} '{}'; the override does nothing",
                              overrides[i].key, overrides[i].value,
                              overrides[i].by_denotation ? "with denotation" : "named", overrides[i].name));
  return fixed;
}

}  // namespace ephost
