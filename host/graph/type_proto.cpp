#include "graph/type_proto.h"

namespace ephost {

bool type_proto_from_info(const TypeInfo& info, onnx::TypeProto* type) {
  auto tensor = [&info](onnx::TypeProto_Tensor* t, int32_t elem_type, bool with_shape) {
    if (elem_type) t->set_elem_type(elem_type);
    if (!with_shape || !info.has_shape) return;
    auto* shape = t->mutable_shape();
    for (size_t d = 0; d < info.dims.size(); ++d) {
      auto* dim = shape->add_dim();
      if (info.dims[d] >= 0)
        dim->set_dim_value(info.dims[d]);
      else if (d < info.dim_params.size() && !info.dim_params[d].empty())
        dim->set_dim_param(info.dim_params[d]);
    }
  };
  auto sequence = [&](onnx::TypeProto_Sequence* s) {
    tensor(s->mutable_elem_type()->mutable_tensor_type(), info.tensor_elem_type, false);
  };
  switch (info.kind) {
    case EPHOST_VALUE_TENSOR:
      tensor(type->mutable_tensor_type(), info.elem_type, true);
      return true;
    case EPHOST_VALUE_SEQUENCE:
      sequence(type->mutable_sequence_type());
      return true;
    case EPHOST_VALUE_OPTIONAL: {
      auto* held = type->mutable_optional_type();
      if (info.optional_kind == EPHOST_VALUE_TENSOR)
        tensor(held->mutable_elem_type()->mutable_tensor_type(), info.tensor_elem_type, false);
      else if (info.optional_kind == EPHOST_VALUE_SEQUENCE)
        sequence(held->mutable_elem_type()->mutable_sequence_type());
      return true;
    }
    default:
      return false;
  }
}

}  // namespace ephost
