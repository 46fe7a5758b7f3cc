// ai.onnx opset 18 (ONNX 1.13): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). Bitwise{And,Or,Xor,Not}, CenterCropPad, Col2Im,
// GroupNormalization and Mish are new; LpPool, OptionalGetElement, OptionalHasElement, Pad, the
// Reduce* family (but ReduceSum), Resize, ScatterElements, ScatterND and Split changed.
#include <onnx/defs/function.h>

#include <algorithm>
#include <cmath>

#include "opsets/opsets.h"
#include "opsets/schema_util.h"
#include "opsets/shared_schemas.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr int kOpset = 18;

// ---- Bitwise -------------------------------------------------------------------------------------

OpSchema bitwise_binary(const char* name, const char* what) {
  return EPHOST_OPSET_SCHEMA(name, kOpset)
      .SetDoc(std::string("Bitwise ") + what +
              " of two integer tensors, element by element, with multidirectional (numpy-style) broadcasting.")
      .Input(0, "A", "first input operand", "T")
      .Input(1, "B", "second input operand", "T")
      .Output(0, "C", "the result, of the broadcast shape of A and B", "T")
      .TypeConstraint("T", integer_types(), "integer tensors")
      .TypeAndShapeInferenceFunction(broadcast_binary_inference);
}

OpSchema bitwise_not() {
  return EPHOST_OPSET_SCHEMA("BitwiseNot", kOpset)
      .SetDoc("Bitwise NOT (one's complement) of an integer tensor, element by element.")
      .Input(0, "X", "input tensor", "T")
      .Output(0, "Y", "output tensor, of X's shape", "T")
      .TypeConstraint("T", integer_types(), "integer tensors")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
}

// The `axes` attribute, or every axis of a rank-`rank` input when it is absent.
std::vector<int64_t> axes_attribute_or_all(InferenceContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  return axes;
}

// Normalizes `axes` to [0, rank) in place; an axis listed twice fails inference, naming `op`. Returns
// which axes are listed.
std::vector<bool> normalize_distinct_axes(std::vector<int64_t>& axes, int64_t rank, const std::string& op) {
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    a = normalize_axis(a, rank, (op + ": axis").c_str());
    if (seen[a]) fail_shape_inference(op, ": axis ", a, " appears twice in axes");
    seen[a] = true;
  }
  return seen;
}

// ---- CenterCropPad --------------------------------------------------------------------------------

void center_crop_pad_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  std::vector<int64_t> axes = axes_attribute_or_all(ctx, rank);
  const std::vector<bool> seen = normalize_distinct_axes(axes, rank, "CenterCropPad");
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  for (int64_t i = 0; i < rank; ++i) *out->add_dim() = seen[i] ? TensorShapeProto::Dimension() : in.dim(i);
  const auto shape = constant_ints(ctx, 1);
  if (!shape) return;
  if (shape->size() != axes.size())
    fail_shape_inference("CenterCropPad: shape has ", shape->size(), " values but there are ", axes.size(),
                         " axes to crop or pad");
  for (size_t i = 0; i < axes.size(); ++i) {
    if ((*shape)[i] < 0) fail_shape_inference("CenterCropPad: shape[", i, "] is negative: ", (*shape)[i]);
    out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value((*shape)[i]);
  }
}

// Pads every cropped or padded axis to max(input, shape) (split evenly, the extra element at the end),
// then slices the centred window of `shape` (the extra element dropped at the end).
bool center_crop_pad_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema,
                          onnx::FunctionProto& body) {
  onnx::FunctionBuilder b(body);
  const AttributeProto* axes = ctx.getAttribute("axes");
  if (axes) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(axes->ints_size());
    for (int64_t a : axes->ints()) t.add_int64_data(a);
    b.Const("axes_input", t);
    b.Add("x_shape_all = Shape (input_data)");
    b.Add("x_shape = Gather <axis = 0> (x_shape_all, axes_input)");
  } else {
    b.Add("x_shape = Shape (input_data)");
  }
  b.Add(R"ONNX(
    target = Cast <to = 7> (shape)
    k2 = Constant <value = int64[1] {2}> ()
    padded_shape = Max (x_shape, target)
    pad_amount = Sub (padded_shape, x_shape)
    pad_before = Div (pad_amount, k2)
    pad_after = Sub (pad_amount, pad_before)
    pads = Concat <axis = 0> (pad_before, pad_after)
  )ONNX");
  if (axes) {
    b.Add("padded = Pad (input_data, pads, , axes_input)");
  } else {
    b.Add("padded = Pad (input_data, pads)");
  }
  b.Add(R"ONNX(
    crop_amount = Sub (padded_shape, target)
    starts = Div (crop_amount, k2)
    ends = Add (starts, target)
  )ONNX");
  if (axes) {
    b.Add("output_data = Slice (padded, starts, ends, axes_input)");
  } else {
    b.Add("output_data = Slice (padded, starts, ends)");
  }
  schema.BuildFunction(body);
  return true;
}

OpSchema center_crop_pad() {
  return EPHOST_OPSET_SCHEMA("CenterCropPad", kOpset)
      .SetDoc("Center crops or pads the input to the given shape along the given axes: an axis longer than "
              "its target is cropped to the centred window, a shorter one padded with zeros on both sides "
              "(an odd difference puts the extra element at the end).")
      .Attr("axes", "axes to crop or pad (negative counts from the back); all when absent",
            AttributeProto::INTS, false)
      .Input(0, "input_data", "input to crop or pad", "T")
      .Input(1, "shape", "1-D target sizes, one per axis in axes (or per input axis)", "Tind")
      .Output(0, "output_data", "the cropped or padded tensor", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeConstraint("Tind", index_types(), "index types")
      .SetContextDependentFunctionBodyBuilder(center_crop_pad_body)
      .TypeAndShapeInferenceFunction(center_crop_pad_inference);
}

// ---- Col2Im ---------------------------------------------------------------------------------------

void col2im_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto image = constant_ints(ctx, 1), block = constant_ints(ctx, 2);
  int64_t n = -1;
  if (image) n = static_cast<int64_t>(image->size());
  else if (onnx::hasInputShape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() == 1 &&
           onnx::getInputShape(ctx, 1).dim(0).has_dim_value())
    n = onnx::getInputShape(ctx, 1).dim(0).dim_value();
  if (image && block && image->size() != block->size())
    fail_shape_inference("Col2Im: image_shape has ", image->size(), " values but block_shape ", block->size());
  if (n < 0) return;
  if (n < 1) fail_shape_inference("Col2Im: image_shape must have at least one value");
  for (const char* attr : {"dilations", "strides"}) {
    std::vector<int64_t> v;
    if (onnx::getRepeatedAttribute(ctx, attr, v)) {
      if (static_cast<int64_t>(v.size()) != n)
        fail_shape_inference("Col2Im: ", attr, " has ", v.size(), " values but the image has ", n, " dimensions");
      for (int64_t x : v)
        if (x < 1) fail_shape_inference("Col2Im: ", attr, " must be positive, got ", x);
    }
  }
  std::vector<int64_t> pads;
  if (onnx::getRepeatedAttribute(ctx, "pads", pads) && static_cast<int64_t>(pads.size()) != 2 * n)
    fail_shape_inference("Col2Im: pads has ", pads.size(), " values but must have ", 2 * n);
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  TensorShapeProto::Dimension batch, channels;
  if (onnx::hasInputShape(ctx, 0)) {
    const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
    if (in.dim_size() != 3) fail_shape_inference("Col2Im: input must have rank 3 [N, C * prod(block_shape), L]");
    batch = in.dim(0);
    if (block && in.dim(1).has_dim_value()) {
      int64_t prod = 1;
      for (int64_t b : *block) {
        if (b < 1) fail_shape_inference("Col2Im: block_shape must be positive, got ", b);
        prod *= b;
      }
      if (in.dim(1).dim_value() % prod != 0)
        fail_shape_inference("Col2Im: input dimension 1 (", in.dim(1).dim_value(),
                             ") is not a multiple of the block size ", prod);
      channels.set_dim_value(in.dim(1).dim_value() / prod);
    }
  }
  *out->add_dim() = batch;
  *out->add_dim() = channels;
  for (int64_t i = 0; i < n; ++i) {
    auto* d = out->add_dim();
    if (image) d->set_dim_value((*image)[i]);
  }
}

OpSchema col2im() {
  return EPHOST_OPSET_SCHEMA("Col2Im", kOpset)
      .SetDoc("Rearranges column blocks back into a multidimensional image, summing overlapping values: the "
              "inverse of im2col. input is [N, C * prod(block_shape), L], L the number of block positions.")
      .Attr("dilations", "dilation per image axis (default 1)", AttributeProto::INTS, false)
      .Attr("pads", "padding at the beginning and end of each image axis (default 0)", AttributeProto::INTS, false)
      .Attr("strides", "stride per image axis (default 1)", AttributeProto::INTS, false)
      .Input(0, "input", "the column blocks [N, C * prod(block_shape), L]", "T")
      .Input(1, "image_shape", "1-D spatial shape of the image", "tensor(int64)")
      .Input(2, "block_shape", "1-D shape of a block", "tensor(int64)")
      .Output(0, "output", "the image [N, C, image_shape...]", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeAndShapeInferenceFunction(col2im_inference);
}

// ---- GroupNormalization ---------------------------------------------------------------------------

// Statistics per (sample, group) over the group's channels and spatial positions; scale and bias
// hold one value per group (opset 18; opset 21 made them per channel).
bool group_normalization_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema,
                              onnx::FunctionProto& body) {
  const AttributeProto* eps = ctx.getAttribute("epsilon");
  const float epsilon = eps ? eps->f() : 1e-5f;
  onnx::FunctionBuilder b(body);
  b.Const("epsilon_f", epsilon);
  b.Add(R"ONNX(
    epsilon_t = CastLike (epsilon_f, X)
    x_shape = Shape (X)
    zero = Constant <value = int64[1] {0}> ()
    rest = Constant <value = int64[1] {-1}> ()
    groups = Shape (scale)
    group_shape = Concat <axis = 0> (zero, groups, rest)
    grouped = Reshape (X, group_shape)
    axes = Constant <value = int64[1] {2}> ()
    mean = ReduceMean <keepdims = 1> (grouped, axes)
    centred = Sub (grouped, mean)
    squared = Mul (centred, centred)
    variance = ReduceMean <keepdims = 1> (squared, axes)
    variance_eps = Add (variance, epsilon_t)
    deviation = Sqrt (variance_eps)
    normalized = Div (centred, deviation)
    param_shape = Constant <value = int64[3] {1, -1, 1}> ()
    scale_g = Reshape (scale, param_shape)
    bias_g = Reshape (bias, param_shape)
    scaled = Mul (normalized, scale_g)
    shifted = Add (scaled, bias_g)
    Y = Reshape (shifted, x_shape)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

void group_normalization_inference(InferenceContext& ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  const AttributeProto* groups = ctx.getAttribute("num_groups");
  if (groups && groups->i() < 1) fail_shape_inference("GroupNormalization: num_groups must be positive");
  if (groups && onnx::hasInputShape(ctx, 0)) {
    const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
    if (x.dim_size() < 2) fail_shape_inference("GroupNormalization: X must have rank 2 or more [N, C, ...]");
    if (x.dim(1).has_dim_value() && x.dim(1).dim_value() % groups->i() != 0)
      fail_shape_inference("GroupNormalization: the channels (", x.dim(1).dim_value(),
                           ") are not a multiple of num_groups (", groups->i(), ")");
  }
  for (size_t i : {size_t(1), size_t(2)})
    if (groups && onnx::hasInputShape(ctx, i)) {
      const TensorShapeProto& s = onnx::getInputShape(ctx, i);
      if (s.dim_size() != 1 || (s.dim(0).has_dim_value() && s.dim(0).dim_value() != groups->i()))
        fail_shape_inference("GroupNormalization: ", i == 1 ? "scale" : "bias", " must have shape [num_groups] = [",
                             groups->i(), "]");
    }
}

OpSchema group_normalization() {
  return EPHOST_OPSET_SCHEMA("GroupNormalization", kOpset)
      .SetDoc("Group normalization: the channels are divided into num_groups groups; each (sample, group) is "
              "normalized by its mean and variance, then scaled and shifted by the group's scale and bias.")
      .Attr("epsilon", "added to the variance to avoid division by zero", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "number of groups the channels are divided into", AttributeProto::INT, true)
      .Input(0, "X", "input [N, C, D1, ...]", "T")
      .Input(1, "scale", "scale per group [num_groups]", "T")
      .Input(2, "bias", "bias per group [num_groups]", "T")
      .Output(0, "Y", "output, of X's shape", "T")
      .TypeConstraint("T", float_types_with_bfloat(), "floating-point tensors")
      .SetContextDependentFunctionBodyBuilder(group_normalization_body)
      .TypeAndShapeInferenceFunction(group_normalization_inference);
}

// ---- LpPool ---------------------------------------------------------------------------------------

}  // namespace

void pool_shape_inference(InferenceContext& ctx, const char* op) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  if (rank < 2) fail_shape_inference(op, ": X must have rank 2 or more [N, C, ...]");
  const size_t n = static_cast<size_t>(rank - 2);
  std::vector<int64_t> kernel, strides, dilations, pads;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) fail_shape_inference(op, ": kernel_shape is required");
  if (kernel.size() != n)
    fail_shape_inference(op, ": kernel_shape has ", kernel.size(), " values but X has ", n, " spatial axes");
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides)) strides.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations)) dilations.assign(n, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads)) pads.assign(2 * n, 0);
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    fail_shape_inference(op, ": strides and dilations need one value per spatial axis, pads two");
  for (size_t i = 0; i < n; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + n] < 0)
      fail_shape_inference(op, ": kernel_shape, strides and dilations must be positive and pads not negative");
  const AttributeProto* auto_pad_attr = ctx.getAttribute("auto_pad");
  const std::string auto_pad = auto_pad_attr ? auto_pad_attr->s() : "NOTSET";
  const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  *out->add_dim() = in.dim(0);
  *out->add_dim() = in.dim(1);
  for (size_t i = 0; i < n; ++i) {
    auto* d = out->add_dim();
    const auto& src = in.dim(static_cast<int>(i + 2));
    if (!src.has_dim_value()) continue;
    const int64_t size = src.dim_value(), window = (kernel[i] - 1) * dilations[i] + 1;
    int64_t o;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o = (size + strides[i] - 1) / strides[i];
    } else {
      const int64_t padded = auto_pad == "VALID" ? size : size + pads[i] + pads[i + n];
      if (padded < window) fail_shape_inference(op, ": the window is larger than the padded input");
      const int64_t span = padded - window;
      o = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
      // A window that would start in the end padding is dropped.
      if (ceil_mode && auto_pad != "VALID" && (o - 1) * strides[i] >= size + pads[i]) --o;
    }
    d->set_dim_value(o);
  }
}

namespace {

void lp_pool_inference(InferenceContext& ctx) { pool_shape_inference(ctx, "LpPool"); }

OpSchema lp_pool() {
  return EPHOST_OPSET_SCHEMA("LpPool", kOpset)
      .SetDoc("Lp pooling: each output element is the p-norm (sum of |x|^p)^(1/p) of its window. Opset 18 adds "
              "dilations and ceil_mode.")
      .Attr("auto_pad", "NOTSET, SAME_UPPER, SAME_LOWER or VALID", AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "1: output sizes rounded up instead of down", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("dilations", "dilation per spatial axis (default 1)", AttributeProto::INTS, false)
      .Attr("kernel_shape", "window size per spatial axis", AttributeProto::INTS, true)
      .Attr("p", "the p of the p-norm", AttributeProto::INT, static_cast<int64_t>(2))
      .Attr("pads", "padding at the beginning and end of each spatial axis", AttributeProto::INTS, false)
      .Attr("strides", "stride per spatial axis (default 1)", AttributeProto::INTS, false)
      .Input(0, "X", "input [N, C, D1, ...]", "T")
      .Output(0, "Y", "pooled output", "T")
      .TypeConstraint("T", float_types(), "floating-point tensors")
      .TypeAndShapeInferenceFunction(lp_pool_inference);
}

// ---- Mish -----------------------------------------------------------------------------------------

OpSchema mish() {
  return EPHOST_OPSET_SCHEMA("Mish", kOpset)
      .SetDoc("Mish activation, element by element: y = x * tanh(softplus(x)) = x * tanh(ln(1 + e^x)).")
      .Input(0, "X", "input tensor", "T")
      .Output(0, "Y", "output tensor, of X's shape", "T")
      .TypeConstraint("T", float_types(), "floating-point tensors")
      .FunctionBody(R"ONNX(
        {
          softplus_x = Softplus (X)
          tanh_softplus_x = Tanh (softplus_x)
          Y = Mul (X, tanh_softplus_x)
        }
      )ONNX")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
}

// ---- Optional -------------------------------------------------------------------------------------

TypeList optional_or_plain_types() {
  return concat(concat(OpSchema::all_optional_types(), OpSchema::all_tensor_types()),
                OpSchema::all_tensor_sequence_types());
}

void optional_get_element_inference(InferenceContext& ctx) {
  const onnx::TypeProto* in = ctx.getInputType(0);
  if (!in) return;
  if (in->value_case() == onnx::TypeProto::kOptionalType) {
    if (in->optional_type().has_elem_type()) *ctx.getOutputType(0) = in->optional_type().elem_type();
  } else if (in->value_case() == onnx::TypeProto::kTensorType ||
             in->value_case() == onnx::TypeProto::kSequenceType) {
    *ctx.getOutputType(0) = *in;
  } else {
    fail_type_inference("OptionalGetElement: the input must be an optional, a tensor or a sequence");
  }
}

OpSchema optional_get_element() {
  return EPHOST_OPSET_SCHEMA("OptionalGetElement", kOpset)
      .SetDoc("The element of an optional value (an error when it is empty); a tensor or sequence input is "
              "returned as it is.")
      .Input(0, "input", "an optional, a tensor or a sequence", "O")
      .Output(0, "output", "the element", "V")
      .TypeConstraint("O", optional_or_plain_types(), "optionals, tensors and sequences")
      .TypeConstraint("V", concat(OpSchema::all_tensor_types(), OpSchema::all_tensor_sequence_types()),
                      "tensors and sequences")
      .TypeAndShapeInferenceFunction(optional_get_element_inference);
}

OpSchema optional_has_element() {
  return EPHOST_OPSET_SCHEMA("OptionalHasElement", kOpset)
      .SetDoc("True when the input is given and, for an optional, not empty.")
      .Input(0, "input", "an optional, a tensor or a sequence; may be omitted", "O", OpSchema::Optional)
      .Output(0, "output", "a scalar bool", "B")
      .TypeConstraint("O", optional_or_plain_types(), "optionals, tensors and sequences")
      .TypeConstraint("B", {"tensor(bool)"}, "bool scalar")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        onnx::getOutputShape(ctx, 0)->Clear();
      });
}

// ---- Pad ------------------------------------------------------------------------------------------

void pad_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  for (int64_t i = 0; i < rank; ++i) out->add_dim();
  std::vector<int64_t> axes;
  if (has_input(ctx, 3)) {
    const auto a = constant_ints(ctx, 3);
    if (!a) return;
    axes = *a;
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const std::vector<bool> seen = normalize_distinct_axes(axes, rank, "Pad");
  for (int64_t i = 0; i < rank; ++i)
    if (!seen[i]) *out->mutable_dim(static_cast<int>(i)) = in.dim(static_cast<int>(i));
  const auto pads = constant_ints(ctx, 1);
  if (!pads) return;
  const size_t n = axes.size();
  if (pads->size() != 2 * n)
    fail_shape_inference("Pad: pads has ", pads->size(), " values but must have ", 2 * n, " (two per padded axis)");
  for (size_t i = 0; i < n; ++i) {
    const auto& src = in.dim(static_cast<int>(axes[i]));
    if (!src.has_dim_value()) continue;
    const int64_t size = src.dim_value() + (*pads)[i] + (*pads)[i + n];
    if (size < 0) fail_shape_inference("Pad: axis ", axes[i], " would have negative size ", size);
    out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(size);
  }
}

}  // namespace

OpSchema pad_schema(int since) {
  const bool wrap = since >= 19;
  return EPHOST_OPSET_SCHEMA("Pad", since)
      .SetDoc(std::string("Pads a tensor (") + (wrap ? "constant, reflect, edge or wrap" : "constant, reflect or edge") +
              " mode); pads holds [x1_begin, x2_begin, ..., x1_end, x2_end, ...] for the axes given (all when axes "
              "is omitted); negative pads crop. Opset 18 adds the axes input" +
              (wrap ? "; opset 19 the wrap mode (circular padding: the values wrap around to the other side)." : "."))
      .Attr("mode", wrap ? "constant, reflect, edge or wrap" : "constant, reflect or edge", AttributeProto::STRING,
            std::string("constant"))
      .Input(0, "data", "input tensor", "T")
      .Input(1, "pads", "1-D int64 pads, two per padded axis", "tensor(int64)")
      .Input(2, "constant_value", "scalar padding value for constant mode (default 0, false or empty string)",
             "T", OpSchema::Optional)
      .Input(3, "axes", "1-D axes that pads refers to (negative counts from the back)", "Tind", OpSchema::Optional)
      .Output(0, "output", "padded tensor", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeConstraint("Tind", index_types(), "index types")
      .TypeAndShapeInferenceFunction(pad_inference);
}

namespace {

// ---- Reduce* --------------------------------------------------------------------------------------

void reduce_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  if (has_input(ctx, 1)) {
    const auto a = constant_ints(ctx, 1);
    if (!a) {
      if (keepdims) {  // rank kept, which dimensions shrink unknown
        TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
        out->Clear();
        for (int64_t i = 0; i < rank; ++i) out->add_dim();
      }
      return;
    }
    axes = *a;
  }
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  if (axes.empty() && noop) {
    *out = in;
    return;
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[normalize_axis(a, rank, "Reduce: axis")] = true;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) *out->add_dim() = in.dim(static_cast<int>(i));
    else if (keepdims) out->add_dim()->set_dim_value(1);
  }
}

}  // namespace

OpSchema reduce_schema(int since, const char* name, const char* what, const TypeList& types, const char* body) {
  OpSchema s = EPHOST_OPSET_SCHEMA(name, since);
  s.SetDoc(std::string("Computes the ") + what +
           " of the input's elements along the given axes. Opset 18 takes axes as an optional input: when it "
           "is omitted or empty, every axis is reduced, or none when noop_with_empty_axes is 1." +
           (since >= 20 ? " Opset 20 accepts bool tensors (ReduceMax: any true; ReduceMin: all true)." : ""))
      .Attr("keepdims", "1: reduced axes are kept with size 1", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("noop_with_empty_axes", "1: empty or omitted axes leave the input unchanged; 0: reduce every axis",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "data", "input tensor", "T")
      .Input(1, "axes", "1-D int64 axes to reduce (negative counts from the back)", "tensor(int64)",
             OpSchema::Optional)
      .Output(0, "reduced", "reduced tensor", "T")
      .TypeConstraint("T", types, "numeric tensors")
      .TypeAndShapeInferenceFunction(reduce_inference);
  if (body) s.FunctionBody(body);
  return s;
}

namespace {

OpSchema reduce(const char* name, const char* what, const TypeList& types, const char* body) {
  return reduce_schema(kOpset, name, what, types, body);
}

// ---- Resize ---------------------------------------------------------------------------------------

void resize_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  std::vector<int64_t> axes = axes_attribute_or_all(ctx, rank);
  const std::vector<bool> seen = normalize_distinct_axes(axes, rank, "Resize");
  const bool has_scales = has_input(ctx, 2), has_sizes = has_input(ctx, 3);
  if (has_scales && has_sizes) fail_shape_inference("Resize: only one of scales and sizes may be given");
  const AttributeProto* policy_attr = ctx.getAttribute("keep_aspect_ratio_policy");
  const std::string policy = policy_attr ? policy_attr->s() : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail_shape_inference("Resize: keep_aspect_ratio_policy '", policy,
                         "' is not one of stretch, not_larger, not_smaller");
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  for (int64_t i = 0; i < rank; ++i) *out->add_dim() = seen[i] ? TensorShapeProto::Dimension() : in.dim(i);
  const size_t n = axes.size();
  if (has_sizes) {
    const auto sizes = constant_ints(ctx, 3);
    if (!sizes) return;
    if (sizes->size() != n) fail_shape_inference("Resize: sizes has ", sizes->size(), " values for ", n, " axes");
    if (policy == "stretch") {
      for (size_t i = 0; i < n; ++i) out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value((*sizes)[i]);
      return;
    }
    double scale = policy == "not_larger" ? HUGE_VAL : 0.0;
    for (size_t i = 0; i < n; ++i) {
      const auto& d = in.dim(static_cast<int>(axes[i]));
      if (!d.has_dim_value() || d.dim_value() == 0) return;
      const double s = static_cast<double>((*sizes)[i]) / static_cast<double>(d.dim_value());
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (size_t i = 0; i < n; ++i)
      out->mutable_dim(static_cast<int>(axes[i]))
          ->set_dim_value(static_cast<int64_t>(
              std::floor(static_cast<double>(in.dim(static_cast<int>(axes[i])).dim_value()) * scale + 0.5)));
  } else if (has_scales) {
    const auto scales = constant_floats(ctx, 2);
    if (!scales) return;
    if (scales->empty()) return;  // an empty scales input means "use sizes", which is absent: left to the kernel
    if (scales->size() != n) fail_shape_inference("Resize: scales has ", scales->size(), " values for ", n, " axes");
    for (size_t i = 0; i < n; ++i) {
      if (!((*scales)[i] > 0)) fail_shape_inference("Resize: scales must be positive, got ", (*scales)[i]);
      const auto& d = in.dim(static_cast<int>(axes[i]));
      if (d.has_dim_value())
        out->mutable_dim(static_cast<int>(axes[i]))
            ->set_dim_value(static_cast<int64_t>(std::floor(static_cast<double>(d.dim_value()) * (*scales)[i])));
    }
  }
}

}  // namespace

OpSchema resize_schema(int since) {
  const bool symmetric = since >= 19;
  return EPHOST_OPSET_SCHEMA("Resize", since)
      .SetDoc(std::string("Resizes the input by interpolation (nearest, linear or cubic) to the given scales or "
                          "sizes. Opset 18 adds antialias (a widened filter when downscaling with linear or cubic), "
                          "axes (the axes scales, sizes and roi refer to) and keep_aspect_ratio_policy (for sizes: "
                          "stretch, not_larger, not_smaller).") +
              (symmetric ? " Opset 19 adds the coordinate transformation half_pixel_symmetric, which maps output "
                           "pixel centres to input pixel centres about the centre of the image: x_in = (x_out + "
                           "0.5) / scale - 0.5 + (in_size / 2) * (1 - output_size / (scale * in_size))."
                         : ""))
      .Attr("antialias", "1: antialiasing filter when downscaling (linear and cubic modes)", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("axes", "the axes roi, scales and sizes refer to (negative counts from the back); all when absent",
            AttributeProto::INTS, false)
      .Attr("coordinate_transformation_mode",
            symmetric ? "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric or "
                        "tf_crop_and_resize"
                      : "half_pixel, pytorch_half_pixel, align_corners, asymmetric or tf_crop_and_resize",
            AttributeProto::STRING, std::string("half_pixel"))
      .Attr("cubic_coeff_a", "the a of cubic interpolation", AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "1: weights of samples outside the input are zero (renormalized)",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("extrapolation_value", "value outside the input for tf_crop_and_resize", AttributeProto::FLOAT, 0.0f)
      .Attr("keep_aspect_ratio_policy", "stretch, not_larger or not_smaller (sizes only)", AttributeProto::STRING,
            std::string("stretch"))
      .Attr("mode", "nearest, linear or cubic", AttributeProto::STRING, std::string("nearest"))
      .Attr("nearest_mode", "round_prefer_floor, round_prefer_ceil, floor or ceil", AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .Input(0, "X", "input tensor", "T1")
      .Input(1, "roi", "1-D [starts..., ends...] per axis, for tf_crop_and_resize", "T2", OpSchema::Optional)
      .Input(2, "scales", "1-D scale per axis", "tensor(float)", OpSchema::Optional)
      .Input(3, "sizes", "1-D output size per axis", "tensor(int64)", OpSchema::Optional)
      .Output(0, "Y", "resized tensor", "T1")
      .TypeConstraint("T1", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeConstraint("T2", float_types(), "roi types")
      .TypeAndShapeInferenceFunction(resize_inference);
}

namespace {

// ---- ScatterElements, ScatterND -------------------------------------------------------------------

OpSchema scatter(const char* name, bool elements) {
  OpSchema s = EPHOST_OPSET_SCHEMA(name, kOpset);
  s.SetDoc(std::string(name) +
           ": a copy of data with the updates written at the given indices, or combined with what is there "
           "by reduction (none, add, mul; opset 18 adds max and min).")
      .Attr("reduction", "none, add, mul, max or min", AttributeProto::STRING, std::string("none"))
      .Input(0, "data", "input tensor", "T")
      .Input(1, "indices", elements ? "indices, of updates' shape" : "int64 indices [..., k]",
             elements ? "Tind" : "tensor(int64)")
      .Input(2, "updates", "values to write", "T")
      .Output(0, "output", "tensor of data's shape", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  if (elements) {
    s.Attr("axis", "the axis to scatter on (negative counts from the back)", AttributeProto::INT,
           static_cast<int64_t>(0))
        .TypeConstraint("Tind", index_types(), "index types");
  }
  return s;
}

// ---- Split ----------------------------------------------------------------------------------------

void split_inference(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  const int64_t outputs = static_cast<int64_t>(ctx.getNumOutputs());
  const AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  const bool has_split = has_input(ctx, 1);
  if (num_outputs && has_split) fail_shape_inference("Split: split and num_outputs cannot both be given");
  if (num_outputs) {
    if (num_outputs->i() < 1) fail_shape_inference("Split: num_outputs must be positive, got ", num_outputs->i());
    if (num_outputs->i() != outputs)
      fail_shape_inference("Split: num_outputs is ", num_outputs->i(), " but the node has ", outputs, " outputs");
  }
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  const int64_t axis = normalize_axis(onnx::getAttribute(ctx, "axis", 0), rank, "Split: axis");
  const auto& dim = in.dim(static_cast<int>(axis));
  std::vector<int64_t> lengths;
  if (has_split) {
    const auto s = constant_ints(ctx, 1);
    if (s) {
      if (static_cast<int64_t>(s->size()) != outputs)
        fail_shape_inference("Split: split has ", s->size(), " values but the node has ", outputs, " outputs");
      int64_t total = 0;
      for (int64_t v : *s) {
        if (v < 0) fail_shape_inference("Split: split values must not be negative, got ", v);
        total += v;
      }
      if (dim.has_dim_value() && total != dim.dim_value())
        fail_shape_inference("Split: split sums to ", total, " but axis ", axis, " has size ", dim.dim_value());
      lengths = *s;
    }
  } else if (dim.has_dim_value()) {
    const int64_t size = dim.dim_value();
    if (num_outputs) {  // ceil(size / n) each, the last one smaller
      const int64_t chunk = (size + outputs - 1) / outputs;
      for (int64_t i = 0; i < outputs; ++i) lengths.push_back(std::max<int64_t>(0, std::min(chunk, size - i * chunk)));
    } else {
      if (size % outputs != 0)
        fail_shape_inference("Split: axis ", axis, " of size ", size, " cannot be split evenly into ", outputs,
                             " outputs");
      lengths.assign(outputs, size / outputs);
    }
  }
  for (int64_t i = 0; i < outputs; ++i) {
    if (!ctx.getOutputType(i)) continue;
    TensorShapeProto* out = onnx::getOutputShape(ctx, i);
    out->Clear();
    for (int64_t d = 0; d < rank; ++d) {
      auto* od = out->add_dim();
      if (d != axis) *od = in.dim(static_cast<int>(d));
      else if (!lengths.empty()) od->set_dim_value(lengths[i]);
    }
  }
}

OpSchema split() {
  return EPHOST_OPSET_SCHEMA("Split", kOpset)
      .SetDoc("Splits a tensor along an axis into parts: of the lengths in split, or into num_outputs parts "
              "of ceil(size / num_outputs) (the last one smaller), or else into equal parts, one per output.")
      .Attr("axis", "the axis to split (negative counts from the back)", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("num_outputs", "number of parts (when split is not given)", AttributeProto::INT, false)
      .Input(0, "input", "tensor to split", "T")
      .Input(1, "split", "1-D lengths of the parts", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "the parts", "T", OpSchema::Variadic, true, 1)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "any tensor type")
      .TypeAndShapeInferenceFunction(split_inference);
}

}  // namespace

void add_opset18_schemas(std::vector<OpSchema>& out) {
  out.push_back(bitwise_binary("BitwiseAnd", "AND"));
  out.push_back(bitwise_binary("BitwiseOr", "OR"));
  out.push_back(bitwise_binary("BitwiseXor", "XOR"));
  out.push_back(bitwise_not());
  out.push_back(center_crop_pad());
  out.push_back(col2im());
  out.push_back(group_normalization());
  out.push_back(lp_pool());
  out.push_back(mish());
  out.push_back(optional_get_element());
  out.push_back(optional_has_element());
  out.push_back(pad_schema(kOpset));

  const TypeList numeric = tensor_types({"uint32", "uint64", "int32", "int64", "float16", "float", "double", "bfloat16"});
  const TypeList numeric_8bit = concat(numeric, tensor_types({"uint8", "int8"}));
  constexpr const char* kReduceAttrs = "<keepdims: int = @keepdims, noop_with_empty_axes: int = @noop_with_empty_axes>";
  const std::string l1 = std::string("{ data_abs = Abs (data)\n reduced = ReduceSum ") + kReduceAttrs +
                         " (data_abs, axes) }";
  const std::string l2 = std::string("{ data_square = Mul (data, data)\n sum_square = ReduceSum ") + kReduceAttrs +
                         " (data_square, axes)\n sum_square_f = Cast <to = 1> (sum_square)\n"
                         " root = Sqrt (sum_square_f)\n reduced = CastLike (root, data) }";
  const std::string log_sum = std::string("{ summed = ReduceSum ") + kReduceAttrs +
                              " (data, axes)\n reduced = Log (summed) }";
  const std::string log_sum_exp = std::string("{ data_d = Cast <to = 11> (data)\n data_exp = Exp (data_d)\n summed = "
                                              "ReduceSum ") +
                                  kReduceAttrs + " (data_exp, axes)\n logged = Log (summed)\n reduced = CastLike (logged, data) }";
  const std::string sum_square = std::string("{ data_square = Mul (data, data)\n reduced = ReduceSum ") + kReduceAttrs +
                                 " (data_square, axes) }";
  out.push_back(reduce("ReduceL1", "L1 norm", numeric, l1.c_str()));
  out.push_back(reduce("ReduceL2", "L2 norm", numeric, l2.c_str()));
  out.push_back(reduce("ReduceLogSum", "log of the sum", numeric, log_sum.c_str()));
  out.push_back(reduce("ReduceLogSumExp", "log of the sum of exponentials", numeric, log_sum_exp.c_str()));
  out.push_back(reduce("ReduceMax", "maximum", numeric_8bit, nullptr));
  out.push_back(reduce("ReduceMean", "mean", numeric, nullptr));
  out.push_back(reduce("ReduceMin", "minimum", numeric_8bit, nullptr));
  out.push_back(reduce("ReduceProd", "product", numeric, nullptr));
  out.push_back(reduce("ReduceSumSquare", "sum of squares", numeric, sum_square.c_str()));
  out.push_back(resize_schema(kOpset));
  out.push_back(scatter("ScatterElements", true));
  out.push_back(scatter("ScatterND", false));
  out.push_back(split());
}

}  // namespace ephost::opsets
