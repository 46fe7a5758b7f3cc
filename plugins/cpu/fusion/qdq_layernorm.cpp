// A QDQ model's layer normalisation over the last axis in one pass per row, reading and writing int8.
//
//   x = DequantizeLinear(X_q, sx, zx)
//   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d^2, [-1]); s = Sqrt(v + eps)
//   y = d / s [* gamma] [+ beta];  Y_q = QuantizeLinear(y, sy, zy)
//
// as exporters write LayerNorm before opset 17, with a static quantizer's QuantizeLinear ->
// DequantizeLinear pairs between any of the steps (BERT's quantized model re-quantizes the variance,
// v + eps, the normalised row and the row times gamma). Op by op that is a dozen passes over float
// tensors the size of X; ONNX Runtime leaves the float ops between its Q/DQ pairs too. Here each row
// is dequantized into an L1 buffer, and every step runs in the graph's own float operations and
// order (Pow 2 as x * x as the Pow kernel does, a true division; math/vec.h's exact loops), each
// re-quantization with math/quantize.h's loops as QuantizeLinear / DequantizeLinear run them. Only the
// two means add in another order than the ReduceMean kernel (row_mean below): within a quantization
// step of the unfused graph, and bit for bit where no rounding boundary lies between the two sums.
#include <algorithm>
#include <cmath>
#include <vector>

#include "constant_lookup.h"
#include "graph_match.h"
#include "layernorm_match.h"
#include "math/parallel.h"
#include "math/vec.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

// A QuantizeLinear -> DequantizeLinear pair the graph puts after a step (absent: `on` false).
struct Requant {
  bool on = false;
  ScalarQuant q;
};

struct QdqLayerNormMatch {
  sdk::Node dq, rm1, q;
  ScalarQuant x, y;
  bool float_input = false;  // the group reads x's DequantizeLinear's float output (it has other readers)
  Requant mean_q, diff_q, square_q, var_q, shifted_q, std_q, norm_q, scaled_q;
  float eps = 0.f;
  sdk::Value gamma, beta;  // invalid when absent
  std::vector<sdk::Node> nodes;
};

// A float constant of rank <= 1 (gamma or beta of the row; its length is checked per run).
bool row_vector(const sdk::Value& v) {
  if (!is_float(v)) return false;
  const sdk::Tensor t = constant_of(v);
  return t.present() && t.rank() <= 1 && t.size() >= 1;
}

// The QuantizeLinear -> DequantizeLinear pair that v alone feeds, with one scale and zero point each
// (the same on both), the DequantizeLinear's output in *out.
bool requant_pair(const sdk::Value& v, const Available& ok, Requant* r, sdk::Node* q, sdk::Node* dq, sdk::Value* out) {
  ScalarQuant a, b;
  if (!match_requantize(v, ok, q, dq, &a, &b) || a.scale != b.scale || a.zero_point != b.zero_point) return false;
  r->on = true;
  r->q = a;
  *out = dq->output(0);
  return true;
}

// In the quantized graph a QuantizeLinear -> DequantizeLinear pair may lie between two steps: each one
// passed is recorded for the step it follows.
class RequantLinks : public LayerNormLinks {
 public:
  explicit RequantLinks(QdqLayerNormMatch* m) : m_(m) {}
  sdk::Node next(sdk::Value* v, const char* op, LayerNormStep after, const Available& ok,
                 std::vector<sdk::Node>* nodes) override {
    const sdk::Node n = sole_consumer(*v);
    if (is_op(n, op) && ok(n)) return n;
    Requant pair;
    sdk::Node q, dq;
    sdk::Value past;
    if (!requant_pair(*v, ok, &pair, &q, &dq, &past)) return sdk::Node();
    const sdk::Node m = sole_consumer(past);
    if (!is_op(m, op) || !ok(m)) return sdk::Node();
    *slot(after) = pair;
    nodes->push_back(q);
    nodes->push_back(dq);
    *v = past;
    return m;
  }
  bool pass_difference(sdk::Value* d, const Available& ok, std::vector<sdk::Node>* nodes) override {
    sdk::Node q, dq;
    if (!requant_pair(*d, ok, &m_->diff_q, &q, &dq, d)) return false;
    nodes->push_back(q);
    nodes->push_back(dq);
    return true;
  }
  void forget(LayerNormStep after) override { *slot(after) = Requant(); }
  bool row_constant(const sdk::Value& v) const override { return row_vector(v); }

 private:
  Requant* slot(LayerNormStep after) {
    switch (after) {
      case LayerNormStep::kMean: return &m_->mean_q;
      case LayerNormStep::kDifference: return &m_->diff_q;
      case LayerNormStep::kSquare: return &m_->square_q;
      case LayerNormStep::kVariance: return &m_->var_q;
      case LayerNormStep::kShifted: return &m_->shifted_q;
      case LayerNormStep::kStd: return &m_->std_q;
      case LayerNormStep::kNorm: return &m_->norm_q;
      case LayerNormStep::kScaled:
      case LayerNormStep::kCount: break;
    }
    return &m_->scaled_q;
  }

  QdqLayerNormMatch* m_;
};

// Where the pattern starts: at x's DequantizeLinear when the mean and the difference are its only
// readers (the group reads the bytes), or at the mean when x's DequantizeLinear also feeds others (a
// pre-norm transformer's residual Add: the group reads the float x, and the DequantizeLinear stays).
bool match_input(const sdk::Node& anchor, const Available& ok, QdqLayerNormMatch* m) {
  if (!ok(anchor)) return false;
  const bool at_dq = is_quant_op(anchor, "DequantizeLinear");
  if (!at_dq && !(is_op(anchor, "ReduceMean") && anchor.has_input(0))) return false;
  const sdk::Node dq = at_dq ? anchor : anchor.input(0).producer();
  if (!is_activation_dequantize(dq, &m->x)) return false;
  const sdk::Value x = dq.output(0);
  const std::vector<sdk::Node> xc = inner_consumers(x);
  if (at_dq ? xc.size() != 2 : xc.size() <= 2) return false;
  m->dq = dq;
  m->float_input = !at_dq;
  if (at_dq) {
    m->rm1 = last_axis_mean(xc[0], x.rank()) ? xc[0] : xc[1];
    m->nodes = {dq};
  } else {
    m->rm1 = anchor;
    m->nodes = {};
  }
  return last_axis_mean(m->rm1, x.rank());
}

bool match_qdq_layernorm(const sdk::Node& anchor, const Available& ok, QdqLayerNormMatch* m) {
  if (!match_input(anchor, ok, m)) return false;
  RequantLinks links(m);
  LayerNormChain chain;
  if (!match_layernorm_chain(m->dq.output(0), m->rm1, ok, links, &chain)) return false;
  m->eps = chain.eps;
  m->gamma = chain.gamma;
  m->beta = chain.beta;
  m->nodes.insert(m->nodes.end(), chain.nodes.begin(), chain.nodes.end());
  const sdk::Node q = output_quantize(chain.out, ok, &m->y);
  if (!q.valid()) return false;
  m->q = q;
  m->nodes.push_back(q);
  return true;
}

// x rounded through r's quantization in place (nothing when r is off); `bytes` holds n elements.
void requantize(const Requant& r, float* x, uint8_t* bytes, int64_t n) {
  if (!r.on) return;
  quantize_row(x, r.q, bytes, n);
  dequantize_row(bytes, r.q, x, n);
}

// The mean of a row: summed in 8 float lanes (math::sum_f32, the same on every tier), divided by the
// count. The ReduceMean kernel adds left to right, one dependent add per element: the two sums were
// most of a row's time. Their rounding differs in the last bits, so now and then a re-quantized
// variance lands one step away from the op-by-op graph's (the output then moves by at most a step).
float row_mean(const float* x, int64_t n) {
  return static_cast<float>(math::sum_f32(x, n)) / static_cast<float>(n);
}

class QdqLayerNormGroup : public sdk::CompiledGroup {
 public:
  QdqLayerNormGroup(const QdqLayerNormMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.float_input ? m.dq.output(0).name() : m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 layer norm " + name_ + ": unexpected group interface");
    if (m.gamma.valid()) {
      const sdk::Tensor t = constant_of(m.gamma);
      gamma_.assign(t.data<float>(), t.data<float>() + t.size());
    }
    if (m.beta.valid()) {
      const sdk::Tensor t = constant_of(m.beta);
      beta_.assign(t.data<float>(), t.data<float>() + t.size());
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != (m_.float_input ? EPHOST_ELEMENT_FLOAT : m_.x.type))
      fail("X has an unexpected type");
    const Shape xs = x.shape();
    if (xs.empty()) fail("X must have at least one axis");
    const int64_t n = xs.back(), rows = n > 0 ? math::numel(xs) / n : 0;
    const std::vector<float> gamma = row_of(gamma_, n, "gamma"), beta = row_of(beta_, n, "beta");
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, xs);
    if (rows == 0 || n == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const uint8_t* px = static_cast<const uint8_t*>(x.raw());
    const int64_t in_bytes = m_.float_input ? static_cast<int64_t>(sizeof(float)) : 1;
    uint8_t* py = static_cast<uint8_t*>(y);
    // Each row is worked as a float row (read and written), whatever its bytes' width.
    math::parallel_for(rows, threads, math::pass_grain(2 * static_cast<int64_t>(sizeof(float)) * n), [&](int64_t r0, int64_t r1) {
      thread_local std::vector<float> buffer;
      thread_local std::vector<uint8_t> bytes;
      if (buffer.size() < static_cast<size_t>(2 * n)) buffer.resize(static_cast<size_t>(2 * n));
      if (bytes.size() < static_cast<size_t>(n)) bytes.resize(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) normalize_row(px + r * n * in_bytes, py + r * n, n, gamma, beta, buffer.data(), bytes.data());
    });
    math::note_team_end(threads);
  }

 private:
  // One row: `x` n input elements (floats or quantized bytes) to n output bytes `y`; `work` holds 2n
  // floats, `bytes` n bytes.
  void normalize_row(const uint8_t* x, uint8_t* y, int64_t n, const std::vector<float>& gamma,
                     const std::vector<float>& beta, float* work, uint8_t* bytes) const {
    float* row = work;    // x, then the square, then the result
    float* d = work + n;  // x - mean
    if (m_.float_input)
      std::copy(reinterpret_cast<const float*>(x), reinterpret_cast<const float*>(x) + n, row);
    else
      dequantize_row(x, m_.x, row, n);
    using math::BinOp;
    float mean = row_mean(row, n);
    requantize(m_.mean_q, &mean, bytes, 1);
    math::binary_f32(BinOp::kSub, row, true, &mean, false, d, n);
    requantize(m_.diff_q, d, bytes, n);
    math::binary_f32(BinOp::kMul, d, true, d, true, row, n);
    requantize(m_.square_q, row, bytes, n);
    float s = row_mean(row, n);
    requantize(m_.var_q, &s, bytes, 1);
    s = s + m_.eps;
    requantize(m_.shifted_q, &s, bytes, 1);
    s = std::sqrt(s);
    requantize(m_.std_q, &s, bytes, 1);
    math::binary_f32(BinOp::kDiv, d, true, &s, false, row, n);
    requantize(m_.norm_q, row, bytes, n);
    if (!gamma.empty()) {
      math::binary_f32(BinOp::kMul, row, true, gamma.data(), true, row, n);
      requantize(m_.scaled_q, row, bytes, n);
    }
    if (!beta.empty()) math::binary_f32(BinOp::kAdd, row, true, beta.data(), true, row, n);
    quantize_row(row, m_.y, y, n);
  }

  // gamma or beta spread over a row of n (a single value broadcasts), or empty when absent.
  std::vector<float> row_of(const std::vector<float>& v, int64_t n, const char* what) const {
    if (v.empty() || static_cast<int64_t>(v.size()) == n) return v;
    if (v.size() != 1) fail(std::string(what) + " has " + std::to_string(v.size()) + " values for rows of " + std::to_string(n));
    return std::vector<float>(static_cast<size_t>(n), v[0]);
  }

  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 layer norm " + name_ + " (" + m_.rm1.name() + "): " + what);
  }

  std::string name_;
  QdqLayerNormMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1;
  std::vector<float> gamma_, beta_;
};

class QdqLayerNormFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_layernorm"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqLayerNormMatch m;
    return match_qdq_layernorm(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqLayerNormMatch m;
    if (!match_qdq_layernorm(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 layer norm " + group.name() + ": pattern not found");
    return std::make_unique<QdqLayerNormGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_layernorm_fusion() {
  static const QdqLayerNormFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
