// ai.onnx opset 21 (ONNX 1.16): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). DequantizeLinear and QuantizeLinear gained blocked
// quantization (block_size) and QuantizeLinear an output_dtype; GroupNormalization's scale and bias
// became per channel, with a stash_type for its statistics. The others only accept more element
// types: int4 and uint4 (and float8 for QLinearMatMul).
//
// onnx 1.12's TensorProto has no int4, uint4 or float8 values and its type-string parser refuses them,
// so no schema here names them: these versions accept the element types of the previous version until
// the host knows the new types (issue 23, "new element types").
#include <onnx/defs/function.h>

#include "opsets/opsets.h"
#include "opsets/quantize_schemas.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr int kOpset = 21;

// ---- GroupNormalization ---------------------------------------------------------------------------

// Statistics per (sample, group) in stash_type, over the group's channels and spatial positions; the
// normalized values return to X's type and take one scale and bias per channel.
bool group_normalization_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema,
                              onnx::FunctionProto& body) {
  const AttributeProto* eps = ctx.getAttribute("epsilon");
  const AttributeProto* groups = ctx.getAttribute("num_groups");
  const AttributeProto* stash = ctx.getAttribute("stash_type");
  if (!groups) return false;
  const float epsilon = eps ? eps->f() : 1e-5f;
  const int64_t stash_type = stash ? stash->i() : static_cast<int64_t>(onnx::TensorProto::FLOAT);
  onnx::FunctionBuilder b(body);
  b.Const("epsilon_f", epsilon);
  b.Const1D("groups", groups->i());
  b.Add(("stashed = Cast <to = " + std::to_string(stash_type) + "> (X)").c_str());
  b.Add(R"ONNX(
    epsilon_t = CastLike (epsilon_f, stashed)
    x_shape = Shape (X)
    zero = Constant <value = int64[1] {0}> ()
    rest = Constant <value = int64[1] {-1}> ()
    group_shape = Concat <axis = 0> (zero, groups, rest)
    grouped = Reshape (stashed, group_shape)
    axes = Constant <value = int64[1] {2}> ()
    mean = ReduceMean <keepdims = 1> (grouped, axes)
    centred = Sub (grouped, mean)
    squared = Mul (centred, centred)
    variance = ReduceMean <keepdims = 1> (squared, axes)
    variance_eps = Add (variance, epsilon_t)
    deviation = Sqrt (variance_eps)
    normalized = Div (centred, deviation)
    normalized_x = CastLike (normalized, X)
    channels = Shape (scale)
    channel_shape = Concat <axis = 0> (zero, channels, rest)
    per_channel = Reshape (normalized_x, channel_shape)
    param_shape = Constant <value = int64[2] {-1, 1}> ()
    scale_c = Reshape (scale, param_shape)
    bias_c = Reshape (bias, param_shape)
    scaled = Mul (per_channel, scale_c)
    shifted = Add (scaled, bias_c)
    Y = Reshape (shifted, x_shape)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

void group_normalization_inference(InferenceContext& ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  const AttributeProto* groups = ctx.getAttribute("num_groups");
  if (groups && groups->i() < 1) fail_shape_inference("GroupNormalization: num_groups must be positive");
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() < 2) fail_shape_inference("GroupNormalization: X must have rank 2 or more [N, C, ...]");
  const auto& c = x.dim(1);
  if (groups && c.has_dim_value() && c.dim_value() % groups->i() != 0)
    fail_shape_inference("GroupNormalization: the channels (", c.dim_value(), ") are not a multiple of num_groups (",
                         groups->i(), ")");
  for (size_t i : {size_t(1), size_t(2)})
    if (onnx::hasInputShape(ctx, i)) {
      const TensorShapeProto& s = onnx::getInputShape(ctx, i);
      if (s.dim_size() != 1 || (c.has_dim_value() && s.dim(0).has_dim_value() && s.dim(0).dim_value() != c.dim_value()))
        fail_shape_inference("GroupNormalization: ", i == 1 ? "scale" : "bias",
                             " must have one value per channel of X (shape [C])");
    }
}

OpSchema group_normalization() {
  return EPHOST_OPSET_SCHEMA("GroupNormalization", kOpset)
      .SetDoc("Group normalization: the channels are divided into num_groups groups; each (sample, group) is "
              "normalized by its mean and variance (computed in stash_type), then each channel is scaled and "
              "shifted by its own scale and bias. Opset 21 makes scale and bias per channel (opset 18 had one "
              "per group) and adds stash_type.")
      .Attr("epsilon", "added to the variance to avoid division by zero", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "number of groups the channels are divided into", AttributeProto::INT, true)
      .Attr("stash_type", "element type (TensorProto.DataType) the mean and variance are computed in",
            AttributeProto::INT, static_cast<int64_t>(onnx::TensorProto::FLOAT))
      .Input(0, "X", "input [N, C, D1, ...]", "T")
      .Input(1, "scale", "scale per channel [C]", "T")
      .Input(2, "bias", "bias per channel [C]", "T")
      .Output(0, "Y", "output, of X's shape", "T")
      .TypeConstraint("T", float_types_with_bfloat(), "floating-point tensors")
      .SetContextDependentFunctionBodyBuilder(group_normalization_body)
      .TypeAndShapeInferenceFunction(group_normalization_inference);
}

}  // namespace

void add_opset21_schemas(std::vector<OpSchema>& out) {
  for (const char* op : {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop",
                         "Pad", "QLinearMatMul", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose",
                         "Unsqueeze"})
    out.push_back(types_only_version(op, kOpset));
  out.push_back(dequantize_linear_schema(kOpset));
  out.push_back(group_normalization());
  out.push_back(quantize_linear_schema(kOpset));
}

}  // namespace ephost::opsets
