// ai.onnx opset 25 (ONNX 1.20): int2 and uint2 for the cast, quantization and shape operators. Every
// version only accepts more element types, none of which onnx 1.12 can name: each keeps the element
// types and the meaning of the version before.
#include "opsets/opsets.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

void add_opset25_schemas(std::vector<onnx::OpSchema>& out) {
  for (const char* op : {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity",
                         "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                         "Transpose", "Unsqueeze"})
    out.push_back(types_only_version(op, 25));
}

}  // namespace ephost::opsets
