// A QDQ model's quantized attention softmax in one pass over the rows: the pattern ONNX Runtime runs
// as QLinearSoftmax.
//
//   DequantizeLinear(X_q, sx, zx) ─ [Div | Mul by a scalar] ─ [Add(., mask)] ─ Softmax(last axis) ─
//   QuantizeLinear(., sy, zy) ─ Y_q
//
// Op by op that is five passes over the scores, four float tensors the size of X. Here each row is
// dequantized into an L1 buffer, scaled and masked with the graph's own float operations (a true
// division for Div), normalised by the Softmax kernel's row loop (math/vec.h softmax_row_f32, as
// math/softmax.cpp calls it) and quantized (math/quantize.h): the unfused graph's result bit for bit.
// The mask broadcasts as numpy does, and must not widen the scores (it never does in attention).
#include <algorithm>
#include <vector>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/broadcast.h"
#include "math/parallel.h"
#include "math/vec.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

struct QdqSoftmaxMatch {
  sdk::Node dq, scale, mask_add, softmax, q;
  ScalarQuant x, y;
  bool divide = false;  // the scale node divides by `factor` (else multiplies)
  float factor = 1.f;
  std::string mask;  // the mask value's name (empty: none)
  std::vector<sdk::Node> nodes;
};

bool match_qdq_softmax(const sdk::Node& anchor, const Available& ok, QdqSoftmaxMatch* m) {
  if (!ok(anchor) || !is_activation_dequantize(anchor, &m->x)) return false;
  m->dq = anchor;
  m->nodes = {anchor};
  sdk::Value v = anchor.output(0);
  sdk::Node n = sole_consumer(v);
  float c = 0.f;
  if ((is_op(n, "Div") || is_op(n, "Mul")) && ok(n) && n.num_inputs() == 2 && is_float(n.output(0))) {
    const int k = other_input(n, v.name());
    const bool divide = is_op(n, "Div");
    if (k < 0 || (divide && k != 1) || !scalar_constant(n.input(static_cast<size_t>(k)), &c)) return false;
    if (n.input(static_cast<size_t>(k)).rank() > 0) return false;  // a [1]-shaped constant could widen a scalar
    m->scale = n;
    m->divide = divide;
    m->factor = c;
    m->nodes.push_back(n);
    v = n.output(0);
    n = sole_consumer(v);
  }
  if (is_op(n, "Add") && ok(n) && n.num_inputs() == 2 && is_float(n.output(0))) {
    const int k = other_input(n, v.name());
    if (k < 0 || !is_float(n.input(static_cast<size_t>(k)))) return false;
    m->mask_add = n;
    m->mask = n.input(static_cast<size_t>(k)).name();
    m->nodes.push_back(n);
    v = n.output(0);
    n = sole_consumer(v);
  }
  if (!is_op(n, "Softmax") || !ok(n) || n.input(0).name() != v.name() || !is_float(n.output(0))) return false;
  const int64_t rank = v.rank();
  const int64_t axis = n.attr_int("axis", n.opset() >= 13 ? -1 : 1);
  if (!(axis == -1 || (rank > 0 && axis == rank - 1))) return false;
  m->softmax = n;
  m->nodes.push_back(n);
  const sdk::Node q = output_quantize(n.output(0), ok, &m->y);
  if (!q.valid()) return false;
  m->q = q;
  m->nodes.push_back(q);
  return true;
}

class QdqSoftmaxGroup : public sdk::CompiledGroup {
 public:
  QdqSoftmaxGroup(const QdqSoftmaxMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (!m.mask.empty()) {
      for (size_t i = 0; i < m.mask_add.num_inputs(); ++i)
        if (m.mask_add.input(i).name() == m.mask) mask_const_ = constant_of(m.mask_add.input(i));
      if (!mask_const_.present()) mask_index_ = group_input(group, m.mask);
    }
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1 ||
        (!m.mask.empty() && !mask_const_.present() && mask_index_ < 0))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 softmax " + name_ + ": unexpected group interface");
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != m_.x.type) fail("X has an unexpected type");
    const Shape xs = x.shape();
    if (xs.empty()) fail("the scores must have at least one axis");
    sdk::Tensor mask;
    if (!m_.mask.empty()) {
      mask = mask_const_.present() ? mask_const_ : ctx.input(static_cast<size_t>(mask_index_));
      if (!mask.present() || mask.elem_type() != EPHOST_ELEMENT_FLOAT) fail("the mask must be a float tensor");
    }
    // The mask's offset for each row (0 stride along its broadcast axes); its last axis must be the row.
    const int64_t n = xs.back(), rows = math::numel(xs) / std::max<int64_t>(n, 1);
    Shape mask_strides(xs.size(), 0);
    if (mask.present()) {
      const Shape ms = mask.shape();
      if (ms.size() > xs.size() || math::broadcast_shapes(xs, ms) != xs)
        fail("the mask " + math::to_string(ms) + " would widen the scores " + math::to_string(xs));
      const Shape st = math::strides_of(ms);
      for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i] != 1) mask_strides[xs.size() - ms.size() + i] = st[i];
    }
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, xs);
    if (rows == 0 || n == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const uint8_t* px = static_cast<const uint8_t*>(x.raw());
    const float* pm = mask.present() ? mask.data<float>() : nullptr;
    // Each row is worked as a float row (read and written), whatever its bytes' width.
    math::parallel_for(rows, threads, math::pass_grain(2 * static_cast<int64_t>(sizeof(float)) * n), [&](int64_t r0, int64_t r1) {
      thread_local std::vector<float> buffer;
      if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
      float* row = buffer.data();
      for (int64_t r = r0; r < r1; ++r) {
        dequantize_row(px + r * n, m_.x, row, n);
        if (m_.scale.valid()) {
          const float f = m_.factor;
          if (m_.divide)
            for (int64_t i = 0; i < n; ++i) row[i] = row[i] / f;
          else
            for (int64_t i = 0; i < n; ++i) row[i] = row[i] * f;
        }
        if (pm) {
          // The row's mask offset from its index along the leading axes.
          int64_t off = 0, rest = r;
          for (size_t d = xs.size() - 1; d-- > 0;) {
            off += (rest % xs[d]) * mask_strides[d];
            rest /= xs[d];
          }
          const int64_t step = mask_strides.back();
          for (int64_t i = 0; i < n; ++i) row[i] = row[i] + pm[off + i * step];
        }
        math::softmax_row_f32(row, 1.f, nullptr, row, n);
        quantize_row(row, m_.y, static_cast<uint8_t*>(y) + r * n, n);
      }
    });
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 softmax " + name_ + " (" + m_.softmax.name() + "): " + what);
  }

  std::string name_;
  QdqSoftmaxMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1, mask_index_ = -1;
  sdk::Tensor mask_const_;
};

class QdqSoftmaxFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_softmax"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqSoftmaxMatch m;
    return match_qdq_softmax(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqSoftmaxMatch m;
    if (!match_qdq_softmax(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 softmax " + group.name() + ": pattern not found");
    return std::make_unique<QdqSoftmaxGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_softmax_fusion() {
  static const QdqSoftmaxFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
