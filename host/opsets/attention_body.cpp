// The function body of Attention-23 and -24, for providers without an Attention kernel: the operator
// as ONNX defines it, in primitive operators. Built per node, since it depends on the inputs present,
// their ranks and the attributes. Query heads that share a key/value head are grouped by reshaping Q
// [batch, q_heads, q_seq, head] to [batch, kv_heads, G * q_seq, head], so K and V are never repeated.
// A query whose keys are all masked gets NaN from the softmax (the fused CPU kernel writes zeros).
#include <onnx/defs/function.h>

#include <limits>
#include <string>

#include "opsets/schema_util.h"
#include "opsets/shared_schemas.h"

namespace ephost::opsets {

namespace {

using onnx::AttributeProto;

int rank_of(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (!t || t->value_case() != onnx::TypeProto::kTensorType || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

int64_t int_attr(const onnx::FunctionBodyBuildContext& ctx, const char* name, int64_t def) {
  const AttributeProto* a = ctx.getAttribute(name);
  return a ? a->i() : def;
}

// Adds `line` (one node in ONNX's text syntax) to the body.
class BodyWriter {
 public:
  explicit BodyWriter(onnx::FunctionBuilder& b) : b_(b) {}
  void operator()(const std::string& line) { b_.Add(line.c_str()); }
  // A fresh value name.
  std::string fresh(const char* stem) { return std::string(stem) + "_" + std::to_string(++count_); }

 private:
  onnx::FunctionBuilder& b_;
  int count_ = 0;
};

}  // namespace

bool attention_body(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                    onnx::FunctionProto& body) {
  const int rank = rank_of(ctx, 0);
  if (rank != 3 && rank != 4) return false;
  const bool three_d = rank == 3;
  const int64_t q_heads = int_attr(ctx, "q_num_heads", 0), kv_heads = int_attr(ctx, "kv_num_heads", 0);
  if (three_d && (q_heads < 1 || kv_heads < 1)) return false;
  const int64_t mode = int_attr(ctx, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return false;
  const bool has_mask = ctx.hasInput(3), has_past = ctx.hasInput(4) && ctx.hasInput(5), has_nonpad = ctx.hasInput(6);
  const int mask_rank = has_mask ? rank_of(ctx, 3) : 0;
  if (has_mask && mask_rank < 1) return false;

  onnx::FunctionBuilder b(body);
  BodyWriter add(b);
  b.Const("zero_f", 0.0f);
  b.Const("neg_inf_f", -std::numeric_limits<float>::infinity());
  b.Const("zero_i", int64_t{0});
  b.Const("one_i", int64_t{1});
  add("zero_t = CastLike (zero_f, Q)");
  add("neg_inf = CastLike (neg_inf_f, Q)");
  add("zero = Constant <value = int64[1] {0}> ()");
  add("minus1 = Constant <value = int64[1] {-1}> ()");
  add("per_batch = Constant <value = int64[4] {-1, 1, 1, 1}> ()");

  // Q, K, V as [batch, heads, seq, head]; K and V after the past.
  if (three_d) {
    const std::string qs = "{0, 0, " + std::to_string(q_heads) + ", -1}", kvs = "{0, 0, " + std::to_string(kv_heads) + ", -1}";
    add("q_split = Constant <value = int64[4] " + qs + "> ()");
    add("kv_split = Constant <value = int64[4] " + kvs + "> ()");
    add("q_r = Reshape (Q, q_split)");
    add("k_r = Reshape (K, kv_split)");
    add("v_r = Reshape (V, kv_split)");
    add("q4 = Transpose <perm = [0, 2, 1, 3]> (q_r)");
    add("k4 = Transpose <perm = [0, 2, 1, 3]> (k_r)");
    add("v4 = Transpose <perm = [0, 2, 1, 3]> (v_r)");
  } else {
    add("q4 = Identity (Q)");
    add("k4 = Identity (K)");
    add("v4 = Identity (V)");
  }
  if (has_past) {
    add("keys = Concat <axis = 2> (past_key, k4)");
    add("values = Concat <axis = 2> (past_value, v4)");
  } else {
    add("keys = Identity (k4)");
    add("values = Identity (v4)");
  }
  if (ctx.hasOutput(1)) add("present_key = Identity (keys)");
  if (ctx.hasOutput(2)) add("present_value = Identity (values)");
  add("q_heads = Shape <start = 1, end = 2> (q4)");
  add("q_seq = Shape <start = 2, end = 3> (q4)");
  add("head = Shape <start = 3, end = 4> (q4)");
  add("kv_heads = Shape <start = 1, end = 2> (keys)");
  add("total = Shape <start = 2, end = 3> (keys)");
  add("v_head = Shape <start = 3, end = 4> (values)");

  // scaled [batch, q_heads, q_seq, total] = scale * Q K^T, the query heads grouped by key/value head.
  add("grouped_shape = Concat <axis = 0> (zero, kv_heads, minus1, head)");
  add("q_grouped = Reshape (q4, grouped_shape)");
  add("keys_t = Transpose <perm = [0, 1, 3, 2]> (keys)");
  add("qk_grouped = MatMul (q_grouped, keys_t)");
  add("scores_shape = Concat <axis = 0> (zero, q_heads, q_seq, total)");
  add("qk = Reshape (qk_grouped, scores_shape)");
  if (const AttributeProto* scale = ctx.getAttribute("scale")) {
    b.Const("scale_f", scale->f());
  } else {
    b.Const("one_f", 1.0f);
    add("head_f = Cast <to = 1> (head)");
    add("root_head = Sqrt (head_f)");
    add("scale_f = Div (one_f, root_head)");
  }
  add("scale_t = CastLike (scale_f, Q)");
  add("scaled = Mul (qk, scale_t)");
  const AttributeProto* softcap = ctx.getAttribute("softcap");
  if (softcap && softcap->f() > 0) {
    b.Const("softcap_f", softcap->f());
    add("cap = CastLike (softcap_f, Q)");
    add("capped_in = Div (scaled, cap)");
    add("capped_tanh = Tanh (capped_in)");
    add("capped = Mul (capped_tanh, cap)");
  } else {
    add("capped = Identity (scaled)");
  }

  // The biases: attn_mask (padded with -inf to the keys), causal, nonpad_kv_seqlen. `scores` is the
  // softmax's input; `qk_bias` the scaled Q K^T plus the same biases (qk_matmul_output_mode 1).
  std::string scores = "capped", qk_bias = "scaled";
  auto add_bias = [&](const std::string& bias) {
    const std::string s = add.fresh("scores"), q = add.fresh("qk_bias");
    add(s + " = Add (" + scores + ", " + bias + ")");
    scores = s;
    if (mode == 1) {
      add(q + " = Add (" + qk_bias + ", " + bias + ")");
      qk_bias = q;
    }
  };
  if (has_mask) {
    const onnx::TypeProto* mt = ctx.getInputType(3);
    if (mt->tensor_type().elem_type() == onnx::TensorProto::BOOL)
      add("mask_t = Where (attn_mask, zero_t, neg_inf)");
    else
      add("mask_t = CastLike (attn_mask, Q)");
    b.Const("pad_zeros", std::vector<int64_t>(static_cast<size_t>(2 * mask_rank - 1), 0));
    add("mask_len = Shape <start = -1> (attn_mask)");
    add("pad_len = Sub (total, mask_len)");
    add("mask_pads = Concat <axis = 0> (pad_zeros, pad_len)");
    add("mask_full = Pad <mode = \"constant\"> (mask_t, mask_pads, neg_inf)");
    add_bias("mask_full");
  }
  if (int_attr(ctx, "is_causal", 0) != 0 || has_nonpad) {
    add("total_s = Squeeze (total)");
    add("cols = Range (zero_i, total_s, one_i)");
  }
  if (int_attr(ctx, "is_causal", 0) != 0) {
    add("q_seq_s = Squeeze (q_seq)");
    add("rows = Range (zero_i, q_seq_s, one_i)");
    add("row_axis = Constant <value = int64[1] {1}> ()");
    add("rows_col = Unsqueeze (rows, row_axis)");
    if (has_past) {
      add("offset = Shape <start = 2, end = 3> (past_key)");
    } else if (has_nonpad) {
      add("offset_b = Sub (nonpad_kv_seqlen, q_seq)");
      add("offset = Reshape (offset_b, per_batch)");
    } else {
      add("offset = Identity (zero)");
    }
    add("last_key = Add (rows_col, offset)");
    add("allowed = LessOrEqual (cols, last_key)");
    add("causal_bias = Where (allowed, zero_t, neg_inf)");
    add_bias("causal_bias");
  }
  if (has_nonpad) {
    add("valid_len = Reshape (nonpad_kv_seqlen, per_batch)");
    add("valid = Less (cols, valid_len)");
    add("padding_bias = Where (valid, zero_t, neg_inf)");
    add_bias("padding_bias");
  }
  if (const AttributeProto* precision = ctx.getAttribute("softmax_precision")) {
    add("softmax_in = Cast <to = " + std::to_string(precision->i()) + "> (" + scores + ")");
    add("probs_p = Softmax <axis = -1> (softmax_in)");
    add("probs = CastLike (probs_p, Q)");
  } else {
    add("probs = Softmax <axis = -1> (" + scores + ")");
  }
  if (ctx.hasOutput(3)) {
    const std::string chosen[] = {"scaled", qk_bias, scores, "probs"};
    add("qk_matmul_output = Identity (" + chosen[mode] + ")");
  }

  // Y = probs V, grouped as Q was.
  add("probs_shape = Concat <axis = 0> (zero, kv_heads, minus1, total)");
  add("probs_grouped = Reshape (probs, probs_shape)");
  add("y_grouped = MatMul (probs_grouped, values)");
  add("y_shape = Concat <axis = 0> (zero, q_heads, q_seq, v_head)");
  if (three_d) {
    add("y4 = Reshape (y_grouped, y_shape)");
    add("y_t = Transpose <perm = [0, 2, 1, 3]> (y4)");
    add("y3_shape = Constant <value = int64[3] {0, 0, -1}> ()");
    add("Y = Reshape (y_t, y3_shape)");
  } else {
    add("Y = Reshape (y_grouped, y_shape)");
  }
  schema.BuildFunction(body);
  return true;
}

}  // namespace ephost::opsets
