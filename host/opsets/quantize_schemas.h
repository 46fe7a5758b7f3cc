// QuantizeLinear and DequantizeLinear from opset 21 on: blocked quantization (block_size), and the
// attributes later versions add (QuantizeLinear-23's precision, DequantizeLinear-24's output_dtype).
// Versions that only add element types onnx 1.12 cannot name (23, 24, 25) reuse these through
// types_only_version.
#pragma once

#include <onnx/defs/schema.h>

namespace ephost::opsets {

// QuantizeLinear at `since` (21 or 23): 23 adds `precision` and a scale type apart from x's.
onnx::OpSchema quantize_linear_schema(int since);
// DequantizeLinear at `since` (21 or 24): 24 adds `output_dtype`.
onnx::OpSchema dequantize_linear_schema(int since);

}  // namespace ephost::opsets
