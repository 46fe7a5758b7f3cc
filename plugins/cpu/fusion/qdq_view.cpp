// A QDQ model's quantized Reshape / Transpose / Slice run on the bytes: the Q/DQ pair a quantizer writes
// around a shape operator with one scale and zero point (ONNX Runtime drops such pairs in its QDQ
// transformer).
//
//   DequantizeLinear(X_q, s, z) ─ Reshape | Transpose | Slice ─ QuantizeLinear(., s, z) ─ Y_q
//
// Slices may share the DequantizeLinear (ViT splits its fused query/key/value projection in three): the
// group then reads X_q once and writes one Y_q per Slice. A Slice's starts, ends, axes and steps are
// constants.
//
// With the same scale, zero point and type on both sides, Y_q is the view of X_q's bytes exactly:
// x = (q - z) * s and round(x / s) + z give q back (|q - z| <= 255, so the float error is far below half
// a step). So the group moves bytes instead of dequantizing, moving floats and quantizing: BERT's
// attention head split and merge (Reshape and Transpose, each between its own Q/DQ pair), ViT's
// query/key/value split (Slices).
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/slice.h"
#include "math/transpose.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

namespace {

struct QdqViewMatch {
  sdk::Node dq;
  std::vector<sdk::Node> views, qs;  // one QuantizeLinear per view, in the same order
  ScalarQuant x;
  std::vector<sdk::Node> nodes;
};

bool same_quant(const ScalarQuant& a, const ScalarQuant& b) {
  return a.type == b.type && a.zero_point == b.zero_point && a.scale == b.scale && std::isnormal(a.scale);
}

// A Slice (opset 10+) whose starts, ends, axes and steps are integer constants.
bool constant_slice(const sdk::Node& n) {
  if (!is_op(n, "Slice") || n.opset() < 10 || n.num_inputs() < 3) return false;
  for (size_t i = 1; i < n.num_inputs() && i < 5; ++i) {
    if (!n.has_input(i)) {
      if (i < 3) return false;
      continue;
    }
    const sdk::Tensor t = constant_of(n.input(i));
    if (!t.present() || (t.elem_type() != EPHOST_ELEMENT_INT64 && t.elem_type() != EPHOST_ELEMENT_INT32)) return false;
  }
  return true;
}

bool match_qdq_view(const sdk::Node& anchor, const Available& ok, QdqViewMatch* m) {
  if (!is_quant_op(anchor, "DequantizeLinear") || !ok(anchor) || !is_activation_dequantize(anchor, &m->x)) return false;
  const sdk::Value x = anchor.output(0);
  const std::vector<sdk::Node> readers = inner_consumers(x);
  if (readers.empty()) return false;
  m->dq = anchor;
  m->views.clear();
  m->qs.clear();
  m->nodes = {anchor};
  for (const sdk::Node& view : readers) {
    if (!ok(view) || view.num_outputs() != 1 || view.input(0).name() != x.name()) return false;
    const bool reshape = is_op(view, "Reshape") && view.opset() >= 5 && view.num_inputs() == 2 && view.has_input(1);
    const bool transpose = is_op(view, "Transpose");
    // Only slices share the bytes (a Reshape or Transpose reader among others is left to the graph).
    const bool slice = constant_slice(view);
    if (!slice && (readers.size() > 1 || (!reshape && !transpose))) return false;
    ScalarQuant y;
    const sdk::Node q = output_quantize(view.output(0), ok, &y);
    if (!q.valid() || !same_quant(m->x, y)) return false;
    m->views.push_back(view);
    m->qs.push_back(q);
    m->nodes.push_back(view);
    m->nodes.push_back(q);
  }
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

// The integers of a constant (int64 or int32).
Shape ints_of(const sdk::Tensor& t, const std::string& who) {
  if (t.elem_type() == EPHOST_ELEMENT_INT64) return Shape(t.data<int64_t>(), t.data<int64_t>() + t.size());
  if (t.elem_type() == EPHOST_ELEMENT_INT32) return Shape(t.data<int32_t>(), t.data<int32_t>() + t.size());
  sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 view " + who + ": shape and slice bounds must be int64 or int32");
}

// One Slice's constant bounds.
struct SliceBounds {
  int out_index = -1;
  Shape starts, ends, axes, steps;
};

class QdqViewGroup : public sdk::CompiledGroup {
 public:
  QdqViewGroup(const QdqViewMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.dq.input(0).name());
    if (in_index_ < 0 || m.views.empty() || group.num_outputs() != m.qs.size())
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 view " + name_ + ": unexpected group interface");
    for (const sdk::Node& q : m.qs)
      if (group_output(group, q.output(0).name()) < 0)
        sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 view " + name_ + ": unexpected group interface");
    out_index_ = group_output(group, m.qs[0].output(0).name());
    const sdk::Node& view = m.views[0];
    if (is_op(view, "Slice")) {
      for (size_t i = 0; i < m.views.size(); ++i) {
        const sdk::Node& s = m.views[i];
        SliceBounds b;
        b.out_index = group_output(group, m.qs[i].output(0).name());
        b.starts = ints_of(constant_of(s.input(1)), name_);
        b.ends = ints_of(constant_of(s.input(2)), name_);
        if (s.num_inputs() > 3 && s.has_input(3)) b.axes = ints_of(constant_of(s.input(3)), name_);
        if (s.num_inputs() > 4 && s.has_input(4)) b.steps = ints_of(constant_of(s.input(4)), name_);
        slices_.push_back(std::move(b));
      }
      return;
    }
    if (is_op(view, "Transpose")) {
      perm_ = view.attr_ints("perm");
      return;
    }
    allowzero_ = view.attr_int("allowzero", 0) != 0;
    const sdk::Tensor s = constant_of(view.input(1));
    if (s.present()) {
      constant_shape_ = true;
      shape_ = ints_of(s, name_);
    } else {
      shape_index_ = group_input(group, view.input(1).name());
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
    if (!slices_.empty()) {
      const Shape strides = math::strides_of(in);
      for (const SliceBounds& b : slices_) {
        math::SliceWindow w;
        try {
          w = math::slice_window(in, b.starts, b.ends, b.axes, b.steps);
        } catch (const std::invalid_argument& e) {
          sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 slice " + name_ + ": " + e.what());
        }
        auto* y = static_cast<uint8_t*>(ctx.output_raw(static_cast<size_t>(b.out_index), m_.x.type, w.out));
        if (math::numel(w.out) > 0) math::copy_window(static_cast<const uint8_t*>(x.raw()), strides, w, y, threads);
      }
      math::note_team_end(threads);
      return;
    }
    if (!is_op(m_.views[0], "Reshape")) {
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
      want = ints_of(s, name_);
    }
    const Shape out = reshape_target(in, want, allowzero_, name_);
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.x.type, out);
    if (x.size() > 0) std::memcpy(y, x.raw(), static_cast<size_t>(x.size()));
  }

 private:
  std::string name_;
  QdqViewMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1, shape_index_ = -1;
  std::vector<int64_t> perm_;  // Transpose (empty: reversed)
  bool allowzero_ = false, constant_shape_ = false;
  Shape shape_;  // Reshape's constant target
  std::vector<SliceBounds> slices_;  // Slices: one per output
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
