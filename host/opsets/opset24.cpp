// ai.onnx opset 24 (ONNX 1.19): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). Swish and TensorScatter are new; Attention adds
// nonpad_kv_seqlen; DequantizeLinear adds output_dtype; Cast and CastLike add round_mode (for
// float8e8m0 targets); TopK accepts bfloat16; the shape operators, QuantizeLinear and SplitToSequence
// only accept more element types (float8e8m0, which onnx 1.12 cannot name).
#include <onnx/defs/function.h>

#include "opsets/opsets.h"
#include "opsets/quantize_schemas.h"
#include "opsets/schema_util.h"
#include "opsets/shared_schemas.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr int kOpset = 24;

// ---- Swish ----------------------------------------------------------------------------------------

bool swish_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema, onnx::FunctionProto& body) {
  const AttributeProto* alpha = ctx.getAttribute("alpha");
  onnx::FunctionBuilder b(body);
  b.Const("alpha_f", alpha ? alpha->f() : 1.0f);
  b.Add(R"ONNX(
    alpha_t = CastLike (alpha_f, X)
    scaled = Mul (alpha_t, X)
    gate = Sigmoid (scaled)
    Y = Mul (X, gate)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

OpSchema swish() {
  return EPHOST_OPSET_SCHEMA("Swish", kOpset)
      .SetDoc("Swish activation: Y = X * sigmoid(alpha * X), element by element.")
      .Attr("alpha", "slope inside the sigmoid", AttributeProto::FLOAT, 1.0f)
      .Input(0, "X", "input", "T")
      .Output(0, "Y", "output, of X's shape", "T")
      .TypeConstraint("T", float_types_with_bfloat(), "floating-point tensors")
      .SetContextDependentFunctionBodyBuilder(swish_body)
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
}

// ---- TensorScatter --------------------------------------------------------------------------------

void tensor_scatter_inference(InferenceContext& ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const TensorShapeProto &cache = onnx::getInputShape(ctx, 0), &update = onnx::getInputShape(ctx, 1);
  if (cache.dim_size() != update.dim_size())
    fail_shape_inference("TensorScatter: update must have past_cache's rank");
  const int64_t rank = cache.dim_size();
  if (rank < 2) fail_shape_inference("TensorScatter: past_cache must have rank 2 or more [batch, ..., seq, ...]");
  const int64_t axis = normalize_axis(onnx::getAttribute(ctx, "axis", static_cast<int64_t>(-2)), rank,
                                      "TensorScatter: axis");
  if (axis == 0) fail_shape_inference("TensorScatter: axis cannot be the batch axis 0");
  for (int64_t i = 0; i < rank; ++i) {
    const auto &c = cache.dim(static_cast<int>(i)), &u = update.dim(static_cast<int>(i));
    if (!c.has_dim_value() || !u.has_dim_value()) continue;
    if (i == axis ? u.dim_value() > c.dim_value() : u.dim_value() != c.dim_value())
      fail_shape_inference("TensorScatter: update's dimension ", i, " (", u.dim_value(), ") does not fit past_cache's (",
                           c.dim_value(), ")");
  }
}

OpSchema tensor_scatter() {
  return EPHOST_OPSET_SCHEMA("TensorScatter", kOpset)
      .SetDoc("Writes update into a copy of past_cache along axis, at write_indices[b] for batch b (0 without "
              "write_indices): present[b, ..., write_indices[b] + i, ...] = update[b, ..., i, ...]. In circular "
              "mode the position wraps modulo the cache's length; in linear mode it must fit.")
      .Attr("axis", "the sequence axis (not 0; negative counts from the back)", AttributeProto::INT,
            static_cast<int64_t>(-2))
      .Attr("mode", "linear or circular", AttributeProto::STRING, std::string("linear"))
      .Input(0, "past_cache", "the cache [batch, ..., max_seq, ...]", "T")
      .Input(1, "update", "new entries, of past_cache's shape but at most as long along axis", "T")
      .Input(2, "write_indices", "where batch b's entries start [batch] (default 0)", "tensor(int64)",
             OpSchema::Optional)
      .Output(0, "present_cache", "the updated cache, of past_cache's shape", "T")
      .TypeConstraint("T", all_tensor_types(), "any tensor type")
      .TypeAndShapeInferenceFunction(tensor_scatter_inference);
}

TypeList with_bfloat16(const std::string&, const TypeList& allowed) {
  for (const std::string& t : allowed)
    if (t == "tensor(float)") return {"tensor(bfloat16)"};
  return {};
}

}  // namespace

void add_opset24_schemas(std::vector<OpSchema>& out) {
  out.push_back(attention_schema(kOpset));
  const onnx::OpSchema::Attribute round_mode(
      "round_mode", "for casts to float8e8m0 only: up, down or nearest (how a value between two powers of 2 rounds)",
      [] {
        AttributeProto a;
        a.set_name("round_mode");
        a.set_type(AttributeProto::STRING);
        a.set_s("up");
        return a;
      }());
  for (const char* op : {"Cast", "CastLike"}) out.push_back(types_only_version(op, kOpset, nullptr, {round_mode}));
  for (const char* op : {"Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad", "QuantizeLinear",
                         "Reshape", "Scan", "Shape", "Size", "SplitToSequence", "Squeeze", "Transpose", "Unsqueeze"})
    out.push_back(types_only_version(op, kOpset));
  out.push_back(dequantize_linear_schema(kOpset));
  out.push_back(swish());
  out.push_back(tensor_scatter());
  out.push_back(types_only_version("TopK", kOpset, with_bfloat16));
}

}  // namespace ephost::opsets
