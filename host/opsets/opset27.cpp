// ai.onnx opset 27 (ONNX 1.22):
// - Range accepts float16 and bfloat16 and gains stash_type (the element type its values are
//   accumulated in); the version keeps Range-11's inputs, inference and function body.
// - CausalConvWithState and LinearAttention are new: the stateful short convolution and the recurrent
//   linear attention of Gated DeltaNet / Mamba style models, standardised from ONNX Runtime's
//   com.microsoft contrib operators. Written from ONNX's operator documentation and its reference
//   implementation (onnx/reference/ops/op_causal_conv_with_state.py, op_linear_attention.py). ONNX
//   defines both as functions. CausalConvWithState has its body here (Concat, grouped Conv, Slice,
//   SiLU), so a provider without a kernel for it runs it through expansion; LinearAttention's
//   recurrence has none yet (the CPU plugin runs both as fused kernels).
#include <onnx/defs/function.h>

#include <string>
#include <vector>

#include "opsets/opsets.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

constexpr int kOpset = 27;
using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

// A dimension of `shape`: its value when known, else unknown (nothing set).
TensorShapeProto::Dimension dim_of(const TensorShapeProto& shape, int i) { return shape.dim(i); }

TensorShapeProto::Dimension known_dim(int64_t value) {
  TensorShapeProto::Dimension d;
  d.set_dim_value(value);
  return d;
}

// A dimension of packed heads (`packed` = heads * size) divided by `heads`, when known.
TensorShapeProto::Dimension per_head(const TensorShapeProto::Dimension& packed, int64_t heads, const char* what) {
  TensorShapeProto::Dimension d;
  if (packed.has_dim_value()) {
    if (heads < 1 || packed.dim_value() % heads != 0)
      fail_shape_inference("LinearAttention: ", what, " (", packed.dim_value(), ") is not a multiple of its heads (",
                           heads, ")");
    d.set_dim_value(packed.dim_value() / heads);
  }
  return d;
}

// ---- CausalConvWithState --------------------------------------------------------------------------

// output: input's shape; present_state [batch, channels, k - 1], k from weight [channels, 1, k].
void causal_conv_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  const std::string activation = onnx::getAttribute(ctx, "activation", std::string("none"));
  if (activation != "none" && activation != "silu" && activation != "swish")
    fail_shape_inference("CausalConvWithState: activation must be 'none', 'silu' or 'swish', not '", activation, "'");
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() != 3) fail_shape_inference("CausalConvWithState: input must be [batch, channels, length]");
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 1)) return;
  const TensorShapeProto& w = onnx::getInputShape(ctx, 1);
  if (w.dim_size() != 3) fail_shape_inference("CausalConvWithState: weight must be [channels, 1, k]");
  TensorShapeProto* present = ctx.getOutputType(1)->mutable_tensor_type()->mutable_shape();
  *present->add_dim() = dim_of(x, 0);
  *present->add_dim() = dim_of(x, 1);
  TensorShapeProto::Dimension* carry = present->add_dim();
  if (w.dim(2).has_dim_value()) {
    if (w.dim(2).dim_value() < 1) fail_shape_inference("CausalConvWithState: the kernel size must be at least 1");
    carry->set_dim_value(w.dim(2).dim_value() - 1);
  }
}

// padded = Concat(past_state or zeros [batch, channels, k - 1], input) on the time axis; output = the
// depthwise Conv (group = channels) of padded, with bias, then SiLU when asked; present_state = the last
// k - 1 steps of padded. Conv's group is an attribute, so the body needs the channel count statically.
bool causal_conv_body(const onnx::FunctionBodyBuildContext& ctx, const OpSchema& schema, onnx::FunctionProto& body) {
  const onnx::TypeProto* weight = ctx.getInputType(1);
  if (!weight || !weight->tensor_type().has_shape() || weight->tensor_type().shape().dim_size() != 3 ||
      !weight->tensor_type().shape().dim(0).has_dim_value())
    return false;
  const int64_t channels = weight->tensor_type().shape().dim(0).dim_value();
  const AttributeProto* activation_attr = ctx.getAttribute("activation");
  const std::string activation = activation_attr ? activation_attr->s() : "none";
  if (activation != "none" && activation != "silu" && activation != "swish") return false;
  onnx::FunctionBuilder b(body);
  b.Const("one", std::vector<int64_t>{1});
  b.Const("time_axis", std::vector<int64_t>{2});
  b.Add(R"ONNX(
    kernel_size = Shape <start = 2, end = 3> (weight)
    carry = Sub (kernel_size, one)
  )ONNX");
  if (ctx.hasInput(3)) {
    b.Add("past = Identity (past_state)");
  } else {
    b.Add(R"ONNX(
      batch_channels = Shape <start = 0, end = 2> (input)
      state_shape = Concat <axis = 0> (batch_channels, carry)
      zeros = ConstantOfShape (state_shape)
      past = CastLike (zeros, input)
    )ONNX");
  }
  b.Add("padded = Concat <axis = 2> (past, input)");
  const std::string conv_inputs = ctx.hasInput(2) ? "(padded, weight, bias)" : "(padded, weight)";
  b.Add(("convolved = Conv <group = " + std::to_string(channels) + "> " + conv_inputs).c_str());
  if (activation == "none")
    b.Add("output = Identity (convolved)");
  else
    b.Add(R"ONNX(
      gate = Sigmoid (convolved)
      output = Mul (convolved, gate)
    )ONNX");
  b.Add(R"ONNX(
    padded_length = Shape <start = 2, end = 3> (padded)
    carry_start = Sub (padded_length, carry)
    present_state = Slice (padded, carry_start, padded_length, time_axis)
  )ONNX");
  schema.BuildFunction(body);
  return true;
}

OpSchema causal_conv_with_state() {
  return EPHOST_OPSET_SCHEMA("CausalConvWithState", kOpset)
      .SetDoc("Stateful causal depthwise 1-D convolution. Each channel of input [batch, channels, length] is "
              "left-padded with past_state [batch, channels, k - 1] (zeros when absent), convolved with its own "
              "kernel weight[c, 0, :] (valid padding, stride 1), plus bias[c], then optionally passed through "
              "SiLU (x * sigmoid(x); 'swish' is the same). present_state is the last k - 1 positions of the "
              "padded input.")
      .Attr("activation", "fused activation: 'none', 'silu' or 'swish'", AttributeProto::STRING, std::string("none"))
      .Input(0, "input", "input [batch, channels, length]", "T")
      .Input(1, "weight", "depthwise kernel [channels, 1, k]", "T")
      .Input(2, "bias", "per-channel bias [channels]", "T", OpSchema::Optional)
      .Input(3, "past_state", "carry from the previous step [batch, channels, k - 1]", "T", OpSchema::Optional)
      .Output(0, "output", "output, of input's shape", "T")
      .Output(1, "present_state", "carry for the next step [batch, channels, k - 1]", "T")
      .TypeConstraint("T", float_types_with_bfloat_no_double(), "floating-point tensors")
      .SetContextDependentFunctionBodyBuilder(causal_conv_body)
      .TypeAndShapeInferenceFunction(causal_conv_inference);
}

// ---- LinearAttention ------------------------------------------------------------------------------

// output [batch, seq, q_heads * d_v]; present_state [batch, kv_heads, d_k, d_v] of past_state's type
// (query's without past_state), with d_k = query's hidden / q_heads and d_v = value's hidden / kv_heads.
void linear_attention_inference(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  onnx::propagateElemTypeFromInputToOutput(ctx, has_input(ctx, 3) ? 3 : 0, 1);
  const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", static_cast<int64_t>(0));
  const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", static_cast<int64_t>(0));
  if (q_heads < 1 || kv_heads < 1 || q_heads % kv_heads != 0)
    fail_shape_inference("LinearAttention: q_num_heads (", q_heads, ") must be a positive multiple of kv_num_heads (",
                         kv_heads, ")");
  const std::string rule = onnx::getAttribute(ctx, "update_rule", std::string("gated_delta"));
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    fail_shape_inference("LinearAttention: update_rule must be linear, gated, delta or gated_delta, not '", rule, "'");
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (gated != has_input(ctx, 4))
    fail_shape_inference("LinearAttention: update_rule '", rule, gated ? "' needs" : "' takes no", " decay input");
  if (delta != has_input(ctx, 5))
    fail_shape_inference("LinearAttention: update_rule '", rule, delta ? "' needs" : "' takes no", " beta input");
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 2)) return;
  const TensorShapeProto &q = onnx::getInputShape(ctx, 0), &v = onnx::getInputShape(ctx, 2);
  if (q.dim_size() != 3 || v.dim_size() != 3)
    fail_shape_inference("LinearAttention: query, key and value must be 3-D [batch, seq, heads * head_size]");
  const TensorShapeProto::Dimension d_k = per_head(q.dim(2), q_heads, "query's hidden size");
  const TensorShapeProto::Dimension d_v = per_head(v.dim(2), kv_heads, "value's hidden size");
  TensorShapeProto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *y->add_dim() = q.dim(0);
  *y->add_dim() = q.dim(1);
  TensorShapeProto::Dimension* hidden = y->add_dim();
  if (d_v.has_dim_value()) hidden->set_dim_value(q_heads * d_v.dim_value());
  TensorShapeProto* present = ctx.getOutputType(1)->mutable_tensor_type()->mutable_shape();
  *present->add_dim() = q.dim(0);
  *present->add_dim() = known_dim(kv_heads);
  *present->add_dim() = d_k;
  *present->add_dim() = d_v;
}

OpSchema linear_attention() {
  return EPHOST_OPSET_SCHEMA("LinearAttention", kOpset)
      .SetDoc("Recurrent linear attention over packed [batch, seq, heads * head_size] query, key and value, "
              "one token at a time, with a state S [batch, kv_heads, d_k, d_v] per KV head (past_state, zeros "
              "when absent). Per token: gated rules first scale S by exp(decay) (decay per head or per key "
              "dimension); delta rules replace v by beta * (v - S^T k); then S += k v^T and the output of each "
              "query head h is scale * q^T S of KV head h / (q_heads / kv_heads). scale 0 means 1/sqrt(d_k). "
              "The state is computed in float32 whatever its type.")
      .Attr("chunk_size", "a tuning hint for chunked computation; it does not change the result",
            AttributeProto::INT, static_cast<int64_t>(64))
      .Attr("kv_num_heads", "number of key/value heads (and states)", AttributeProto::INT, true)
      .Attr("q_num_heads", "number of query heads, a multiple of kv_num_heads", AttributeProto::INT, true)
      .Attr("scale", "output scale (0: 1/sqrt(d_k))", AttributeProto::FLOAT, 0.0f)
      .Attr("update_rule", "'linear', 'gated', 'delta' or 'gated_delta'", AttributeProto::STRING,
            std::string("gated_delta"))
      .Input(0, "query", "queries [batch, seq, q_heads * d_k]", "T")
      .Input(1, "key", "keys [batch, seq, kv_heads * d_k]", "T")
      .Input(2, "value", "values [batch, seq, kv_heads * d_v]", "T")
      .Input(3, "past_state", "state from the previous step [batch, kv_heads, d_k, d_v]", "S", OpSchema::Optional)
      .Input(4, "decay", "log-space decay [batch, seq, kv_heads] or [batch, seq, kv_heads * d_k] (gated rules)", "T",
             OpSchema::Optional)
      .Input(5, "beta", "delta-rule write strength [batch, seq, kv_heads] or [batch, seq, 1] (delta rules)", "T",
             OpSchema::Optional)
      .Output(0, "output", "outputs [batch, seq, q_heads * d_v]", "T")
      .Output(1, "present_state", "state after the last token [batch, kv_heads, d_k, d_v]", "S")
      .TypeConstraint("T", float_types_with_bfloat_no_double(), "floating-point activations")
      .TypeConstraint("S", float_types_with_bfloat_no_double(), "floating-point state")
      .TypeAndShapeInferenceFunction(linear_attention_inference);
}

}  // namespace

void add_opset27_schemas(std::vector<onnx::OpSchema>& out) {
  const onnx::OpSchema::Attribute stash_type(
      "stash_type", "element type (TensorProto.DataType) the values are computed in (default: the inputs' type)",
      onnx::AttributeProto::INT, false);
  out.push_back(types_only_version(
      "Range", 27,
      [](const std::string&, const TypeList& allowed) {
        for (const std::string& t : allowed)
          if (t == "tensor(float)") return tensor_types({"float16", "bfloat16"});
        return TypeList{};
      },
      {stash_type}));
  out.push_back(causal_conv_with_state());
  out.push_back(linear_attention());
}

}  // namespace ephost::opsets
