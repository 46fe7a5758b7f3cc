// A QDQ model's quantized activation run as a table: the pattern ONNX Runtime runs as QLinearSigmoid
// (and its lookup-table kin).
//
//   DequantizeLinear(X_q, sx, zx) ─ step ─ ... ─ step ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// X_q is u8 or s8 with one scale and zero point, so the chain maps each of its 256 values to one output
// value: the table holds Q(steps(DQ(q))) for every q, computed at compile time with math/quantize.h and
// the loops the op-by-op kernels run. A step is an activation graph_match.h matches (Sigmoid,
// HardSigmoid, HardSwish, Relu, Tanh, LeakyRelu, Gelu, Clip and the decomposed SiLU / GELU / HardSwish
// forms, through apply_activation), Erf (math::erf_f32, the Erf kernel's loop), Sqrt, or Add / Sub /
// Mul / Div with a scalar constant (IEEE float arithmetic, as the binary kernels: Div divides). A
// quantizer leaves such chains between its Q/DQ pairs: BERT's GELU is DQ ─ Div(√2) ─ Erf ─ Q, its
// LayerNorm's DQ ─ Sqrt ─ Q.
//
// When X's DequantizeLinear also feeds other nodes (BERT's GELU input feeds the Mul too), it stays
// outside and the group reads its float output, quantizing it back first: x = (q - zx) * sx gives q
// again exactly (|q - zx| <= 255), so the table applies unchanged.
//
// A quantizer also writes SiLU (x * Sigmoid(x)) and the like with the gate quantized on its own:
//
//   DequantizeLinear(X_q) ─┬─ gate ─ QuantizeLinear(., sg, zg) ─ DequantizeLinear(., sg', zg') ─┐
//                          └──────────────────────────────────────────────────────────────────── Mul ─ QuantizeLinear ─ Y_q
//
// where the gate is one unary activation (Sigmoid, HardSigmoid, ...). That too is one function of X_q's
// byte (ONNX Runtime runs it as QLinearSigmoid then QLinearMul): its table evaluates the gate, its
// QuantizeLinear and DequantizeLinear, the float product and the last QuantizeLinear, op by op.
#include <algorithm>
#include <array>
#include <cmath>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/byte_table.h"
#include "math/parallel.h"
#include "math/vec.h"
#include "qdq_common.h"



namespace ephost::cpu::fusion {

namespace {

// One elementwise float step of a chain.
struct Step {
  enum Kind { kActivation, kErf, kSqrt, kAdd, kMul, kSub, kReverseSub, kDiv, kReverseDiv } kind = kActivation;
  Activation act;  // kActivation
  float c = 0.f;   // the scalar constant of the binary kinds (kReverse*: c - x, c / x)
};

struct QdqUnaryMatch {
  sdk::Node dq, q;
  bool float_input = false;  // the group reads DQ's float output (the DequantizeLinear is shared)
  ScalarQuant x, y;
  std::vector<Step> steps;
  // The gated form: y = Q(x * DQ(Q(act(x), gate_q), gate_dq)).
  bool gated = false;
  Activation act;  // the gate
  ScalarQuant gate_q, gate_dq;
  std::vector<sdk::Node> nodes;
};

// The step node n computes from the value named x (its only non-constant input), or false.
bool single_node_step(const sdk::Node& n, const std::string& x, Step* step) {
  if (n.num_outputs() != 1 || !is_float(n.output(0)) || !n.has_input(0)) return false;
  if (is_op(n, "Erf") || is_op(n, "Sqrt")) {
    step->kind = is_op(n, "Erf") ? Step::kErf : Step::kSqrt;
    return n.input(0).name() == x;
  }
  const bool add = is_op(n, "Add"), mul = is_op(n, "Mul"), sub = is_op(n, "Sub"), div = is_op(n, "Div");
  if (add || mul || sub || div) {
    if (n.num_inputs() != 2) return false;
    const int k = other_input(n, x);
    if (k < 0 || !scalar_constant(n.input(static_cast<size_t>(k)), &step->c)) return false;
    // The constant must not widen the output's rank by broadcasting.
    const int64_t crank = n.input(static_cast<size_t>(k)).rank(), xrank = n.input(static_cast<size_t>(1 - k)).rank();
    if (crank != 0 && !(crank > 0 && xrank >= crank)) return false;
    if (add) step->kind = Step::kAdd;
    else if (mul) step->kind = Step::kMul;
    else if (sub) step->kind = k == 1 ? Step::kSub : Step::kReverseSub;
    else step->kind = k == 1 ? Step::kDiv : Step::kReverseDiv;
    return true;
  }
  step->kind = Step::kActivation;
  return unary_activation(n, &step->act) && n.input(0).name() == x;
}

// The next step from v, when every reader of v belongs to it; appends its nodes and sets *out.
bool next_step(const sdk::Value& v, const Available& ok, Step* step, std::vector<sdk::Node>* nodes, sdk::Value* out) {
  const std::vector<sdk::Node> cons = inner_consumers(v);
  if (cons.size() == 1) {
    const sdk::Node n = cons[0];
    if (!ok(n) || !single_node_step(n, v.name(), step)) return false;
    nodes->push_back(n);
    *out = n.output(0);
    return true;
  }
  // Two readers: the SiLU / HardSwish forms (v * gate(v)), which use both.
  step->kind = Step::kActivation;
  return cons.size() == 2 && match_activation(v, ok, &step->act, nodes, out);
}

// Applies the steps to 256 values in place.
void apply_steps(const std::vector<Step>& steps, std::array<float, 256>* values) {
  float* v = values->data();
  std::array<float, 256> tmp{};
  for (const Step& s : steps) {
    switch (s.kind) {
      case Step::kActivation: apply_activation(s.act, v, 256); break;
      case Step::kErf:
        math::erf_f32(v, tmp.data(), 256);
        std::copy(tmp.begin(), tmp.end(), v);
        break;
      case Step::kSqrt: for (int i = 0; i < 256; ++i) v[i] = std::sqrt(v[i]); break;
      case Step::kAdd: for (int i = 0; i < 256; ++i) v[i] = v[i] + s.c; break;
      case Step::kMul: for (int i = 0; i < 256; ++i) v[i] = v[i] * s.c; break;
      case Step::kSub: for (int i = 0; i < 256; ++i) v[i] = v[i] - s.c; break;
      case Step::kReverseSub: for (int i = 0; i < 256; ++i) v[i] = s.c - v[i]; break;
      case Step::kDiv: for (int i = 0; i < 256; ++i) v[i] = v[i] / s.c; break;
      case Step::kReverseDiv: for (int i = 0; i < 256; ++i) v[i] = s.c / v[i]; break;
    }
  }
}

// The gated form from X's float value v (two consumers: the gate and the Mul); appends the nodes after
// the anchor and sets *out to the Mul's output.
bool match_quantized_gate(const sdk::Value& v, const Available& ok, QdqUnaryMatch* m, sdk::Value* out) {
  const std::vector<sdk::Node> cons = inner_consumers(v);
  if (cons.size() != 2) return false;
  for (int first = 0; first < 2; ++first) {
    const sdk::Node gate = cons[first], mul = cons[1 - first];
    if (!ok(gate) || !ok(mul) || !unary_activation(gate, &m->act) || gate.input(0).name() != v.name()) continue;
    sdk::Node q, dq;
    if (!match_requantize(gate.output(0), ok, &q, &dq, &m->gate_q, &m->gate_dq)) continue;
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

// A chain of steps from v (at least one) to the QuantizeLinear that ends it.
bool match_steps_then_quantize(sdk::Value v, const Available& ok, QdqUnaryMatch* m) {
  for (int guard = 0; guard < 16; ++guard) {
    if (is_quant_op(sole_consumer(v), "QuantizeLinear")) {
      if (m->steps.empty() && !m->gated) return false;
      const sdk::Node q = output_quantize(v, ok, &m->y);
      if (!q.valid()) return false;
      m->q = q;
      m->nodes.push_back(q);
      return true;
    }
    if (m->gated) return false;
    Step step;
    sdk::Value out;
    if (!next_step(v, ok, &step, &m->nodes, &out)) return false;
    m->steps.push_back(step);
    v = out;
  }
  return false;
}

bool match_qdq_unary(const sdk::Node& anchor, const Available& ok, QdqUnaryMatch* m) {
  if (!ok(anchor)) return false;
  if (is_quant_op(anchor, "DequantizeLinear")) {
    if (!is_activation_dequantize(anchor, &m->x)) return false;
    m->dq = anchor;
    m->nodes = {anchor};
    sdk::Value gated_out;
    if (match_quantized_gate(anchor.output(0), ok, m, &gated_out)) return match_steps_then_quantize(gated_out, ok, m);
    return match_steps_then_quantize(anchor.output(0), ok, m);
  }
  // The first step reads a DequantizeLinear that other nodes read too (when the step is its only
  // reader, the match anchored at the DequantizeLinear takes it).
  for (size_t i = 0; i < anchor.num_inputs() && i < 2; ++i) {
    if (!anchor.has_input(i) || is_constant(anchor.input(i))) continue;
    const sdk::Value x = anchor.input(i);
    const sdk::Node dq = x.producer();
    if (!is_activation_dequantize(dq, &m->x) || inner_consumers(x).size() < 2) return false;
    Step step;
    if (!single_node_step(anchor, x.name(), &step)) return false;
    m->dq = dq;
    m->float_input = true;
    m->nodes = {anchor};
    m->steps = {step};
    return match_steps_then_quantize(anchor.output(0), ok, m);
  }
  return false;
}

class QdqUnaryGroup : public sdk::CompiledGroup {
 public:
  QdqUnaryGroup(const QdqUnaryMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.float_input ? m.dq.output(0).name() : m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 activation " + name_ + ": unexpected group interface");
    // Every input value in byte order (u8: 0..255; s8: the byte of -128..127 at its unsigned index).
    std::array<uint8_t, 256> bytes{};
    for (int b = 0; b < 256; ++b) bytes[b] = static_cast<uint8_t>(b);
    std::array<float, 256> x{}, v{};
    dequantize_row(bytes.data(), m.x, x.data(), 256);
    v = x;
    if (m.gated) apply_activation(m.act, x.data(), v.data(), 256);
    else apply_steps(m.steps, &v);
    if (m.gated) {
      std::array<uint8_t, 256> gate{};
      quantize_row(v.data(), m.gate_q, gate.data(), 256);
      dequantize_row(gate.data(), m.gate_dq, v.data(), 256);
      for (int b = 0; b < 256; ++b) v[b] = x[b] * v[b];
    }
    quantize_row(v.data(), m.y, table_.data(), 256);
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != (m_.float_input ? EPHOST_ELEMENT_FLOAT : m_.x.type))
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 activation " + name_ + ": X has an unexpected type");
    uint8_t* y = static_cast<uint8_t*>(ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, x.shape()));
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const uint8_t* table = table_.data();
    if (m_.float_input) {
      // X's bytes again, a block at a time (it stays in L1), then the table.
      const float* px = x.data<float>();
      const ScalarQuant xq = m_.x;
      math::parallel_for(x.size(), threads, math::pass_grain(sizeof(float) + 1), [table, px, y, xq](int64_t i0, int64_t i1) {
        constexpr int64_t kBlock = 2048;
        uint8_t bytes[kBlock];
        for (int64_t b = i0; b < i1; b += kBlock) {
          const int64_t n = std::min(kBlock, i1 - b);
          quantize_row(px + b, xq, bytes, n);
          math::lookup_bytes(table, bytes, y + b, n);
        }
      });
    } else {
      const uint8_t* px = static_cast<const uint8_t*>(x.raw());
      math::parallel_for(x.size(), threads, math::kByteGrain,
                         [table, px, y](int64_t i0, int64_t i1) { math::lookup_bytes(table, px + i0, y + i0, i1 - i0); });
    }
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
