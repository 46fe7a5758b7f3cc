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
#include <array>

#include "const_eval.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/quantize.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

struct QdqUnaryMatch {
  sdk::Node dq, q;
  ScalarQuant x, y;
  Activation act;
  std::vector<sdk::Node> nodes;
};

bool match_qdq_unary(const sdk::Node& anchor, const Available& ok, QdqUnaryMatch* m) {
  if (!is_quant_op(anchor, "DequantizeLinear") || !ok(anchor) || !scalar_quant(anchor, &m->x)) return false;
  if (is_constant(anchor.input(0)) || !is_float(anchor.output(0))) return false;
  m->dq = anchor;
  m->nodes = {anchor};
  sdk::Value out;
  if (!match_activation(anchor.output(0), ok, &m->act, &m->nodes, &out)) return false;
  const sdk::Node q = sole_consumer(out);
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->y)) return false;
  if (q.num_outputs() != 1 || !q.has_output(0)) return false;
  m->q = q;
  m->nodes.push_back(q);
  return true;
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
    std::array<float, 256> x{}, v{};
    for (int b = 0; b < 256; ++b) {
      if (m.x.type == EPHOST_ELEMENT_UINT8) {
        const uint8_t q = static_cast<uint8_t>(b);
        math::dequantize_linear(&q, m.x.scale, static_cast<uint8_t>(m.x.zero_point), &x[b], 1);
      } else {
        const int8_t q = static_cast<int8_t>(static_cast<uint8_t>(b));
        math::dequantize_linear(&q, m.x.scale, static_cast<int8_t>(m.x.zero_point), &x[b], 1);
      }
    }
    apply_activation(m.act, x.data(), v.data(), 256);
    if (m.y.type == EPHOST_ELEMENT_UINT8)
      math::quantize_linear(v.data(), m.y.scale, static_cast<uint8_t>(m.y.zero_point), table_.data(), 256);
    else
      math::quantize_linear(v.data(), m.y.scale, static_cast<int8_t>(m.y.zero_point), reinterpret_cast<int8_t*>(table_.data()), 256);
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
    // The table and pointers in locals: with a byte store per element, values reached through the
    // closure would be reloaded after every store (a char store may alias them).
    const uint8_t* table = table_.data();
    math::parallel_for(x.size(), threads, math::kElementwiseGrain, [table, px, y](int64_t i0, int64_t i1) {
      const uint8_t* __restrict in = px;
      uint8_t* __restrict out = y;
      for (int64_t i = i0; i < i1; ++i) out[i] = table[in[i]];
    });
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
