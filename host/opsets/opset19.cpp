// ai.onnx opset 19 (ONNX 1.14): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). DeformConv is new; AveragePool (dilations), Cast and
// CastLike (saturate), Pad (wrap), QuantizeLinear (saturate) and Resize (half_pixel_symmetric) changed
// their meaning; Constant, DequantizeLinear, Equal (strings), Identity, If, Loop, Reshape, Scan, Shape
// and Size only accept more element types.
//
// Opset 19's new element types are the float8 family (float8e4m3fn, float8e4m3fnuz, float8e5m2,
// float8e5m2fnuz: TensorProto.DataType 17 to 20). onnx 1.12's TensorProto has no such values and its
// type-string parser refuses "tensor(float8e4m3fn)", so no schema here can name them: these versions
// accept the element types of the previous version (plus strings for Equal) until the host knows
// float8 (issue 23, "new element types").
#include <onnx/defs/function.h>

#include "opsets/opsets.h"
#include "opsets/new_type_names.h"
#include "opsets/schema_util.h"
#include "opsets/shared_schemas.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr int kOpset = 19;

const TypeList& quantized_types() {
  static const TypeList t = tensor_types({"int8", "uint8"});
  return t;
}

// ---- AveragePool ----------------------------------------------------------------------------------

OpSchema average_pool() {
  return EPHOST_OPSET_SCHEMA("AveragePool", kOpset)
      .SetDoc("Average pooling: each output element is the mean of its window of X. Opset 19 adds dilations "
              "(the window's taps are dilation apart). With count_include_pad, padded positions count in the "
              "divisor; otherwise only the positions inside X do.")
      .Attr("auto_pad", "NOTSET, SAME_UPPER, SAME_LOWER or VALID", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "1: output sizes rounded up instead of down", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("count_include_pad", "1: padded positions count in the divisor", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("dilations", "dilation per spatial axis (default 1)", AttributeProto::INTS, false)
      .Attr("kernel_shape", "window size per spatial axis", AttributeProto::INTS, true)
      .Attr("pads", "padding at the beginning and end of each spatial axis", AttributeProto::INTS, false)
      .Attr("strides", "stride per spatial axis (default 1)", AttributeProto::INTS, false)
      .Input(0, "X", "input [N, C, D1, ...]", "T")
      .Output(0, "Y", "pooled output", "T")
      .TypeConstraint("T", float_types(), "floating-point tensors")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) { pool_shape_inference(ctx, "AveragePool"); });
}

// ---- Cast, CastLike -------------------------------------------------------------------------------

constexpr const char* kSaturateDoc =
    "for casts to float8 only: 1 maps values outside the target's range to its largest finite value (of "
    "the same sign), 0 to infinity or NaN as the format allows; other casts ignore it";

OpSchema cast() {
  return EPHOST_OPSET_SCHEMA("Cast", kOpset)
      .SetDoc("Converts each element of the input to the element type `to`. Opset 19 adds saturate (for float8 "
              "targets). Floats to integers truncate toward zero; strings are parsed and written as numbers; "
              "bool is false for 0 and true otherwise.")
      .Attr("saturate", kSaturateDoc, AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("to", "the target element type (a TensorProto.DataType value)", AttributeProto::INT, true)
      .Input(0, "input", "tensor to convert", "T1")
      .Output(0, "output", "the converted tensor, of input's shape", "T2")
      .TypeConstraint("T1", onnx_types("Cast", 13, "T1", new_types_of_opset(kOpset)), "source types")
      .TypeConstraint("T2", onnx_types("Cast", 13, "T2", new_types_of_opset(kOpset)), "target types")
      .TypeAndShapeInferenceFunction(onnx_inference("Cast", 13))
      .PartialDataPropagationFunction(onnx_data_propagation("Cast", 13));
}

bool cast_like_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema, onnx::FunctionProto& body) {
  const onnx::TypeProto* target = ctx.getInputType(1);
  if (!target || target->value_case() != onnx::TypeProto::kTensorType) return false;
  const AttributeProto* saturate = ctx.getAttribute("saturate");
  const std::string node = "output = Cast <to = " + std::to_string(target->tensor_type().elem_type()) +
                           ", saturate = " + std::to_string(saturate ? saturate->i() : 1) + "> (input)";
  onnx::FunctionBuilder b(body);
  b.Add(node.c_str());
  schema.BuildFunction(body);
  return true;
}

OpSchema cast_like() {
  return EPHOST_OPSET_SCHEMA("CastLike", kOpset)
      .SetDoc("Converts the input to the element type of target_type (whose values are not read), as Cast does. "
              "Opset 19 adds saturate.")
      .Attr("saturate", kSaturateDoc, AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "input", "tensor to convert", "T1")
      .Input(1, "target_type", "a tensor of the target element type", "T2")
      .Output(0, "output", "the converted tensor, of input's shape", "T2")
      .TypeConstraint("T1", onnx_types("CastLike", 15, "T1", new_types_of_opset(kOpset)), "source types")
      .TypeConstraint("T2", onnx_types("CastLike", 15, "T2", new_types_of_opset(kOpset)), "target types")
      .SetContextDependentFunctionBodyBuilder(cast_like_body)
      .TypeAndShapeInferenceFunction(onnx_inference("CastLike", 15));
}

// ---- Constant -------------------------------------------------------------------------------------

OpSchema constant() {
  return EPHOST_OPSET_SCHEMA("Constant", kOpset)
      .SetDoc("A constant tensor, given by exactly one of its attributes (a tensor, a sparse tensor, or a scalar "
              "or 1-D list of floats, ints or strings). Opset 19 adds the float8 element types.")
      .Attr("sparse_value", "the value as a sparse tensor", AttributeProto::SPARSE_TENSOR, false)
      .Attr("value", "the value as a tensor", AttributeProto::TENSOR, false)
      .Attr("value_float", "a float scalar", AttributeProto::FLOAT, false)
      .Attr("value_floats", "a 1-D float tensor", AttributeProto::FLOATS, false)
      .Attr("value_int", "an int64 scalar", AttributeProto::INT, false)
      .Attr("value_ints", "a 1-D int64 tensor", AttributeProto::INTS, false)
      .Attr("value_string", "a string scalar", AttributeProto::STRING, false)
      .Attr("value_strings", "a 1-D string tensor", AttributeProto::STRINGS, false)
      .Output(0, "output", "the constant", "T")
      .TypeConstraint("T", onnx_types("Constant", 13, "T", new_types_of_opset(kOpset)), "any tensor type")
      .TypeAndShapeInferenceFunction(onnx_inference("Constant", 13))
      .PartialDataPropagationFunction(onnx_data_propagation("Constant", 13));
}

// ---- DeformConv -----------------------------------------------------------------------------------

void deform_conv_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  const TensorShapeProto& w = onnx::getInputShape(ctx, 1);
  const int64_t rank = x.dim_size();
  if (rank < 3) fail_shape_inference("DeformConv: X must have rank 3 or more [N, C, D1, ...]");
  if (w.dim_size() != rank) fail_shape_inference("DeformConv: W must have X's rank [oC, C / group, k1, ...]");
  const size_t n = static_cast<size_t>(rank - 2);
  const int64_t group = onnx::getAttribute(ctx, "group", 1), offset_group = onnx::getAttribute(ctx, "offset_group", 1);
  if (group < 1 || offset_group < 1) fail_shape_inference("DeformConv: group and offset_group must be positive");
  if (x.dim(1).has_dim_value() && w.dim(1).has_dim_value() && x.dim(1).dim_value() != w.dim(1).dim_value() * group)
    fail_shape_inference("DeformConv: X has ", x.dim(1).dim_value(), " channels but W expects ",
                         w.dim(1).dim_value() * group, " (W's dimension 1 times group)");
  std::vector<int64_t> kernel, strides, dilations, pads;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) {
    for (size_t i = 0; i < n; ++i) {
      const auto& d = w.dim(static_cast<int>(i + 2));
      kernel.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
  }
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides)) strides.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations)) dilations.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads)) pads.assign(2 * n, 0);
  if (kernel.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    fail_shape_inference("DeformConv: kernel_shape, strides and dilations need one value per spatial axis, pads two");
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  *out->add_dim() = x.dim(0);
  *out->add_dim() = w.dim(0);
  for (size_t i = 0; i < n; ++i) {
    auto* d = out->add_dim();
    const auto& src = x.dim(static_cast<int>(i + 2));
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + n] < 0)
      fail_shape_inference("DeformConv: strides and dilations must be positive and pads not negative");
    if (!src.has_dim_value() || kernel[i] < 1) continue;
    const int64_t span = src.dim_value() + pads[i] + pads[i + n] - ((kernel[i] - 1) * dilations[i] + 1);
    if (span < 0) fail_shape_inference("DeformConv: the kernel is larger than the padded input");
    d->set_dim_value(span / strides[i] + 1);
  }
}

OpSchema deform_conv() {
  return EPHOST_OPSET_SCHEMA("DeformConv", kOpset)
      .SetDoc("Deformable convolution: a convolution whose kernel taps are moved, per output position, by learned "
              "offsets (sampled from X with bilinear interpolation, zero outside X) and optionally weighted by a "
              "mask. offset is [N, offset_group * prod(kernel) * n_spatial, out...] (for each tap the offset along "
              "each spatial axis), mask [N, offset_group * prod(kernel), out...].")
      .Attr("dilations", "dilation per spatial axis (default 1)", AttributeProto::INTS, false)
      .Attr("group", "number of groups the input and output channels are divided into", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("kernel_shape", "kernel size per spatial axis (default: W's)", AttributeProto::INTS, false)
      .Attr("offset_group", "number of groups of input channels sharing one set of offsets", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("pads", "padding at the beginning and end of each spatial axis (default 0)", AttributeProto::INTS, false)
      .Attr("strides", "stride per spatial axis (default 1)", AttributeProto::INTS, false)
      .Input(0, "X", "input [N, C, D1, ...]", "T")
      .Input(1, "W", "weights [oC, C / group, k1, ...]", "T")
      .Input(2, "offset", "offsets [N, offset_group * prod(kernel) * (rank - 2), out1, ...]", "T")
      .Input(3, "B", "bias [oC] (default 0)", "T", OpSchema::Optional)
      .Input(4, "mask", "tap weights [N, offset_group * prod(kernel), out1, ...] (default 1)", "T", OpSchema::Optional)
      .Output(0, "Y", "output [N, oC, out1, ...]", "T")
      .TypeConstraint("T", float_types(), "floating-point tensors")
      .TypeAndShapeInferenceFunction(deform_conv_inference);
}

// ---- QuantizeLinear, DequantizeLinear -------------------------------------------------------------

OpSchema dequantize_linear() {
  return EPHOST_OPSET_SCHEMA("DequantizeLinear", kOpset)
      .SetDoc("y = (x - x_zero_point) * x_scale, per tensor (scalar scale) or per axis (1-D scale along axis). "
              "Opset 19 adds float8 inputs and float16 and bfloat16 scales: y takes the scale's element type.")
      .Attr("axis", "the axis of a 1-D scale (negative counts from the back)", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "x", "quantized tensor", "T1")
      .Input(1, "x_scale", "scale: a scalar or 1-D along axis", "T2")
      .Input(2, "x_zero_point", "zero point, of x_scale's shape (default 0)", "T1", OpSchema::Optional)
      .Output(0, "y", "dequantized tensor, of x's shape", "T2")
      .TypeConstraint("T1", tensor_types({"int8", "uint8", "int32"}), "quantized types")
      .TypeConstraint("T2", float_types_with_bfloat_no_double(), "scale and output types")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
}

OpSchema quantize_linear() {
  return EPHOST_OPSET_SCHEMA("QuantizeLinear", kOpset)
      .SetDoc("y = saturate(round(x / y_scale) + y_zero_point), rounding half to even, per tensor or per axis. "
              "y takes y_zero_point's element type (uint8 when it is absent). Opset 19 adds float16 and bfloat16 "
              "inputs, float8 outputs and saturate (for float8 outputs).")
      .Attr("axis", "the axis of a 1-D scale (negative counts from the back)", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("saturate", kSaturateDoc, AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "x", "tensor to quantize", "T1")
      .Input(1, "y_scale", "scale: a scalar or 1-D along axis", "T1")
      .Input(2, "y_zero_point", "zero point, of y_scale's shape (default 0 of uint8)", "T2", OpSchema::Optional)
      .Output(0, "y", "quantized tensor, of x's shape", "T2")
      .TypeConstraint("T1", concat(float_types_with_bfloat_no_double(), tensor_types({"int32"})), "input types")
      .TypeConstraint("T2", quantized_types(), "quantized types")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        if (has_input(ctx, 2)) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
        else onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
        if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
}

// ---- Equal ----------------------------------------------------------------------------------------

OpSchema equal() {
  return EPHOST_OPSET_SCHEMA("Equal", kOpset)
      .SetDoc("Element-wise A == B with multidirectional (numpy-style) broadcasting. Opset 19 adds strings.")
      .Input(0, "A", "first operand", "T")
      .Input(1, "B", "second operand", "T")
      .Output(0, "C", "bool result, of the broadcast shape", "T1")
      .TypeConstraint("T", onnx_types("Equal", 13, "T", tensor_types({"string"})), "comparable types")
      .TypeConstraint("T1", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("Equal", 13));
}

// ---- Identity, Reshape, Shape, Size ---------------------------------------------------------------

OpSchema identity() {
  return EPHOST_OPSET_SCHEMA("Identity", kOpset)
      .SetDoc("The input, unchanged (a tensor, a sequence or an optional). Opset 19 adds the float8 types.")
      .Input(0, "input", "any value", "V")
      .Output(0, "output", "the same value", "V")
      .TypeConstraint("V", onnx_types("Identity", 16, "V", new_types_of_opset(kOpset)), "tensors, sequences and optionals")
      .TypeAndShapeInferenceFunction(onnx_inference("Identity", 16))
      .PartialDataPropagationFunction(onnx_data_propagation("Identity", 16));
}

OpSchema reshape() {
  return EPHOST_OPSET_SCHEMA("Reshape", kOpset)
      .SetDoc("The data with a new shape of the same element count: a 0 in shape copies the input dimension "
              "(or, with allowzero, means an empty dimension) and one -1 is inferred. Opset 19 adds float8.")
      .Attr("allowzero", "1: a 0 in shape is a dimension of size 0 (then shape may not also hold -1)",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "data", "input tensor", "T")
      .Input(1, "shape", "the new shape", "tensor(int64)")
      .Output(0, "reshaped", "reshaped data", "T")
      .TypeConstraint("T", onnx_types("Reshape", 14, "T", new_types_of_opset(kOpset)), "any tensor type")
      .TypeAndShapeInferenceFunction(onnx_inference("Reshape", 14))
      .PartialDataPropagationFunction(onnx_data_propagation("Reshape", 14));
}

OpSchema shape() {
  return EPHOST_OPSET_SCHEMA("Shape", kOpset)
      .SetDoc("The input's shape as a 1-D int64 tensor, optionally the slice [start, end) of it (negative values "
              "count from the back, out-of-range ones are clamped). Opset 19 adds float8 inputs.")
      .Attr("end", "end of the slice, exclusive (default: the rank)", AttributeProto::INT, false)
      .Attr("start", "start of the slice", AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "data", "input tensor", "T")
      .Output(0, "shape", "its shape", "T1")
      .TypeConstraint("T", onnx_types("Shape", 15, "T", new_types_of_opset(kOpset)), "any tensor type")
      .TypeConstraint("T1", {"tensor(int64)"}, "int64")
      .TypeAndShapeInferenceFunction(onnx_inference("Shape", 15))
      .PartialDataPropagationFunction(onnx_data_propagation("Shape", 15));
}

OpSchema size() {
  return EPHOST_OPSET_SCHEMA("Size", kOpset)
      .SetDoc("The input's element count as an int64 scalar. Opset 19 adds float8 inputs.")
      .Input(0, "data", "input tensor", "T")
      .Output(0, "size", "its element count", "T1")
      .TypeConstraint("T", onnx_types("Size", 13, "T", new_types_of_opset(kOpset)), "any tensor type")
      .TypeConstraint("T1", {"tensor(int64)"}, "int64")
      .TypeAndShapeInferenceFunction(onnx_inference("Size", 13))
      .PartialDataPropagationFunction(onnx_data_propagation("Size", 13));
}

// ---- If, Loop, Scan -------------------------------------------------------------------------------

OpSchema if_op() {
  return EPHOST_OPSET_SCHEMA("If", kOpset)
      .SetDoc("Runs then_branch when cond is true, else else_branch; the node's outputs are the branch's. "
              "Opset 19 adds the float8 types.")
      .Attr("else_branch", "graph run when cond is false", AttributeProto::GRAPH, true)
      .Attr("then_branch", "graph run when cond is true", AttributeProto::GRAPH, true)
      .Input(0, "cond", "a one-element bool tensor", "B")
      .Output(0, "outputs", "the outputs of the branch run", "V", OpSchema::Variadic, false)
      .TypeConstraint("V", onnx_types("If", 16, "V", new_types_of_opset(kOpset)), "tensors, sequences and optionals")
      .TypeConstraint("B", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("If", 16));
}

OpSchema loop() {
  return EPHOST_OPSET_SCHEMA("Loop", kOpset)
      .SetDoc("Runs body while the trip count M is not reached and cond holds: body takes (iteration, cond, "
              "loop-carried values...) and returns (cond, loop-carried values..., scan outputs...); the node "
              "returns the final loop-carried values and the scan outputs stacked. Opset 19 adds float8.")
      .Attr("body", "the loop body", AttributeProto::GRAPH, true)
      .Input(0, "M", "maximum trip count (an int64 scalar; absent: none)", "I", OpSchema::Optional)
      .Input(1, "cond", "initial condition (a bool scalar; absent: true)", "B", OpSchema::Optional)
      .Input(2, "v_initial", "initial loop-carried values", "V", OpSchema::Variadic, false, 0)
      .Output(0, "v_final_and_scan_outputs", "final loop-carried values, then scan outputs", "V",
              OpSchema::Variadic, false)
      .TypeConstraint("V", onnx_types("Loop", 16, "V", new_types_of_opset(kOpset)), "tensors, sequences and optionals")
      .TypeConstraint("I", {"tensor(int64)"}, "int64")
      .TypeConstraint("B", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("Loop", 16));
}

OpSchema scan() {
  return EPHOST_OPSET_SCHEMA("Scan", kOpset)
      .SetDoc("Runs body once per slice of the scan inputs along their scan axes, threading the state "
              "variables through; returns the final states and the body's scan outputs stacked along their "
              "axes. Opset 19 adds float8.")
      .Attr("body", "the body, run once per iteration", AttributeProto::GRAPH, true)
      .Attr("num_scan_inputs", "how many of the inputs are scanned (the last ones)", AttributeProto::INT, true)
      .Attr("scan_input_axes", "the axis each scan input is sliced along (default 0)", AttributeProto::INTS, false)
      .Attr("scan_input_directions", "0: forward, 1: reverse, per scan input", AttributeProto::INTS, false)
      .Attr("scan_output_axes", "the axis each scan output is stacked along (default 0)", AttributeProto::INTS, false)
      .Attr("scan_output_directions", "0: appended, 1: prepended, per scan output", AttributeProto::INTS, false)
      .Input(0, "initial_state_and_scan_inputs", "initial states, then scan inputs", "V", OpSchema::Variadic, false)
      .Output(0, "final_state_and_scan_outputs", "final states, then scan outputs", "V", OpSchema::Variadic, false)
      .TypeConstraint("V", onnx_types("Scan", 16, "V", new_types_of_opset(kOpset)), "any tensor type")
      .TypeAndShapeInferenceFunction(onnx_inference("Scan", 16));
}

}  // namespace

void add_opset19_schemas(std::vector<OpSchema>& out) {
  out.push_back(average_pool());
  out.push_back(cast());
  out.push_back(cast_like());
  out.push_back(constant());
  out.push_back(deform_conv());
  out.push_back(dequantize_linear());
  out.push_back(equal());
  out.push_back(identity());
  out.push_back(if_op());
  out.push_back(loop());
  out.push_back(pad_schema(kOpset));
  out.push_back(quantize_linear());
  out.push_back(reshape());
  out.push_back(resize_schema(kOpset));
  out.push_back(scan());
  out.push_back(shape());
  out.push_back(size());
}

}  // namespace ephost::opsets
