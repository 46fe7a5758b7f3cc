// ai.onnx opset 20 (ONNX 1.15): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). AffineGrid, Gelu, ImageDecoder, RegexFullMatch,
// StringConcat and StringSplit are new; DFT (dft_length and axis as inputs) and GridSample (N-d, modes
// renamed linear and cubic) changed; ConstantOfShape, IsInf and IsNaN (float8, named through
// new_type_names.h), ReduceMax and ReduceMin (bool) only accept more element types.
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

constexpr int kOpset = 20;

// ---- AffineGrid -----------------------------------------------------------------------------------

void affine_grid_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  int64_t n_spatial = -1;
  if (onnx::hasInputShape(ctx, 0)) {
    const TensorShapeProto& theta = onnx::getInputShape(ctx, 0);
    if (theta.dim_size() != 3) fail_shape_inference("AffineGrid: theta must have rank 3 ([N, 2, 3] or [N, 3, 4])");
    if (theta.dim(1).has_dim_value()) n_spatial = theta.dim(1).dim_value();
    if (n_spatial != -1 && n_spatial != 2 && n_spatial != 3)
      fail_shape_inference("AffineGrid: theta must be [N, 2, 3] (2-D) or [N, 3, 4] (3-D)");
  }
  const auto size = constant_ints(ctx, 1);
  if (!size) {
    if (n_spatial > 0) {
      TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
      out->Clear();
      for (int64_t i = 0; i < n_spatial + 1; ++i) out->add_dim();
      out->add_dim()->set_dim_value(n_spatial);
    }
    return;
  }
  if (size->size() != 4 && size->size() != 5)
    fail_shape_inference("AffineGrid: size must be [N, C, H, W] or [N, C, D, H, W], got ", size->size(), " values");
  const int64_t n = static_cast<int64_t>(size->size()) - 2;
  if (n_spatial != -1 && n_spatial != n)
    fail_shape_inference("AffineGrid: theta is for ", n_spatial, "-D grids but size describes a ", n, "-D one");
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  out->add_dim()->set_dim_value((*size)[0]);
  for (int64_t i = 0; i < n; ++i) out->add_dim()->set_dim_value((*size)[2 + i]);
  out->add_dim()->set_dim_value(n);
}

// The spatial rank (2 or 3) the node's theta or size types show, or 0 when neither shows it.
int64_t affine_grid_rank(const onnx::FunctionBodyBuildContext& ctx) {
  const onnx::TypeProto* theta = ctx.getInputType(0);
  if (theta && theta->has_tensor_type() && theta->tensor_type().has_shape() &&
      theta->tensor_type().shape().dim_size() == 3 && theta->tensor_type().shape().dim(1).has_dim_value())
    return theta->tensor_type().shape().dim(1).dim_value();
  const onnx::TypeProto* size = ctx.getInputType(1);
  if (size && size->has_tensor_type() && size->tensor_type().has_shape() &&
      size->tensor_type().shape().dim_size() == 1 && size->tensor_type().shape().dim(0).has_dim_value())
    return size->tensor_type().shape().dim(0).dim_value() - 2;
  return 0;
}

// The base grid (x, y(, z), 1) of normalized pixel coordinates, flattened to [points, n + 1], times
// theta transposed: [N, points, n], reshaped to [N, (D,) H, W, n]. The body depends on align_corners
// and on the spatial rank, read from theta's or size's static shape (no body when neither shows it).
bool affine_grid_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema, onnx::FunctionProto& body) {
  const int64_t n = affine_grid_rank(ctx);
  if (n != 2 && n != 3) return false;
  const AttributeProto* align_attr = ctx.getAttribute("align_corners");
  const bool align = align_attr && align_attr->i() != 0;
  onnx::FunctionBuilder b(body);
  b.Add(R"ONNX(
    zero = Constant <value_int = 0> ()
    one = Constant <value_int = 1> ()
    axis0 = Constant <value = int64[1] {0}> ()
    axis1 = Constant <value = int64[1] {1}> ()
    last_axis = Constant <value = int64[1] {-1}> ()
    one_f0 = Constant <value_float = 1.0> ()
    one_f = CastLike (one_f0, theta)
    two_f0 = Constant <value_float = 2.0> ()
    two_f = CastLike (two_f0, theta)
    batch = Gather <axis = 0> (size, zero)
  )ONNX");
  // Coordinates along each spatial axis: index i of L -> (2i + 1) / L - 1, or with align_corners
  // 2i / max(L - 1, 1) - 1 (a single position at -1).
  const char* axes[] = {"w", "h", "d"};
  for (int64_t a = 0; a < n; ++a) {
    const std::string x = axes[a];
    const std::string index = std::to_string(n + 1 - a);  // size holds [N, C, (D,) H, W]
    std::string text = "index_" + x + " = Constant <value_int = " + index + "> ()\n" +
                       "len_" + x + " = Gather <axis = 0> (size, index_" + x + ")\n" +
                       "range_" + x + " = Range (zero, len_" + x + ", one)\n" +
                       "range_f_" + x + " = CastLike (range_" + x + ", theta)\n" +
                       "len_f_" + x + " = CastLike (len_" + x + ", theta)\n";
    if (align) {
      text += "span_" + x + " = Sub (len_f_" + x + ", one_f)\n" +
              "safe_span_" + x + " = Max (span_" + x + ", one_f)\n" +
              "twice_" + x + " = Mul (range_f_" + x + ", two_f)\n" +
              "ratio_" + x + " = Div (twice_" + x + ", safe_span_" + x + ")\n";
    } else {
      text += "twice_" + x + " = Mul (range_f_" + x + ", two_f)\n" +
              "centre_" + x + " = Add (twice_" + x + ", one_f)\n" +
              "ratio_" + x + " = Div (centre_" + x + ", len_f_" + x + ")\n";
    }
    text += "coord_" + x + " = Sub (ratio_" + x + ", one_f)\n" +
            "dim_" + x + " = Unsqueeze (len_" + x + ", axis0)\n";
    b.Add(text.c_str());
  }
  if (n == 2) {
    b.Add(R"ONNX(
      spatial = Concat <axis = 0> (dim_h, dim_w)
      grid_x = Expand (coord_w, spatial)
      column_h = Unsqueeze (coord_h, axis1)
      grid_y = Expand (column_h, spatial)
      ones = Expand (one_f, spatial)
      x_last = Unsqueeze (grid_x, last_axis)
      y_last = Unsqueeze (grid_y, last_axis)
      ones_last = Unsqueeze (ones, last_axis)
      base = Concat <axis = -1> (x_last, y_last, ones_last)
      flat_shape = Constant <value = int64[2] {-1, 3}> ()
      coordinates = Constant <value = int64[1] {2}> ()
    )ONNX");
  } else {
    b.Add(R"ONNX(
      spatial = Concat <axis = 0> (dim_d, dim_h, dim_w)
      grid_x = Expand (coord_w, spatial)
      column_h = Unsqueeze (coord_h, axis1)
      grid_y = Expand (column_h, spatial)
      plane_shape = Constant <value = int64[3] {-1, 1, 1}> ()
      plane_d = Reshape (coord_d, plane_shape)
      grid_z = Expand (plane_d, spatial)
      ones = Expand (one_f, spatial)
      x_last = Unsqueeze (grid_x, last_axis)
      y_last = Unsqueeze (grid_y, last_axis)
      z_last = Unsqueeze (grid_z, last_axis)
      ones_last = Unsqueeze (ones, last_axis)
      base = Concat <axis = -1> (x_last, y_last, z_last, ones_last)
      flat_shape = Constant <value = int64[2] {-1, 4}> ()
      coordinates = Constant <value = int64[1] {3}> ()
    )ONNX");
  }
  b.Add(R"ONNX(
    flat = Reshape (base, flat_shape)
    theta_t = Transpose <perm = [0, 2, 1]> (theta)
    points = MatMul (flat, theta_t)
    batch_1 = Unsqueeze (batch, axis0)
    grid_shape = Concat <axis = 0> (batch_1, spatial, coordinates)
    grid = Reshape (points, grid_shape)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

OpSchema affine_grid() {
  return EPHOST_OPSET_SCHEMA("AffineGrid", kOpset)
      .SetDoc("Generates the sampling grid of an affine transformation for GridSample: for each output position "
              "of an image of size [N, C, (D,) H, W], the normalized coordinates in [-1, 1] (pixel centres, or "
              "corners with align_corners) are transformed by theta and returned as (x, y(, z)).")
      .Attr("align_corners", "1: -1 and 1 are the centres of the corner pixels; 0: their outer edges",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "theta", "affine matrices [N, 2, 3] or [N, 3, 4]", "T1")
      .Input(1, "size", "the target image size [N, C, H, W] or [N, C, D, H, W]", "T2")
      .Output(0, "grid", "[N, H, W, 2] or [N, D, H, W, 3] normalized coordinates", "T1")
      .TypeConstraint("T1", float_types_with_bfloat(), "floating-point tensors")
      .TypeConstraint("T2", {"tensor(int64)"}, "int64")
      .SetContextDependentFunctionBodyBuilder(affine_grid_body)
      .TypeAndShapeInferenceFunction(affine_grid_inference);
}

// ---- ConstantOfShape ------------------------------------------------------------------------------

OpSchema constant_of_shape() {
  return EPHOST_OPSET_SCHEMA("ConstantOfShape", kOpset)
      .SetDoc("A tensor of the given shape filled with the one value of the `value` attribute (default a float "
              "0). Opset 20 adds bfloat16 and the float8 types.")
      .Attr("value", "a one-element tensor: the fill value and element type", AttributeProto::TENSOR, false)
      .Input(0, "input", "1-D shape of the output", "T1")
      .Output(0, "output", "the filled tensor", "T2")
      .TypeConstraint("T1", {"tensor(int64)"}, "int64")
      .TypeConstraint("T2", onnx_types("ConstantOfShape", 9, "T2", concat(tensor_types({"bfloat16"}), new_types_of_opset(19))), "fill types")
      .TypeAndShapeInferenceFunction(onnx_inference("ConstantOfShape", 9))
      .PartialDataPropagationFunction(onnx_data_propagation("ConstantOfShape", 9));
}

// ---- DFT ------------------------------------------------------------------------------------------

void dft_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
  const int64_t rank = in.dim_size();
  if (rank < 2) fail_shape_inference("DFT: input must have rank 2 or more [..., 1 or 2]");
  const auto& last = in.dim(static_cast<int>(rank - 1));
  if (last.has_dim_value() && last.dim_value() != 1 && last.dim_value() != 2)
    fail_shape_inference("DFT: the last dimension must be 1 (real) or 2 (complex), got ", last.dim_value());
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  for (int64_t i = 0; i < rank - 1; ++i) *out->add_dim() = in.dim(static_cast<int>(i));
  out->add_dim()->set_dim_value(2);
  int64_t axis = -2;
  if (has_input(ctx, 2)) {
    const auto a = constant_ints(ctx, 2);
    if (!a) {  // which axis changes is unknown
      for (int64_t i = 0; i < rank - 1; ++i) out->mutable_dim(static_cast<int>(i))->Clear();
      return;
    }
    if (a->size() != 1) fail_shape_inference("DFT: axis must be a scalar");
    axis = (*a)[0];
  }
  if (axis < -rank || axis >= rank - 1)
    fail_shape_inference("DFT: axis ", axis, " is out of range: the signal axes are ", -rank, " to ", rank - 2);
  if (axis < 0) axis += rank;
  auto* d = out->mutable_dim(static_cast<int>(axis));
  const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
  if (onesided && onnx::getAttribute(ctx, "inverse", 0) != 0)
    fail_shape_inference("DFT: onesided and inverse cannot both be set");
  int64_t length = -1;
  if (has_input(ctx, 1)) {
    const auto l = constant_ints(ctx, 1);
    if (!l) {
      d->Clear();
      return;
    }
    if (l->size() != 1 || (*l)[0] < 1) fail_shape_inference("DFT: dft_length must be a positive scalar");
    length = (*l)[0];
  } else if (in.dim(static_cast<int>(axis)).has_dim_value()) {
    length = in.dim(static_cast<int>(axis)).dim_value();
  }
  d->Clear();
  if (length >= 0) d->set_dim_value(onesided ? length / 2 + 1 : length);
}

OpSchema dft() {
  return EPHOST_OPSET_SCHEMA("DFT", kOpset)
      .SetDoc("Discrete Fourier transform (or its inverse) of the input along one axis. The last input "
              "dimension is 1 (real) or 2 (complex: real, imaginary); the output is complex. Opset 20 takes the "
              "axis as an input (default -2, the axis before the complex one) besides dft_length (zero-padding "
              "or truncating the signal); onesided keeps the first floor(n / 2) + 1 frequencies of a real input.")
      .Attr("inverse", "1: the inverse transform (normalized by 1 / n)", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("onesided", "1: only the non-redundant half of the spectrum", AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "input", "signal [..., 1 or 2]", "T1")
      .Input(1, "dft_length", "scalar transform length (default: the axis' size)", "T2", OpSchema::Optional)
      .Input(2, "axis", "scalar axis to transform (default -2); not the last one", "tensor(int64)", OpSchema::Optional)
      .Output(0, "output", "complex spectrum [..., 2]", "T1")
      .TypeConstraint("T1", float_types_with_bfloat(), "floating-point tensors")
      .TypeConstraint("T2", index_types(), "index types")
      .TypeAndShapeInferenceFunction(dft_inference);
}

// ---- Gelu -----------------------------------------------------------------------------------------

bool gelu_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema, onnx::FunctionProto& body) {
  const AttributeProto* approximate = ctx.getAttribute("approximate");
  const std::string mode = approximate ? approximate->s() : "none";
  onnx::FunctionBuilder b(body);
  b.Add(R"ONNX(
    half_f = Constant <value_float = 0.5> ()
    half = CastLike (half_f, X)
    one_f = Constant <value_float = 1.0> ()
    one = CastLike (one_f, X)
    half_x = Mul (half, X)
  )ONNX");
  if (mode == "tanh") {
    b.Add(R"ONNX(
      k_f = Constant <value_float = 0.7978845608028654> ()
      k = CastLike (k_f, X)
      c_f = Constant <value_float = 0.044715> ()
      c = CastLike (c_f, X)
      x_squared = Mul (X, X)
      x_cubed = Mul (x_squared, X)
      c_x_cubed = Mul (c, x_cubed)
      inner = Add (X, c_x_cubed)
      scaled = Mul (k, inner)
      t = Tanh (scaled)
      one_plus = Add (one, t)
      Y = Mul (half_x, one_plus)
    )ONNX");
  } else if (mode == "none") {
    b.Add(R"ONNX(
      r_f = Constant <value_float = 0.7071067811865476> ()
      r = CastLike (r_f, X)
      x_scaled = Mul (X, r)
      e = Erf (x_scaled)
      one_plus = Add (one, e)
      Y = Mul (half_x, one_plus)
    )ONNX");
  } else {
    return false;
  }
  schema.BuildFunction(body);
  return true;
}

OpSchema gelu() {
  return EPHOST_OPSET_SCHEMA("Gelu", kOpset)
      .SetDoc("Gaussian error linear unit, element by element: y = 0.5 * x * (1 + erf(x / sqrt(2))); with "
              "approximate = 'tanh', y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).")
      .Attr("approximate", "none (exact, with erf) or tanh", AttributeProto::STRING, std::string("none"))
      .Input(0, "X", "input tensor", "T")
      .Output(0, "Y", "output tensor, of X's shape", "T")
      .TypeConstraint("T", float_types_with_bfloat(), "floating-point tensors")
      .SetContextDependentFunctionBodyBuilder(gelu_body)
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        const AttributeProto* a = ctx.getAttribute("approximate");
        if (a && a->s() != "none" && a->s() != "tanh")
          fail_shape_inference("Gelu: approximate must be none or tanh, got '", a->s(), "'");
        onnx::propagateShapeAndTypeFromFirstInput(ctx);
      });
}

// ---- GridSample -----------------------------------------------------------------------------------

void grid_sample_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const AttributeProto* mode = ctx.getAttribute("mode");
  if (mode && mode->s() != "linear" && mode->s() != "nearest" && mode->s() != "cubic")
    fail_shape_inference("GridSample: mode must be linear, nearest or cubic (opset 20's names), got '", mode->s(), "'");
  const AttributeProto* padding = ctx.getAttribute("padding_mode");
  if (padding && padding->s() != "zeros" && padding->s() != "border" && padding->s() != "reflection")
    fail_shape_inference("GridSample: padding_mode must be zeros, border or reflection, got '", padding->s(), "'");
  int64_t rank = -1;
  if (onnx::hasInputShape(ctx, 0)) rank = onnx::getInputShape(ctx, 0).dim_size();
  if (onnx::hasInputShape(ctx, 1)) {
    const TensorShapeProto& grid = onnx::getInputShape(ctx, 1);
    if (rank >= 0 && grid.dim_size() != rank)
      fail_shape_inference("GridSample: grid must have X's rank [N, D1_out, ..., n_spatial]");
    rank = grid.dim_size();
    const auto& last = grid.dim(static_cast<int>(rank - 1));
    if (last.has_dim_value() && last.dim_value() != rank - 2)
      fail_shape_inference("GridSample: grid's last dimension must be ", rank - 2, " (one coordinate per spatial axis)");
  }
  if (rank < 0) return;
  if (rank < 3) fail_shape_inference("GridSample: X must have rank 3 or more [N, C, D1, ...]");
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  const bool has_x = onnx::hasInputShape(ctx, 0), has_grid = onnx::hasInputShape(ctx, 1);
  auto* n = out->add_dim();
  if (has_x) *n = onnx::getInputShape(ctx, 0).dim(0);
  else if (has_grid) *n = onnx::getInputShape(ctx, 1).dim(0);
  auto* c = out->add_dim();
  if (has_x) *c = onnx::getInputShape(ctx, 0).dim(1);
  for (int64_t i = 1; i < rank - 1; ++i) {
    auto* d = out->add_dim();
    if (has_grid) *d = onnx::getInputShape(ctx, 1).dim(static_cast<int>(i));
  }
}

OpSchema grid_sample() {
  return EPHOST_OPSET_SCHEMA("GridSample", kOpset)
      .SetDoc("Samples X at the normalized coordinates of grid ([-1, 1] per spatial axis, x first: the last "
              "spatial axis), with linear, nearest or cubic interpolation and zeros, border or reflection "
              "padding outside X. Opset 20 works on any number of spatial axes and renames bilinear and bicubic "
              "to linear and cubic.")
      .Attr("align_corners", "1: -1 and 1 are the centres of the corner pixels; 0: their outer edges",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("mode", "linear, nearest or cubic", AttributeProto::STRING, std::string("linear"))
      .Attr("padding_mode", "zeros, border or reflection", AttributeProto::STRING, std::string("zeros"))
      .Input(0, "X", "input [N, C, D1, ..., Dr]", "T1")
      .Input(1, "grid", "sampling coordinates [N, D1_out, ..., Dr_out, r]", "T2")
      .Output(0, "Y", "sampled output [N, C, D1_out, ..., Dr_out]", "T1")
      .TypeConstraint("T1", onnx_types("GridSample", 16, "T1"), "any tensor type")
      .TypeConstraint("T2", float_types(), "floating-point coordinates")
      .TypeAndShapeInferenceFunction(grid_sample_inference);
}

// ---- ImageDecoder ---------------------------------------------------------------------------------

OpSchema image_decoder() {
  return EPHOST_OPSET_SCHEMA("ImageDecoder", kOpset)
      .SetDoc("Decodes one encoded image (JPEG, PNG, BMP, TIFF, WebP, JPEG 2000, PNM...) into an [H, W, C] uint8 "
              "tensor: C is 3 for RGB and BGR, 1 for Grayscale.")
      .Attr("pixel_format", "RGB, BGR or Grayscale", AttributeProto::STRING, std::string("RGB"))
      .Input(0, "encoded_stream", "1-D bytes of the encoded image", "T1")
      .Output(0, "image", "decoded image [H, W, C]", "T2")
      .TypeConstraint("T1", {"tensor(uint8)"}, "uint8")
      .TypeConstraint("T2", {"tensor(uint8)"}, "uint8")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        const AttributeProto* f = ctx.getAttribute("pixel_format");
        const std::string format = f ? f->s() : "RGB";
        if (format != "RGB" && format != "BGR" && format != "Grayscale")
          fail_shape_inference("ImageDecoder: pixel_format must be RGB, BGR or Grayscale, got '", format, "'");
        if (onnx::hasInputShape(ctx, 0) && onnx::getInputShape(ctx, 0).dim_size() != 1)
          fail_shape_inference("ImageDecoder: encoded_stream must be 1-D");
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
        TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
        out->Clear();
        out->add_dim();
        out->add_dim();
        out->add_dim()->set_dim_value(format == "Grayscale" ? 1 : 3);
      });
}

// ---- IsInf, IsNaN ---------------------------------------------------------------------------------

OpSchema is_inf() {
  return EPHOST_OPSET_SCHEMA("IsInf", kOpset)
      .SetDoc("True where an element is infinite (of the signs detect_positive and detect_negative select). "
              "Opset 20 adds float16, bfloat16 and float8.")
      .Attr("detect_negative", "1: -inf counts", AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("detect_positive", "1: +inf counts", AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "X", "input tensor", "T1")
      .Output(0, "Y", "bool tensor, of X's shape", "T2")
      .TypeConstraint("T1", concat(float_types_with_bfloat(), new_types_of_opset(19)), "floating-point tensors")
      .TypeConstraint("T2", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("IsInf", 10));
}

OpSchema is_nan() {
  return EPHOST_OPSET_SCHEMA("IsNaN", kOpset)
      .SetDoc("True where an element is NaN. Opset 20 adds float8.")
      .Input(0, "X", "input tensor", "T1")
      .Output(0, "Y", "bool tensor, of X's shape", "T2")
      .TypeConstraint("T1", concat(float_types_with_bfloat(), new_types_of_opset(19)), "floating-point tensors")
      .TypeConstraint("T2", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("IsNaN", 13));
}

// ---- strings --------------------------------------------------------------------------------------

OpSchema regex_full_match() {
  return EPHOST_OPSET_SCHEMA("RegexFullMatch", kOpset)
      .SetDoc("True where the whole string matches the regular expression `pattern` (RE2 syntax).")
      .Attr("pattern", "the regular expression", AttributeProto::STRING, false)
      .Input(0, "X", "string tensor", "T1")
      .Output(0, "Y", "bool tensor, of X's shape", "T2")
      .TypeConstraint("T1", {"tensor(string)"}, "string")
      .TypeConstraint("T2", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
        if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
}

OpSchema string_concat() {
  return EPHOST_OPSET_SCHEMA("StringConcat", kOpset)
      .SetDoc("Concatenates the strings of X and Y element by element, with multidirectional broadcasting.")
      .Input(0, "X", "first strings", "T")
      .Input(1, "Y", "second strings", "T")
      .Output(0, "Z", "X + Y, of the broadcast shape", "T")
      .TypeConstraint("T", {"tensor(string)"}, "string")
      .TypeAndShapeInferenceFunction(broadcast_binary_inference);
}

OpSchema string_split() {
  return EPHOST_OPSET_SCHEMA("StringSplit", kOpset)
      .SetDoc("Splits each string of X at the delimiter (at most maxsplit times, from the left). Without a "
              "delimiter (or an empty one), runs of whitespace separate the parts and leading and trailing "
              "whitespace is dropped. Y holds the parts, padded with empty strings to the largest count; Z the "
              "number of parts of each string.")
      .Attr("delimiter", "the separator; absent or empty: runs of whitespace", AttributeProto::STRING, false)
      .Attr("maxsplit", "the most splits per string (default: unlimited)", AttributeProto::INT, false)
      .Input(0, "X", "strings to split", "T1")
      .Output(0, "Y", "the parts [X's shape..., max parts]", "T2")
      .Output(1, "Z", "the number of parts, of X's shape", "T3")
      .TypeConstraint("T1", {"tensor(string)"}, "string")
      .TypeConstraint("T2", {"tensor(string)"}, "string")
      .TypeConstraint("T3", {"tensor(int64)"}, "int64")
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        const AttributeProto* m = ctx.getAttribute("maxsplit");
        if (m && m->i() < 0) fail_shape_inference("StringSplit: maxsplit must not be negative, got ", m->i());
        onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::STRING);
        onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT64);
        if (!onnx::hasInputShape(ctx, 0)) return;
        const TensorShapeProto& in = onnx::getInputShape(ctx, 0);
        TensorShapeProto* y = onnx::getOutputShape(ctx, 0);
        y->CopyFrom(in);
        y->add_dim();
        onnx::getOutputShape(ctx, 1)->CopyFrom(in);
      });
}

}  // namespace

void add_opset20_schemas(std::vector<OpSchema>& out) {
  out.push_back(affine_grid());
  out.push_back(constant_of_shape());
  out.push_back(dft());
  out.push_back(gelu());
  out.push_back(grid_sample());
  out.push_back(image_decoder());
  out.push_back(is_inf());
  out.push_back(is_nan());
  const TypeList with_bool = tensor_types({"uint8", "uint32", "uint64", "int8", "int32", "int64", "float16", "float",
                                           "double", "bfloat16", "bool"});
  out.push_back(reduce_schema(kOpset, "ReduceMax", "maximum", with_bool, nullptr));
  out.push_back(reduce_schema(kOpset, "ReduceMin", "minimum", with_bool, nullptr));
  out.push_back(regex_full_match());
  out.push_back(string_concat());
  out.push_back(string_split());
}

}  // namespace ephost::opsets
