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
// where the gate is a chain of steps, QuantizeLinear -> DequantizeLinear pairs between them (Sigmoid,
// HardSigmoid, ...; BERT's GELU: x * DQ(Q(DQ(Q(Erf(x / sqrt 2))) + 1))). That too is one function of X_q's
// byte (ONNX Runtime runs it as QLinearSigmoid then QLinearMul): its table evaluates the gate, its
// QuantizeLinear and DequantizeLinear, the float product and the last QuantizeLinear, op by op. X's
// DequantizeLinear then has the gate and the Mul as its readers, both in the group, which reads X_q.
//
// A chain also goes on through a QuantizeLinear -> DequantizeLinear pair that its output alone feeds, into
// further steps (GELU's DQ -> Mul 0.5 -> Q after the product): every pair is evaluated as its two nodes
// would, so one table replaces several, one pass over the bytes instead of one per table.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

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
  enum Kind {
    kActivation, kErf, kSqrt, kAdd, kMul, kSub, kReverseSub, kDiv, kReverseDiv,
    kRequantize,   // a QuantizeLinear (q) then a DequantizeLinear (dq) of its bytes
    kTimesInput    // the gated form's product: the chain's input x times the value
  } kind = kActivation;
  Activation act;  // kActivation
  float c = 0.f;   // the scalar constant of the binary kinds (kReverse*: c - x, c / x)
  ScalarQuant q, dq;  // kRequantize
};

struct QdqUnaryMatch {
  sdk::Node dq, q;
  bool float_input = false;  // the group reads DQ's float output (the DequantizeLinear is shared)
  ScalarQuant x, y;
  std::vector<Step> steps;
  bool gated = false;  // the gated form: the steps hold the gate, a kTimesInput, then what follows the product
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

// Applies the steps to the 256 values v, dequantized from the bytes into x.
void apply_steps(const std::vector<Step>& steps, const std::array<float, 256>& x, std::array<float, 256>* values) {
  float* v = values->data();
  std::array<float, 256> tmp{};
  std::array<uint8_t, 256> bytes{};
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
      case Step::kRequantize:
        quantize_row(v, s.q, bytes.data(), 256);
        dequantize_row(bytes.data(), s.dq, v, 256);
        break;
      case Step::kTimesInput: for (int i = 0; i < 256; ++i) v[i] = x[static_cast<size_t>(i)] * v[i]; break;
    }
  }
}

// The QuantizeLinear -> DequantizeLinear pair that v alone feeds, as a step; appends its nodes and sets *out.
bool requantize_step(const sdk::Value& v, const Available& ok, Step* step, std::vector<sdk::Node>* nodes,
                     sdk::Value* out) {
  sdk::Node q, dq;
  if (!match_requantize(v, ok, &q, &dq, &step->q, &step->dq)) return false;
  step->kind = Step::kRequantize;
  nodes->push_back(q);
  nodes->push_back(dq);
  *out = dq.output(0);
  return true;
}

// The gated form from X's float value v (two readers: the gate's first step and the Mul): the gate's steps
// and pairs up to the DequantizeLinear that the Mul alone reads beside v. Appends the nodes and steps
// (ending with kTimesInput) and sets *out to the Mul's output.
bool match_quantized_gate(const sdk::Value& v, const Available& ok, QdqUnaryMatch* m, sdk::Value* out) {
  const std::vector<sdk::Node> cons = inner_consumers(v);
  if (cons.size() != 2) return false;
  for (int first = 0; first < 2; ++first) {
    const sdk::Node gate = cons[first], mul = cons[1 - first];
    if (!ok(mul) || !is_op(mul, "Mul") || mul.num_inputs() != 2 || !is_float(mul.output(0))) continue;
    const int k = other_input(mul, v.name());
    if (k < 0) continue;
    const std::string gate_out = mul.input(static_cast<size_t>(k)).name();
    std::vector<sdk::Node> nodes;
    std::vector<Step> steps;
    Step step;
    if (!ok(gate) || !single_node_step(gate, v.name(), &step)) continue;
    nodes.push_back(gate);
    steps.push_back(step);
    sdk::Value w = gate.output(0);
    bool reached = false;
    for (int guard = 0; guard < 16 && !reached; ++guard) {
      sdk::Value next;
      if (requantize_step(w, ok, &step, &nodes, &next)) {
        steps.push_back(step);
        w = next;
        reached = w.name() == gate_out && read_only_by(w, mul);
        continue;
      }
      if (!next_step(w, ok, &step, &nodes, &next)) break;
      steps.push_back(step);
      w = next;
    }
    // The gate's value reaches the Mul through a pair: its rounding is what the table must reproduce.
    if (!reached) continue;
    m->gated = true;
    nodes.push_back(mul);
    steps.push_back(Step{Step::kTimesInput});
    m->nodes.insert(m->nodes.end(), nodes.begin(), nodes.end());
    m->steps.insert(m->steps.end(), steps.begin(), steps.end());
    *out = mul.output(0);
    return true;
  }
  return false;
}

// A chain of steps from v (at least one) to the QuantizeLinear that ends it, on through each
// QuantizeLinear -> DequantizeLinear pair that leads into more steps and another QuantizeLinear.
bool match_steps_then_quantize(sdk::Value v, const Available& ok, QdqUnaryMatch* m) {
  struct End {
    sdk::Node q;
    ScalarQuant y;
    size_t nodes = 0, steps = 0;  // m's nodes and steps before the QuantizeLinear
  };
  std::optional<End> end;  // the last QuantizeLinear that ends a chain
  for (int guard = 0; guard < 32; ++guard) {
    if (is_quant_op(sole_consumer(v), "QuantizeLinear")) {
      if (m->steps.empty()) return false;
      ScalarQuant y;
      const sdk::Node q = output_quantize(v, ok, &y);
      if (!q.valid()) break;
      end = End{q, y, m->nodes.size(), m->steps.size()};
      Step pair;
      sdk::Value past;
      if (!requantize_step(v, ok, &pair, &m->nodes, &past)) break;
      m->steps.push_back(pair);
      v = past;
      continue;
    }
    Step step;
    sdk::Value out;
    if (!next_step(v, ok, &step, &m->nodes, &out)) break;
    m->steps.push_back(step);
    v = out;
  }
  if (!end) return false;
  // What came after the last QuantizeLinear led to no other: the chain ends there.
  m->nodes.resize(end->nodes);
  m->nodes.push_back(end->q);
  m->steps.resize(end->steps);
  m->q = end->q;
  m->y = end->y;
  return true;
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
    apply_steps(m.steps, x, &v);
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
      math::parallel_for(x.size(), threads, math::byte_grain(),
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
