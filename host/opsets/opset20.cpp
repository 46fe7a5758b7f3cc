// ai.onnx opset 20 (ONNX 1.15): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). AffineGrid, Gelu, ImageDecoder, RegexFullMatch,
// StringConcat and StringSplit are new; DFT (dft_length and axis as inputs) and GridSample (N-d, modes
// renamed linear and cubic) changed; ConstantOfShape, IsInf, IsNaN (float8, see opset19.cpp: not
// nameable with onnx 1.12), ReduceMax and ReduceMin (bool) only accept more element types.
#include <onnx/defs/function.h>

#include "opsets/opsets.h"
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
      .TypeConstraint("T2", onnx_types("ConstantOfShape", 9, "T2", tensor_types({"bfloat16"})), "fill types")
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
      .TypeConstraint("T1", float_types_with_bfloat(), "floating-point tensors")
      .TypeConstraint("T2", {"tensor(bool)"}, "bool")
      .TypeAndShapeInferenceFunction(onnx_inference("IsInf", 10));
}

OpSchema is_nan() {
  return EPHOST_OPSET_SCHEMA("IsNaN", kOpset)
      .SetDoc("True where an element is NaN. Opset 20 adds float8.")
      .Input(0, "X", "input tensor", "T1")
      .Output(0, "Y", "bool tensor, of X's shape", "T2")
      .TypeConstraint("T1", float_types_with_bfloat(), "floating-point tensors")
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
