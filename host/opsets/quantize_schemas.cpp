#include "opsets/quantize_schemas.h"

#include <algorithm>

#include "opsets/new_type_names.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorProto;

constexpr const char* kAxisDoc =
    "the axis of a per-axis or blocked scale (negative counts from the back); ignored for a scalar scale";
constexpr const char* kBlockSizeDoc =
    "0: per-tensor or per-axis quantization; B > 0: blocked quantization, each scale covering B consecutive "
    "elements along axis (the scale's shape is x's with that dimension ceil(D / B))";

// The element types of each version's quantized side: int8, uint8, int16 and uint16, and those later
// opsets added (float8 at 19, int4 and uint4 at 21, float4e2m1 at 23, float8e8m0 at 24 for
// QuantizeLinear only, int2 and uint2 at 25), whose names new_type_names.cpp teaches onnx.
TypeList quantized_types(int since) {
  TypeList out = concat(tensor_types({"int8", "uint8", "int16", "uint16"}), new_types_through(since));
  out.erase(std::remove(out.begin(), out.end(), "tensor(float8e8m0)"), out.end());
  return out;
}

void quantize_inference(InferenceContext& ctx) {
  const int64_t output_dtype = onnx::getAttribute(ctx, "output_dtype", static_cast<int64_t>(0));
  if (has_input(ctx, 2)) {
    const int32_t zp = ctx.getInputType(2)->tensor_type().elem_type();
    if (output_dtype != 0 && output_dtype != zp)
      fail_type_inference("QuantizeLinear: output_dtype ", output_dtype, " differs from y_zero_point's type ", zp,
                          "; give only one of them, or the same type in both");
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  } else if (output_dtype != 0) {
    onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(output_dtype));
  } else {
    onnx::updateOutputElemType(ctx, 0, TensorProto::UINT8);
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void dequantize_inference(InferenceContext& ctx) {
  const int64_t output_dtype = onnx::getAttribute(ctx, "output_dtype", static_cast<int64_t>(0));
  if (output_dtype != 0)
    onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(output_dtype));
  else
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

}  // namespace

OpSchema quantize_linear_schema(int since) {
  const bool separate_scale_type = since >= 23;
  OpSchema s = EPHOST_OPSET_SCHEMA("QuantizeLinear", since);
  s.SetDoc("y = saturate(round(x / y_scale) + y_zero_point), rounding half to even, per tensor (scalar scale), "
           "per axis (1-D scale along axis) or per block (block_size > 0: the scale has x's shape with the "
           "axis dimension divided into blocks). y takes y_zero_point's type, else output_dtype, else uint8. "
           "Opset 21 adds block_size and output_dtype; opset 23 adds precision.")
      .Attr("axis", kAxisDoc, AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", kBlockSizeDoc, AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("output_dtype",
            "y's element type when y_zero_point is absent (0: uint8); when both are given they must agree",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("saturate", "for float8 targets only: 1 clamps values outside the range to its largest finite value",
            AttributeProto::INT, static_cast<int64_t>(1));
  if (separate_scale_type)
    s.Attr("precision", "element type of the division x / y_scale (0: y_scale's type)", AttributeProto::INT,
           static_cast<int64_t>(0));
  const TypeList high = tensor_types({"float", "float16", "bfloat16", "int32"});
  s.Input(0, "x", "full-precision input", "T1")
      .Input(1, "y_scale", "scale: a scalar, 1-D along axis, or blocked", separate_scale_type ? "T2" : "T1")
      .Input(2, "y_zero_point", "zero point, of y_scale's shape (default 0 of uint8)",
             separate_scale_type ? "T3" : "T2", OpSchema::Optional)
      .Output(0, "y", "quantized output, of x's shape", separate_scale_type ? "T3" : "T2")
      .TypeConstraint("T1", high, "x's type" + std::string(separate_scale_type ? "" : " and y_scale's"));
  if (separate_scale_type) {
    s.TypeConstraint("T2", high, "y_scale's type");
    s.TypeConstraint("T3", quantized_types(since), "y_zero_point's and y's type");
  } else {
    s.TypeConstraint("T2", quantized_types(since), "y_zero_point's and y's type");
  }
  s.TypeAndShapeInferenceFunction(quantize_inference);
  return s;
}

OpSchema dequantize_linear_schema(int since) {
  const bool has_output_dtype = since >= 24;
  OpSchema s = EPHOST_OPSET_SCHEMA("DequantizeLinear", since);
  s.SetDoc("y = (x - x_zero_point) * x_scale, per tensor (scalar scale), per axis (1-D scale along axis) or per "
           "block (block_size > 0: the scale has x's shape with the axis dimension divided into blocks). y takes "
           "x_scale's type (or output_dtype, from opset 24). Opset 21 adds block_size; opset 24 output_dtype.")
      .Attr("axis", kAxisDoc, AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", kBlockSizeDoc, AttributeProto::INT, static_cast<int64_t>(0));
  if (has_output_dtype)
    s.Attr("output_dtype", "y's element type (0: x_scale's type)", AttributeProto::INT, static_cast<int64_t>(0));
  s.Input(0, "x", "quantized input", "T1")
      .Input(1, "x_scale", "scale: a scalar, 1-D along axis, or blocked", "T2")
      .Input(2, "x_zero_point", "zero point, of x_scale's shape (default 0)", "T1", OpSchema::Optional)
      .Output(0, "y", "full-precision output, of x's shape", has_output_dtype ? "T3" : "T2")
      .TypeConstraint("T1", concat(quantized_types(since), tensor_types({"int32"})), "x's and x_zero_point's type")
      .TypeConstraint("T2", tensor_types({"float", "float16", "bfloat16"}), "x_scale's type");
  if (has_output_dtype) s.TypeConstraint("T3", tensor_types({"float", "float16", "bfloat16"}), "y's type");
  s.TypeAndShapeInferenceFunction(dequantize_inference);
  return s;
}

}  // namespace ephost::opsets
