// ai.onnx opset 26: BitCast and CumProd, both new, written from the ONNX operator specification.
#include "opsets/opsets.h"
#include "ephost/ephost_types.h"
#include "opsets/new_type_names.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

constexpr int kOpset = 26;

// Bits per element of a fixed-width element type (BitCast needs equal widths): the float8 and packed
// sub-byte types of opsets 19 to 25 included; 0 for strings and unknown types.
int bit_width(int32_t elem_type) {
  return elem_type == onnx::TensorProto::STRING ? 0 : static_cast<int>(EphostElementBits(elem_type));
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
  const TypeList with_narrow = concat(types, new_types_through(kOpset));
  return EPHOST_OPSET_SCHEMA("BitCast", kOpset)
      .SetDoc("Reinterprets the bits of each element as the element type `to`, which must have the input type's "
              "width; the shape is unchanged. Strings cannot be cast this way.")
      .Attr("to", "the target element type (a TensorProto.DataType value)", AttributeProto::INT, true)
      .Input(0, "input", "tensor to reinterpret", "T1")
      .Output(0, "output", "the same bits, of input's shape", "T2")
      .TypeConstraint("T1", with_narrow, "fixed-width source types")
      .TypeConstraint("T2", with_narrow, "fixed-width target types")
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
