// ai.onnx opset 26: BitCast and CumProd, both new, written from the ONNX operator specification.
#include "opsets/opsets.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

constexpr int kOpset = 26;

// Fixed-width element types onnx 1.12 can name, with their widths in bits (BitCast needs equal widths).
int bit_width(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
      return 8;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 16;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::FLOAT:
      return 32;
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 64;
    case onnx::TensorProto::COMPLEX128:
      return 128;
    default:
      return 0;
  }
}

void bit_cast_inference(InferenceContext& ctx) {
  const AttributeProto* to = ctx.getAttribute("to");
  if (!to) fail_type_inference("BitCast: the attribute to is required");
  const int to_width = bit_width(static_cast<int32_t>(to->i()));
  if (to_width == 0) fail_type_inference("BitCast: to (", to->i(), ") must be a fixed-width, non-string type");
  onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(to->i()));
  if (has_input(ctx, 0)) {
    const int from_width = bit_width(ctx.getInputType(0)->tensor_type().elem_type());
    if (from_width != to_width)
      fail_type_inference("BitCast: input and to must have the same bit width (", from_width, " and ", to_width, ")");
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

OpSchema bit_cast() {
  const TypeList types = tensor_types({"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                                       "bfloat16", "float16", "float", "double", "bool", "complex64", "complex128"});
  return EPHOST_OPSET_SCHEMA("BitCast", kOpset)
      .SetDoc("Reinterprets the bits of each element as the element type `to`, which must have the input type's "
              "width; the shape is unchanged. Strings cannot be cast this way.")
      .Attr("to", "the target element type (a TensorProto.DataType value)", AttributeProto::INT, true)
      .Input(0, "input", "tensor to reinterpret", "T1")
      .Output(0, "output", "the same bits, of input's shape", "T2")
      .TypeConstraint("T1", types, "fixed-width source types")
      .TypeConstraint("T2", types, "fixed-width target types")
      .TypeAndShapeInferenceFunction(bit_cast_inference);
}

OpSchema cum_prod() {
  return EPHOST_OPSET_SCHEMA("CumProd", kOpset)
      .SetDoc("Cumulative product of x along axis: y[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...]. With "
              "exclusive, element i leaves out x[i] (the first product is 1); with reverse, the products run from "
              "the end.")
      .Attr("exclusive", "1: leave each element out of its own product", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("reverse", "1: accumulate from the last element backwards", AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "x", "input", "T")
      .Input(1, "axis", "the axis (a scalar or 1-element tensor; negative counts from the back)", "T2")
      .Output(0, "y", "the cumulative products, of x's shape", "T")
      .TypeConstraint("T", tensor_types({"uint32", "uint64", "int32", "int64", "float16", "float", "double", "bfloat16"}),
                      "numeric tensors")
      .TypeConstraint("T2", index_types(), "the axis's type")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
}

}  // namespace

void add_opset26_schemas(std::vector<OpSchema>& out) {
  out.push_back(bit_cast());
  out.push_back(cum_prod());
}

}  // namespace ephost::opsets
