// A QDQ model's quantized Reshape / Transpose run on the bytes: the Q/DQ pair a quantizer writes around
// a shape operator with one scale and zero point (ONNX Runtime drops such pairs in its QDQ transformer).
//
//   DequantizeLinear(X_q, s, z) ─ Reshape | Transpose ─ QuantizeLinear(., s, z) ─ Y_q
//
// With the same scale, zero point and type on both sides, Y_q is the view of X_q's bytes exactly:
// x = (q - z) * s and round(x / s) + z give q back (|q - z| <= 255, so the float error is far below half
// a step). So the group moves bytes instead of dequantizing, moving floats and quantizing: BERT's
// attention head split and merge (Reshape and Transpose, each between its own Q/DQ pair).
#include <cmath>
#include <cstring>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/transpose.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

struct QdqViewMatch {
  sdk::Node dq, view, q;
  ScalarQuant x;
  std::vector<sdk::Node> nodes;
};

bool same_quant(const ScalarQuant& a, const ScalarQuant& b) {
  return a.type == b.type && a.zero_point == b.zero_point && a.scale == b.scale && std::isnormal(a.scale);
}

bool match_qdq_view(const sdk::Node& anchor, const Available& ok, QdqViewMatch* m) {
  if (!is_quant_op(anchor, "DequantizeLinear") || !ok(anchor) || !scalar_quant(anchor, &m->x)) return false;
  if (is_constant(anchor.input(0)) || !is_float(anchor.output(0))) return false;
  const sdk::Node view = sole_consumer(anchor.output(0));
  if (!view.valid() || !ok(view) || view.num_outputs() != 1 || view.input(0).name() != anchor.output(0).name())
    return false;
  const bool reshape = is_op(view, "Reshape") && view.opset() >= 5 && view.num_inputs() == 2 && view.has_input(1);
  const bool transpose = is_op(view, "Transpose");
  if (!reshape && !transpose) return false;
  const sdk::Node q = sole_consumer(view.output(0));
  ScalarQuant y;
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &y) || !same_quant(m->x, y)) return false;
  if (q.num_outputs() != 1 || !q.has_output(0)) return false;
  m->dq = anchor;
  m->view = view;
  m->q = q;
  m->nodes = {anchor, view, q};
  return true;
}

// ONNX Reshape's target for an input of shape `in`: 0 copies the input's dimension (unless allowzero),
// -1 takes what is left.
Shape reshape_target(const Shape& in, Shape want, bool allowzero, const std::string& who) {
  auto fail = [&](const std::string& what) {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 reshape " + who + ": shape " + math::to_string(want) + " " + what +
                                           " (input " + math::to_string(in) + ")");
  };
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      if (infer >= 0) fail("has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (want[i] == 0 && !allowzero) {
      if (i >= in.size()) fail("copies a dimension the input does not have");
      want[i] = in[i];
    }
    if (want[i] < 0) fail("has a negative dimension");
    if (__builtin_mul_overflow(known, want[i], &known)) fail("has more elements than can be counted");
  }
  const int64_t n = math::numel(in);
  if (infer >= 0) {
    if (known == 0 || n % known != 0) fail("cannot take the input's elements");
    want[static_cast<size_t>(infer)] = n / known;
  } else if (known != n) {
    fail("does not have the input's element count");
  }
  return want;
}

class QdqViewGroup : public sdk::CompiledGroup {
 public:
  QdqViewGroup(const QdqViewMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 view " + name_ + ": unexpected group interface");
    if (is_op(m.view, "Transpose")) {
      perm_ = m.view.attr_ints("perm");
      return;
    }
    allowzero_ = m.view.attr_int("allowzero", 0) != 0;
    const sdk::Tensor s = constant_of(m.view.input(1));
    if (s.present()) {
      constant_shape_ = true;
      shape_ = ints_of(s);
    } else {
      shape_index_ = group_input(group, m.view.input(1).name());
      if (shape_index_ < 0)
        sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 reshape " + name_ + ": no shape input");
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != m_.x.type)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 view " + name_ + ": X has an unexpected type");
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const Shape in = x.shape();
    if (!is_op(m_.view, "Reshape")) {
      std::vector<int64_t> perm = perm_;
      const Shape out = math::transpose_shape(in, &perm);
      void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.x.type, out);
      math::transpose(x.raw(), in, perm, y, 1, threads);
      math::note_team_end(threads);
      return;
    }
    Shape want = shape_;
    if (!constant_shape_) {
      const sdk::Tensor s = ctx.input(static_cast<size_t>(shape_index_));
      if (!s.present() || s.elem_type() != EPHOST_ELEMENT_INT64 || s.rank() != 1)
        sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 reshape " + name_ + ": the shape must be a 1-D int64 tensor");
      want = ints_of(s);
    }
    const Shape out = reshape_target(in, want, allowzero_, name_);
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.x.type, out);
    if (x.size() > 0) std::memcpy(y, x.raw(), static_cast<size_t>(x.size()));
  }

 private:
  static Shape ints_of(const sdk::Tensor& t) {
    if (t.elem_type() == EPHOST_ELEMENT_INT64) return Shape(t.data<int64_t>(), t.data<int64_t>() + t.size());
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 reshape: the shape must be int64");
  }

  std::string name_;
  QdqViewMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1, shape_index_ = -1;
  std::vector<int64_t> perm_;  // Transpose (empty: reversed)
  bool allowzero_ = false, constant_shape_ = false;
  Shape shape_;  // Reshape's constant target
};

class QdqViewFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_view"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqViewMatch m;
    return match_qdq_view(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqViewMatch m;
    if (!match_qdq_view(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 view " + group.name() + ": pattern not found");
    return std::make_unique<QdqViewGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_view_fusion() {
  static const QdqViewFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
