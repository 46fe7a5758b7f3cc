// ai.onnx opset 23 (ONNX 1.18): the operator versions it added, written from the ONNX operator
// specification (Operators.md, Changelog.md). Attention, RMSNormalization and RotaryEmbedding are new;
// QuantizeLinear adds precision; the shape and cast operators and DequantizeLinear only accept more
// element types (float4e2m1, which onnx 1.12 cannot name: these keep the previous version's types).
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

constexpr int kOpset = 23;

// ---- RMSNormalization -----------------------------------------------------------------------------

// Y = X / sqrt(mean(X^2 over axes axis..rank-1) + epsilon) * scale, the mean computed in stash_type.
bool rms_normalization_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema,
                            onnx::FunctionProto& body) {
  const onnx::TypeProto* x = ctx.getInputType(0);
  if (!x || !x->tensor_type().has_shape()) return false;  // the reduced axes depend on X's rank
  const int64_t rank = x->tensor_type().shape().dim_size();
  const AttributeProto* axis_attr = ctx.getAttribute("axis");
  const AttributeProto* eps = ctx.getAttribute("epsilon");
  const AttributeProto* stash = ctx.getAttribute("stash_type");
  int64_t axis = axis_attr ? axis_attr->i() : -1;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  onnx::FunctionBuilder b(body);
  b.Const("epsilon_f", eps ? eps->f() : 1e-5f);
  b.Const("axes", axes);
  b.Add(("stashed = Cast <to = " + std::to_string(stash ? stash->i() : static_cast<int64_t>(onnx::TensorProto::FLOAT)) + "> (X)").c_str());
  b.Add(R"ONNX(
    epsilon_t = CastLike (epsilon_f, stashed)
    squared = Mul (stashed, stashed)
    mean = ReduceMean <keepdims = 1> (squared, axes)
    mean_eps = Add (mean, epsilon_t)
    rms = Sqrt (mean_eps)
    normalized = Div (stashed, rms)
    normalized_v = CastLike (normalized, scale)
    Y = Mul (normalized_v, scale)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

OpSchema rms_normalization() {
  return EPHOST_OPSET_SCHEMA("RMSNormalization", kOpset)
      .SetDoc("Root-mean-square normalization: Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean taken over the "
              "axes from axis to the last (computed in stash_type); scale broadcasts against those axes.")
      .Attr("axis", "the first normalized axis (negative counts from the back)", AttributeProto::INT,
            static_cast<int64_t>(-1))
      .Attr("epsilon", "added to the mean square to avoid division by zero", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "element type (TensorProto.DataType) of the mean square", AttributeProto::INT,
            static_cast<int64_t>(onnx::TensorProto::FLOAT))
      .Input(0, "X", "input", "T")
      .Input(1, "scale", "scale, broadcastable to X's normalized axes", "V")
      .Output(0, "Y", "output, of X's shape and scale's type", "V")
      .TypeConstraint("T", float_types_with_bfloat(), "X's type")
      .TypeConstraint("V", float_types_with_bfloat(), "scale's and Y's type")
      .SetContextDependentFunctionBodyBuilder(rms_normalization_body)
      .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (!onnx::hasInputShape(ctx, 0)) return;
        const int64_t rank = onnx::getInputShape(ctx, 0).dim_size();
        normalize_axis(onnx::getAttribute(ctx, "axis", static_cast<int64_t>(-1)), rank, "RMSNormalization: axis");
        onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      });
}

// ---- RotaryEmbedding ------------------------------------------------------------------------------

void rotary_embedding_inference(InferenceContext& ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() != 3 && x.dim_size() != 4)
    fail_shape_inference("RotaryEmbedding: X must be [batch, seq, hidden] or [batch, heads, seq, head_size]");
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", static_cast<int64_t>(0));
  if (x.dim_size() == 3 && heads < 1) fail_shape_inference("RotaryEmbedding: a 3-D X needs num_heads");
  const int64_t rotary = onnx::getAttribute(ctx, "rotary_embedding_dim", static_cast<int64_t>(0));
  if (rotary < 0 || rotary % 2 != 0) fail_shape_inference("RotaryEmbedding: rotary_embedding_dim must be even");
}

OpSchema rotary_embedding() {
  return EPHOST_OPSET_SCHEMA("RotaryEmbedding", kOpset)
      .SetDoc("Rotary position embedding: the first rotary_embedding_dim values of each head (all by default) "
              "are rotated pairwise, (x1, x2) -> (cos * x1 - sin * x2, sin * x1 + cos * x2), by the angle of the "
              "token's position. Pairs are the two halves of the rotated part, or neighbours when interleaved. "
              "cos_cache and sin_cache are [max_position, rotary_dim / 2] indexed by position_ids [batch, seq], "
              "or [batch, seq, rotary_dim / 2] without position_ids. X is [batch, seq, heads * head_size] (with "
              "num_heads) or [batch, heads, seq, head_size].")
      .Attr("interleaved", "1: rotate neighbouring pairs (x0, x1), (x2, x3), ...; 0: the two halves",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "number of heads of a 3-D X", AttributeProto::INT, false)
      .Attr("rotary_embedding_dim", "how many leading values of each head rotate (0: all)", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Input(0, "X", "input [batch, seq, hidden] or [batch, heads, seq, head_size]", "T")
      .Input(1, "cos_cache", "cosines [max_position, rotary_dim / 2] or [batch, seq, rotary_dim / 2]", "T")
      .Input(2, "sin_cache", "sines, of cos_cache's shape", "T")
      .Input(3, "position_ids", "position of each token [batch, seq]", "M", OpSchema::Optional)
      .Output(0, "Y", "output, of X's shape", "T")
      .TypeConstraint("T", float_types_with_bfloat_no_double(), "floating-point tensors")
      .TypeConstraint("M", tensor_types({"int64"}), "position ids")
      .TypeAndShapeInferenceFunction(rotary_embedding_inference);
}

}  // namespace

// ---- Attention (23 and 24) ------------------------------------------------------------------------

namespace {

// Y [batch, q_heads, q_seq, v_head] (4-D) or [batch, q_seq, q_heads * v_head] (3-D); present_key and
// present_value [batch, kv_heads, past + kv_seq, head]; qk_matmul_output [batch, q_heads, q_seq, total].
void attention_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  if (ctx.getNumOutputs() > 2) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
  if (ctx.getNumOutputs() > 3) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1) || !onnx::hasInputShape(ctx, 2)) return;
  const TensorShapeProto &q = onnx::getInputShape(ctx, 0), &k = onnx::getInputShape(ctx, 1),
                         &v = onnx::getInputShape(ctx, 2);
  const int rank = q.dim_size();
  if ((rank != 3 && rank != 4) || k.dim_size() != rank || v.dim_size() != rank)
    fail_shape_inference("Attention: Q, K and V must all be 3-D [batch, seq, hidden] or all 4-D "
                         "[batch, heads, seq, head_size]");
  const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", static_cast<int64_t>(0));
  const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", static_cast<int64_t>(0));
  TensorShapeProto y;
  if (rank == 4) {
    *y.add_dim() = q.dim(0);
    *y.add_dim() = q.dim(1);
    *y.add_dim() = q.dim(2);
    *y.add_dim() = v.dim(3);
  } else {
    if (q_heads < 1 || kv_heads < 1)
      fail_shape_inference("Attention: 3-D inputs need q_num_heads and kv_num_heads");
    *y.add_dim() = q.dim(0);
    *y.add_dim() = q.dim(1);
    auto* d = y.add_dim();
    if (v.dim(2).has_dim_value()) {
      if (v.dim(2).dim_value() % kv_heads != 0)
        fail_shape_inference("Attention: V's hidden size is not a multiple of kv_num_heads");
      d->set_dim_value(v.dim(2).dim_value() / kv_heads * q_heads);
    }
  }
  *onnx::getOutputShape(ctx, 0) = y;
}

}  // namespace

OpSchema attention_schema(int since) {
  OpSchema s = EPHOST_OPSET_SCHEMA("Attention", since);
  s.SetDoc("Scaled dot-product attention: softmax(softcap(Q K^T * scale) + mask) V, per head, with grouped-query "
           "attention when Q has more heads than K and V (q_num_heads a multiple of kv_num_heads: query head h "
           "reads key/value head h / (q_num_heads / kv_num_heads)). past_key and past_value are prepended to K "
           "and V along the sequence and returned as present_key and present_value. attn_mask (bool: true "
           "attends; else added) broadcasts to [batch, q_heads, q_seq, total_seq] and may be shorter in its last "
           "axis (the rest is masked) from opset 24; is_causal masks key j for query i when j > i + past length. "
           "qk_matmul_output_mode selects the optional fourth output: 0 the scaled Q K^T, 1 after the mask, 2 "
           "after softcap, 3 after softmax. Opset 24 adds nonpad_kv_seqlen (keys from nonpad_kv_seqlen[b] on are "
           "masked per batch).")
      .Attr("is_causal", "1: each query attends only to keys at or before its position", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("kv_num_heads", "number of key/value heads (3-D inputs)", AttributeProto::INT, false)
      .Attr("q_num_heads", "number of query heads (3-D inputs)", AttributeProto::INT, false)
      .Attr("qk_matmul_output_mode", "what qk_matmul_output holds (0 to 3, see the description)", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("scale", "factor of Q K^T (default 1 / sqrt(head_size))", AttributeProto::FLOAT, false)
      .Attr("softcap", "> 0: scores become softcap * tanh(scores / softcap)", AttributeProto::FLOAT, 0.0f)
      .Attr("softmax_precision", "element type (TensorProto.DataType) the softmax is computed in", AttributeProto::INT,
            false)
      .Input(0, "Q", "queries [batch, q_heads, q_seq, head] or [batch, q_seq, q_heads * head]", "T1")
      .Input(1, "K", "keys [batch, kv_heads, kv_seq, head] or [batch, kv_seq, kv_heads * head]", "T1")
      .Input(2, "V", "values [batch, kv_heads, kv_seq, v_head] or [batch, kv_seq, kv_heads * v_head]", "T2")
      .Input(3, "attn_mask", "mask broadcastable to [batch, q_heads, q_seq, total_seq]", "U", OpSchema::Optional)
      .Input(4, "past_key", "cached keys [batch, kv_heads, past_seq, head]", "T1", OpSchema::Optional)
      .Input(5, "past_value", "cached values [batch, kv_heads, past_seq, v_head]", "T2", OpSchema::Optional);
  if (since >= 24)
    s.Input(6, "nonpad_kv_seqlen", "valid key/value length per batch [batch]", "tensor(int64)", OpSchema::Optional);
  s.Output(0, "Y", "attention output, of Q's layout", "T1")
      .Output(1, "present_key", "past_key and K concatenated along the sequence", "T1", OpSchema::Optional)
      .Output(2, "present_value", "past_value and V concatenated along the sequence", "T2", OpSchema::Optional)
      .Output(3, "qk_matmul_output", "the scores chosen by qk_matmul_output_mode", "T1", OpSchema::Optional)
      .TypeConstraint("T1", float_types_with_bfloat(), "Q's and K's type")
      .TypeConstraint("T2", float_types_with_bfloat(), "V's type")
      .TypeConstraint("U", concat(concat(float_types_with_bfloat(), integer_types()), tensor_types({"bool"})),
                      "attn_mask's type: bool (true attends) or a number added to the scores")
      .SetContextDependentFunctionBodyBuilder(attention_body)
      .TypeAndShapeInferenceFunction(attention_inference);
  return s;
}

void add_opset23_schemas(std::vector<OpSchema>& out) {
  out.push_back(attention_schema(kOpset));
  for (const char* op : {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity",
                         "If", "Loop", "Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"})
    out.push_back(types_only_version(op, kOpset));
  out.push_back(quantize_linear_schema(kOpset));
  out.push_back(rms_normalization());
  out.push_back(rotary_embedding());
}

}  // namespace ephost::opsets
