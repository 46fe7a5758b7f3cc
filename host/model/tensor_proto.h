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
// Tensor -> TensorProto (raw_data; strings in string_data).
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* out);

}  // namespace ephost
