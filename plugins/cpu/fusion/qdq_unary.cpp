// A QDQ model's quantized activation run as a table: the pattern ONNX Runtime runs as QLinearSigmoid
// (and its lookup-table kin).
//
//   DequantizeLinear(X_q, sx, zx) ─ activation ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// X_q is u8 or s8 with one scale and zero point, so the chain maps each of its 256 values to one output
// value: the table holds Q(act(DQ(q))) for every q, computed at compile time with math/quantize.h and
// graph_match.h's apply_activation, the math/vec.h loops the activation kernels run too (Sigmoid,
// HardSigmoid, HardSwish, Relu, Tanh: the op-by-op output, element for element). The activation is any
// graph_match.h matches (also LeakyRelu, Gelu, Clip and the decomposed SiLU / GELU / HardSwish forms).
//
// A quantizer also writes SiLU (x * Sigmoid(x)) and the like with the gate quantized on its own:
//
//   DequantizeLinear(X_q) ─┬─ gate ─ QuantizeLinear(., sg, zg) ─ DequantizeLinear(., sg', zg') ─┐
//                          └──────────────────────────────────────────────────────────────────── Mul ─ QuantizeLinear ─ Y_q
//
// where the gate is one unary activation (Sigmoid, HardSigmoid, ...). That too is one function of X_q's
// byte (ONNX Runtime runs it as QLinearSigmoid then QLinearMul): its table evaluates the gate, its
// QuantizeLinear and DequantizeLinear, the float product and the last QuantizeLinear, op by op.
#include <array>

#include "const_eval.h"
#include "graph_match.h"
#include "math/byte_table.h"
#include "math/parallel.h"
#include "math/quantize.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

struct QdqUnaryMatch {
  sdk::Node dq, q;
  ScalarQuant x, y;
  Activation act;
  // The gated form: y = Q(x * DQ(Q(act(x), gate_q), gate_dq)).
  bool gated = false;
  ScalarQuant gate_q, gate_dq;
  std::vector<sdk::Node> nodes;
};

// The gated form from X's float value v (two consumers: the gate and the Mul); appends the nodes after
// the anchor and sets *out to the Mul's output.
bool match_quantized_gate(const sdk::Value& v, const Available& ok, QdqUnaryMatch* m, sdk::Value* out) {
  const std::vector<sdk::Node> cons = inner_consumers(v);
  if (cons.size() != 2) return false;
  for (int first = 0; first < 2; ++first) {
    const sdk::Node gate = cons[first], mul = cons[1 - first];
    if (!ok(gate) || !ok(mul) || !unary_activation(gate, &m->act) || gate.input(0).name() != v.name()) continue;
    const sdk::Node q = sole_consumer(gate.output(0));
    if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->gate_q) || q.num_outputs() != 1) continue;
    const sdk::Node dq = sole_consumer(q.output(0));
    if (!is_quant_op(dq, "DequantizeLinear") || !ok(dq) || !scalar_quant(dq, &m->gate_dq)) continue;
    if (m->gate_dq.type != m->gate_q.type || !is_float(dq.output(0))) continue;
    const sdk::Node c = sole_consumer(dq.output(0));
    if (!c.valid() || c.id() != mul.id() || !is_op(mul, "Mul") || mul.num_inputs() != 2 || !is_float(mul.output(0)))
      continue;
    const std::string a = mul.input(0).name(), b = mul.input(1).name();
    const std::string g = dq.output(0).name();
    if (!((a == v.name() && b == g) || (a == g && b == v.name()))) continue;
    m->gated = true;
    m->nodes.insert(m->nodes.end(), {gate, q, dq, mul});
    *out = mul.output(0);
    return true;
  }
  return false;
}

bool match_qdq_unary(const sdk::Node& anchor, const Available& ok, QdqUnaryMatch* m) {
  if (!is_quant_op(anchor, "DequantizeLinear") || !ok(anchor) || !scalar_quant(anchor, &m->x)) return false;
  if (is_constant(anchor.input(0)) || !is_float(anchor.output(0))) return false;
  m->dq = anchor;
  m->nodes = {anchor};
  sdk::Value out;
  if (!match_activation(anchor.output(0), ok, &m->act, &m->nodes, &out) &&
      !match_quantized_gate(anchor.output(0), ok, m, &out))
    return false;
  const sdk::Node q = sole_consumer(out);
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->y)) return false;
  if (q.num_outputs() != 1 || !q.has_output(0)) return false;
  m->q = q;
  m->nodes.push_back(q);
  return true;
}

// 256 values of type q (bytes) to float, and back: the op-by-op kernels' math/quantize.h loops.
void dequantize(const uint8_t* b, const ScalarQuant& q, float* x) {
  if (q.type == EPHOST_ELEMENT_UINT8)
    math::dequantize_linear(b, q.scale, static_cast<uint8_t>(q.zero_point), x, 256);
  else
    math::dequantize_linear(reinterpret_cast<const int8_t*>(b), q.scale, static_cast<int8_t>(q.zero_point), x, 256);
}
void quantize(const float* x, const ScalarQuant& q, uint8_t* b) {
  if (q.type == EPHOST_ELEMENT_UINT8)
    math::quantize_linear(x, q.scale, static_cast<uint8_t>(q.zero_point), b, 256);
  else
    math::quantize_linear(x, q.scale, static_cast<int8_t>(q.zero_point), reinterpret_cast<int8_t*>(b), 256);
}

class QdqUnaryGroup : public sdk::CompiledGroup {
 public:
  QdqUnaryGroup(const QdqUnaryMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 activation " + name_ + ": unexpected group interface");
    // Every input value in byte order (u8: 0..255; s8: the byte of -128..127 at its unsigned index).
    std::array<uint8_t, 256> bytes{};
    for (int b = 0; b < 256; ++b) bytes[b] = static_cast<uint8_t>(b);
    std::array<float, 256> x{}, v{};
    dequantize(bytes.data(), m.x, x.data());
    apply_activation(m.act, x.data(), v.data(), 256);
    if (m.gated) {
      std::array<uint8_t, 256> gate{};
      quantize(v.data(), m.gate_q, gate.data());
      dequantize(gate.data(), m.gate_dq, v.data());
      for (int b = 0; b < 256; ++b) v[b] = x[b] * v[b];
    }
    quantize(v.data(), m.y, table_.data());
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != m_.x.type)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 activation " + name_ + ": X has an unexpected type");
    uint8_t* y = static_cast<uint8_t*>(ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, x.shape()));
    const uint8_t* px = static_cast<const uint8_t*>(x.raw());
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const uint8_t* table = table_.data();
    math::parallel_for(x.size(), threads, math::kElementwiseGrain,
                       [table, px, y](int64_t i0, int64_t i1) { math::lookup_bytes(table, px + i0, y + i0, i1 - i0); });
    math::note_team_end(threads);
  }

 private:
  std::string name_;
  QdqUnaryMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1;
  std::array<uint8_t, 256> table_{};  // output bytes by input byte
};

class QdqUnaryFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_unary"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqUnaryMatch m;
    return match_qdq_unary(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqUnaryMatch m;
    if (!match_qdq_unary(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 activation " + group.name() + ": pattern not found");
    return std::make_unique<QdqUnaryGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_unary_fusion() {
  static const QdqUnaryFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
