// Block-quantized 4-bit weights feeding a product, as today's exporters write LLM weights:
//
//   DequantizeLinear(W_q, scale, [zero_point]) ─ MatMul | Gemm ─ [Add(., bias)] ─ Y
//
// W_q is a constant int4 or uint4 matrix ([K, N]; Gemm with transB: [N, K]); the DequantizeLinear
// (opset 21 on) is blocked along K (block_size, the scale [ceil(K / block), N] or [N, ceil(K / block)]),
// per column (axis N, block_size 0), per row of K, or per tensor, with constant scales (float) and
// zero points. The group runs math::q4_block_gemm: the weights are repacked once at compile and
// dequantized tile by tile in every run, never held as floats (a 4096 x 4096 int4 weight stays 8 MiB,
// not 64). Each dequantized weight is DequantizeLinear's value bit for bit; the sum over K is
// reassociated as any MatMul's is.
//
// The DequantizeLinear must feed only this product (a shared weight runs unfused). MatMul's A may
// have any rank (batch dims are rows); Gemm needs transA = 0, alpha = 1 and a C (times beta) of N
// values or one.
#include <algorithm>
#include <cmath>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/q4_block_gemm.h"
#include "math/shape.h"

namespace ephost::cpu::fusion {

namespace {

struct Q4MatMulMatch {
  sdk::Node dq, mm, bias_add;
  std::vector<sdk::Node> nodes;
  int64_t K = 0, N = 0, block = 0;
  math::Q4WeightSource source;  // pointers into the constants, valid while the graph is
  sdk::Value bias;              // Gemm's C or the Add's constant (invalid: none)
  float bias_scale = 1.f;       // Gemm's beta
};

bool is_4bit(int32_t t) { return t == EPHOST_ELEMENT_INT4 || t == EPHOST_ELEMENT_UINT4; }

// The scale layout of `dq` over a weight of shape `ws` whose K axis is `k_axis`: strides into the
// scale (and zero point) tensor per block of K and per column, and the block length.
bool scale_layout(const sdk::Node& dq, const Shape& ws, int64_t k_axis, const sdk::Tensor& scale, Q4MatMulMatch* m) {
  const int64_t n_axis = 1 - k_axis;
  const int64_t block = dq.attr_int("block_size", 0);
  const int64_t axis = math::normalize_axis(dq.attr_int("axis", 1), 2);
  const Shape ss = scale.shape();
  // Row-major strides of the scale tensor along the weight's two axes.
  auto strides_for = [&](int64_t along_k, int64_t along_n) {
    m->source.scale_k_stride = along_k;
    m->source.scale_n_stride = along_n;
  };
  if (block > 0) {
    if (axis != k_axis || ss.size() != 2) return false;
    const int64_t blocks = (m->K + block - 1) / block;
    if (ss[k_axis] != blocks || ss[n_axis] != m->N) return false;
    m->block = block;
    if (k_axis == 0)
      strides_for(m->N, 1);
    else
      strides_for(1, blocks);
    return true;
  }
  if (block < 0) return false;
  m->block = std::max<int64_t>(m->K, 1);
  if (scale.size() == 1 && ss.size() <= 1) {
    strides_for(0, 0);
    return true;
  }
  if (ss.size() != 1 || ss[0] != ws[axis]) return false;
  if (axis == n_axis) {
    strides_for(0, 1);
  } else {
    m->block = 1;  // one scale per row of K
    strides_for(1, 0);
  }
  return true;
}

// The weight's DequantizeLinear behind input 1 of `anchor`, with K along `k_axis` of the weight.
bool match_weight(const sdk::Node& anchor, int64_t k_axis, const Available& ok, Q4MatMulMatch* m) {
  const sdk::Node dq = anchor.input(1).producer();
  if (!dq.valid() || !is_op(dq, "DequantizeLinear") || dq.opset() < 21 || !ok(dq)) return false;
  if (sole_consumer(dq.output(0)).get() != anchor.get()) return false;
  const int64_t out_type = dq.attr_int("output_dtype", 0);
  if (out_type != 0 && out_type != EPHOST_ELEMENT_FLOAT) return false;
  const sdk::Tensor w = constant_of(dq.input(0));
  if (!w.present() || !is_4bit(w.elem_type()) || w.rank() != 2) return false;
  const sdk::Tensor scale = dq.has_input(1) ? constant_of(dq.input(1)) : sdk::Tensor();
  if (!scale.present() || scale.elem_type() != EPHOST_ELEMENT_FLOAT) return false;
  sdk::Tensor zp;
  if (dq.num_inputs() > 2 && dq.has_input(2)) {
    zp = constant_of(dq.input(2));
    if (!zp.present() || zp.elem_type() != w.elem_type() || zp.shape() != scale.shape()) return false;
  }
  const Shape ws = w.shape();
  m->K = ws[k_axis];
  m->N = ws[1 - k_axis];
  if (!scale_layout(dq, ws, k_axis, scale, m)) return false;
  for (int64_t i = 0; i < scale.size(); ++i)
    if (!std::isfinite(scale.data<float>()[i])) return false;
  m->source.is_signed = w.elem_type() == EPHOST_ELEMENT_INT4;
  m->source.codes = w.raw();
  m->source.k_stride = k_axis == 0 ? m->N : 1;
  m->source.n_stride = k_axis == 0 ? 1 : m->K;
  m->source.scales = scale.data<float>();
  m->source.zero_points = zp.present() ? zp.raw() : nullptr;
  m->dq = dq;
  return true;
}

// A float constant of N values along its last axis (a bias row), or of one value.
bool bias_row(const sdk::Value& v, int64_t N) {
  const sdk::Tensor b = constant_of(v);
  return b.present() && b.elem_type() == EPHOST_ELEMENT_FLOAT &&
         (b.size() == 1 || (b.size() == N && !b.shape().empty() && b.shape().back() == N));
}

bool match_q4_matmul(const sdk::Node& anchor, const Available& ok, Q4MatMulMatch* m) {
  const bool gemm = is_op(anchor, "Gemm");
  if (!gemm && !is_op(anchor, "MatMul")) return false;
  if (!ok(anchor) || anchor.num_inputs() < 2 || !anchor.has_input(0) || !anchor.has_input(1)) return false;
  if (!is_float(anchor.input(0)) || !is_float(anchor.output(0))) return false;
  if (anchor.input(0).rank() == 0) return false;
  int64_t k_axis = 0;
  if (gemm) {
    if (anchor.attr_int("transA", 0) != 0 || anchor.attr_float("alpha", 1.f) != 1.f) return false;
    if (anchor.input(0).rank() != 2) return false;
    k_axis = anchor.attr_int("transB", 0) != 0 ? 1 : 0;
  }
  if (!match_weight(anchor, k_axis, ok, m)) return false;
  m->mm = anchor;
  m->nodes = {m->dq, anchor};
  if (gemm) {
    if (anchor.num_inputs() > 2 && anchor.has_input(2)) {
      if (!bias_row(anchor.input(2), m->N)) return false;
      m->bias = anchor.input(2);
      m->bias_scale = anchor.attr_float("beta", 1.f);
    }
    return true;
  }
  const sdk::Node add = sole_consumer(anchor.output(0));
  const int k = is_op(add, "Add") ? other_input(add, anchor.output(0).name()) : -1;
  if (k >= 0 && ok(add) && is_float(add.output(0)) && bias_row(add.input(static_cast<size_t>(k)), m->N)) {
    m->bias_add = add;
    m->bias = add.input(static_cast<size_t>(k));
    m->nodes.push_back(add);
  }
  return true;
}

class Q4MatMulGroup : public sdk::CompiledGroup {
 public:
  Q4MatMulGroup(const Q4MatMulMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), op_(m.mm.op_type()), node_name_(m.mm.name()), K_(m.K), N_(m.N),
        default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    in_index_ = group_input(group, m.mm.input(0).name());
    const sdk::Value out = m.bias_add.valid() ? m.bias_add.output(0) : m.mm.output(0);
    out_index_ = group_output(group, out.name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int4 matmul " + name_ + ": unexpected group interface");
    weights_ = math::pack_q4_block_weights(m.source, m.K, m.N, m.block);
    if (m.bias.valid()) {
      const sdk::Tensor b = constant_of(m.bias);
      bias_.resize(static_cast<size_t>(m.N));
      for (int64_t n = 0; n < m.N; ++n) bias_[n] = m.bias_scale * b.data<float>()[b.size() == 1 ? 0 : n];
      // The Add broadcasts: a bias of higher rank raises the output's.
      if (m.bias_add.valid()) bias_rank_ = m.bias.rank();
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor a = ctx.input(static_cast<size_t>(in_index_));
    if (!a.present() || a.elem_type() != EPHOST_ELEMENT_FLOAT) fail("A must be a float tensor");
    const Shape as = a.shape();
    if (as.empty() || as.back() != K_) fail("A's last axis must have " + std::to_string(K_) + " elements, found " +
                                            math::to_string(as));
    if (op_ == "Gemm" && as.size() != 2) fail("Gemm's A must be a matrix, found " + math::to_string(as));
    Shape ys = as;
    ys.back() = N_;
    while (static_cast<int64_t>(ys.size()) < bias_rank_) ys.insert(ys.begin(), 1);
    const int64_t rows = math::numel(as, 0, as.size() - 1);
    float* y = ctx.output<float>(static_cast<size_t>(out_index_), ys);
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    math::q4_block_gemm(a.data<float>(), rows, weights_, bias_.empty() ? nullptr : bias_.data(), y, threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int4 matmul " + name_ + " (" + op_ + " '" + node_name_ + "'): " + what);
  }

  std::string name_, op_, node_name_;
  int64_t K_, N_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1;
  int64_t bias_rank_ = 0;
  math::Q4BlockWeights weights_;
  std::vector<float> bias_;
};

class Q4MatMulFusion : public Fusion {
 public:
  const char* name() const override { return "q4_matmul"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    Q4MatMulMatch m;
    return match_q4_matmul(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    Q4MatMulMatch m;
    if (!match_q4_matmul(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int4 matmul " + group.name() + ": pattern not found");
    return std::make_unique<Q4MatMulGroup>(m, group, config);
  }
};

}  // namespace

const Fusion& q4_matmul_fusion() {
  static const Q4MatMulFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
