// onnx::TensorProto <-> Tensor conversions, with the checks the loader runs on every tensor of a model.
#pragma once

#include <string>

#include "core/tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace ephost {

// TensorProto -> Tensor (raw_data or typed fields; external data must already be resolved).
Tensor tensor_from_proto(const onnx::TensorProto& proto);
// Checks what tensor_from_proto checks (type, shape, data size; INVALID_GRAPH naming the tensor)
// without copying the data. The loader runs it on every tensor of a model before onnx sees them.
void validate_tensor_proto(const onnx::TensorProto& proto);
// Moves the typed int32_data of an element type newer than onnx 1.12 (float8, int4, uint4, float4e2m1,
// float8e8m0, int2, uint2) into raw_data, the same bytes in the same order, so that onnx 1.12's checker,
// which refuses typed fields of types it does not know, reads the tensor. No-op for other tensors. Call
// after validate_tensor_proto.
void move_new_type_fields_to_raw_data(onnx::TensorProto& proto);
// Tensor -> TensorProto (raw_data; strings in string_data).
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* out);

}  // namespace ephost
