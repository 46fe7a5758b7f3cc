// A QDQ model's quantized MaxPool run on the bytes: the pattern ONNX Runtime keeps in int8 by QDQ
// propagation.
//
//   DequantizeLinear(X_q, sx, zx) ─ MaxPool ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// X_q is u8 or s8 with one scale and zero point. DequantizeLinear and QuantizeLinear are both
// non-decreasing, so the maximum commutes with them: Y_q = table[max(X_q window)] with
// table[b] = Q(DQ(b)), bit for bit the op-by-op graph (the table is skipped where it is the identity,
// as when a quantizer gives the pool's output its input's scale and zero point). Padding takes no part
// in a maximum; windows that could lie wholly in the padding (pads as large as the kernel, or
// ceil_mode) are left to the op-by-op path, where the float maximum of nothing is -inf.
#include <array>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/byte_table.h"
#include "math/parallel.h"
#include "math/pool.h"
#include "math/quantize.h"
#include "qdq_common.h"
#include "qdq_pool.h"

namespace ephost::cpu::fusion {

bool match_qdq_max_pool(const sdk::Node& anchor, const Available& ok, QdqMaxPoolMatch* m) {
  if (!is_quant_op(anchor, "DequantizeLinear") || !ok(anchor) || !scalar_quant(anchor, &m->x)) return false;
  if (is_constant(anchor.input(0)) || !is_float(anchor.output(0))) return false;
  const sdk::Node pool = sole_consumer(anchor.output(0));
  if (!is_op(pool, "MaxPool") || !ok(pool) || pool.num_inputs() != 1) return false;
  if (pool.num_outputs() > 1 && pool.has_output(1)) return false;  // the indices output is wanted
  math::PoolParams& p = m->params;
  p.auto_pad = pool.attr_string("auto_pad", "NOTSET");
  p.kernel_shape = pool.attr_ints("kernel_shape");
  p.strides = pool.attr_ints("strides");
  p.pads = pool.attr_ints("pads");
  p.dilations = pool.attr_ints("dilations");
  p.ceil_mode = pool.attr_int("ceil_mode", 0) != 0;
  if (p.kernel_shape.empty() || p.ceil_mode || pool.attr_int("storage_order", 0) != 0) return false;
  for (size_t i = 0; i < p.pads.size(); ++i) {
    const size_t axis = i % p.kernel_shape.size();
    const int64_t dilation = axis < p.dilations.size() ? p.dilations[axis] : 1;
    if (p.pads[i] >= (p.kernel_shape[axis] - 1) * dilation + 1) return false;
  }
  const sdk::Node q = sole_consumer(pool.output(0));
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->y)) return false;
  if (q.num_outputs() != 1 || !q.has_output(0)) return false;
  m->dq = anchor;
  m->pool = pool;
  m->q = q;
  return true;
}

bool max_pool_byte_table(const ScalarQuant& xq, const ScalarQuant& yq, std::array<uint8_t, 256>* table) {
  std::array<float, 256> x{};
  for (int b = 0; b < 256; ++b) {
    const uint8_t byte = static_cast<uint8_t>(b);
    if (xq.type == EPHOST_ELEMENT_UINT8)
      math::dequantize_linear(&byte, xq.scale, static_cast<uint8_t>(xq.zero_point), &x[b], 1);
    else
      math::dequantize_linear(reinterpret_cast<const int8_t*>(&byte), xq.scale, static_cast<int8_t>(xq.zero_point),
                              &x[b], 1);
  }
  if (yq.type == EPHOST_ELEMENT_UINT8)
    math::quantize_linear(x.data(), yq.scale, static_cast<uint8_t>(yq.zero_point), table->data(), 256);
  else
    math::quantize_linear(x.data(), yq.scale, static_cast<int8_t>(yq.zero_point),
                          reinterpret_cast<int8_t*>(table->data()), 256);
  bool identity = xq.type == yq.type;
  for (int b = 0; b < 256 && identity; ++b) identity = (*table)[b] == b;
  return identity;
}

namespace {

class QdqMaxPoolGroup : public sdk::CompiledGroup {
 public:
  QdqMaxPoolGroup(const QdqMaxPoolMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.dq.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 MaxPool " + name_ + ": unexpected group interface");
    identity_ = max_pool_byte_table(m.x, m.y, &table_);
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(in_index_));
    if (!x.present() || x.elem_type() != m_.x.type) fail("X has an unexpected type");
    math::PoolGeometry g;
    try {
      g = math::pool_geometry(m_.params, x.shape());
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    const Shape ys = g.output_shape();
    uint8_t* y = static_cast<uint8_t*>(ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, ys));
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    // The maximum in X's type, into Y's bytes (one byte each), then the table in place.
    if (m_.x.type == EPHOST_ELEMENT_UINT8)
      math::max_pool(static_cast<const uint8_t*>(x.raw()), g, y, nullptr, false, threads);
    else
      math::max_pool(static_cast<const int8_t*>(x.raw()), g, reinterpret_cast<int8_t*>(y), nullptr, false, threads);
    if (!identity_) math::lookup_bytes(table_.data(), y, y, math::numel(ys));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 MaxPool " + name_ + " (" + m_.pool.name() + "): " + what);
  }

  std::string name_;
  QdqMaxPoolMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1;
  std::array<uint8_t, 256> table_{};  // Y's byte by X's byte
  bool identity_ = false;
};

class QdqMaxPoolFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_max_pool"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqMaxPoolMatch m;
    return match_qdq_max_pool(anchor, ok, &m) ? std::vector<sdk::Node>{m.dq, m.pool, m.q} : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqMaxPoolMatch m;
    if (!match_qdq_max_pool(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 MaxPool " + group.name() + ": pattern not found");
    return std::make_unique<QdqMaxPoolGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& qdq_max_pool_fusion() {
  static const QdqMaxPoolFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
