// A QDQ model's product of two quantized activations in int8: attention's Q·Kᵀ and softmax·V, which
// ONNX Runtime runs as QLinearMatMul.
//
//   DequantizeLinear(A_q, sa, za) ─┐
//   DequantizeLinear(B_q, sb, zb) ─┴─ MatMul ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// A_q [..., M, K] and B_q [..., K, N] (batch axes broadcast as MatMul's; a vector operand as MatMul's) are u8 or s8 tensors with
// one scale and zero point each. oneDNN multiplies u8 by s8, so per run A goes to u8 and B to s8 by
// flipping the top bit (q ± 128, the zero point moved with it), and
//
//   sum_k (a - za)(b - zb) = sum_k a·b - zb·rowsum(a) - za·colsum(b) + K·za·zb
//
// is exact in int32; times sa·sb it is the float product the graph computes, up to the rounding of
// the float sum, then QuantizeLinear (math/quantize.h). B is full range, so the pattern is taken only
// where oneDNN accumulates in int32 (VNNI; qdq_common.h); elsewhere the graph runs op by op.
#include <algorithm>
#include <map>
#include <mutex>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/broadcast.h"
#include "math/parallel.h"
#include "math/quantize.h"
#include "qdq_common.h"

#if defined(EPHOST_WITH_DNNL)
#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

namespace {

struct QdqActivationMatMulMatch {
  sdk::Node dq_a, dq_b, mm, q;
  ScalarQuant a, b, y;
  std::vector<sdk::Node> nodes;
};

// The DequantizeLinear of a non-constant tensor with one scale and zero point, read only by `user`.
bool sole_activation_dequantize(const sdk::Value& v, const sdk::Node& user, const Available& ok, sdk::Node* dq,
                                ScalarQuant* quant) {
  *dq = v.producer();
  if (!is_quant_op(*dq, "DequantizeLinear") || !ok(*dq) || !scalar_quant(*dq, quant) || is_constant(dq->input(0)))
    return false;
  const sdk::Node c = sole_consumer(v);
  return c.valid() && c.id() == user.id();
}

bool match_qdq_activation_matmul(const sdk::Node& anchor, const Available& ok, QdqActivationMatMulMatch* m) {
#if !defined(EPHOST_WITH_DNNL)
  return false;
#endif
  if (!is_op(anchor, "MatMul") || !ok(anchor) || !anchor.has_input(0) || !anchor.has_input(1) ||
      !is_float(anchor.output(0)))
    return false;
  // Ranks unknown (-1: after a Reshape to a computed shape, as in BERT) or at least 1.
  if (anchor.input(0).rank() == 0 || anchor.input(1).rank() == 0) return false;
  if (anchor.input(0).name() == anchor.input(1).name()) return false;
  if (!sole_activation_dequantize(anchor.input(0), anchor, ok, &m->dq_a, &m->a)) return false;
  if (!sole_activation_dequantize(anchor.input(1), anchor, ok, &m->dq_b, &m->b)) return false;
  if (!int8_full_range_product_exact()) return false;
  m->mm = anchor;
  const sdk::Node q = sole_consumer(anchor.output(0));
  if (!is_quant_op(q, "QuantizeLinear") || !ok(q) || !scalar_quant(q, &m->y) || q.num_outputs() != 1 ||
      !q.has_output(0))
    return false;
  m->q = q;
  m->nodes = {m->dq_a, m->dq_b, anchor, q};
  return true;
}

#if defined(EPHOST_WITH_DNNL)

using dnnl::memory;

struct Plan {
  dnnl::matmul prim;
  memory::desc a, b, acc;
  size_t scratch = 0;
};

class QdqActivationMatMulGroup : public sdk::CompiledGroup {
 public:
  QdqActivationMatMulGroup(const QdqActivationMatMulMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    a_index_ = group_input(group, m.dq_a.input(0).name());
    b_index_ = group_input(group, m.dq_b.input(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (a_index_ < 0 || b_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 activation matmul " + name_ +
                                            ": unexpected group interface");
    // The zero points after the top-bit flip: A as u8, B as s8.
    za_ = m.a.type == EPHOST_ELEMENT_UINT8 ? m.a.zero_point : m.a.zero_point + 128;
    zb_ = m.b.type == EPHOST_ELEMENT_INT8 ? m.b.zero_point : m.b.zero_point - 128;
    scale_ = m.a.scale * m.b.scale;
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor a = ctx.input(static_cast<size_t>(a_index_));
    const sdk::Tensor b = ctx.input(static_cast<size_t>(b_index_));
    if (!a.present() || a.elem_type() != m_.a.type || !b.present() || b.elem_type() != m_.b.type)
      fail("an operand has an unexpected type");
    Shape as = a.shape(), bs = b.shape();
    if (as.empty() || bs.empty()) fail("MatMul's operands cannot be scalars");
    // A vector operand as MatMul defines it: A [K] is one row, B [K] one column, and the output loses
    // that axis (the memory layout is the same).
    const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
    if (a_vector) as.insert(as.begin(), 1);
    if (b_vector) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    if (bs[bs.size() - 2] != K)
      fail("A " + math::to_string(as) + " and B " + math::to_string(bs) + " do not share the inner dimension");
    if (K > 32768) fail("an inner dimension above 32768 could overflow the int32 sum");
    const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    const Shape batch = math::broadcast_shapes(a_batch, b_batch);
    Shape ys = batch;
    if (!a_vector) ys.push_back(M);
    if (!b_vector) ys.push_back(N);
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, ys);
    const int64_t batches = math::numel(batch);
    if (batches == 0 || M == 0 || N == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);

    // A as u8 and B as s8 (their top bit flipped where the type differs), with row and column sums.
    const int64_t a_size = a.size(), b_size = b.size();
    uint8_t* au = static_cast<uint8_t*>(math::thread_buffer(0, static_cast<size_t>(std::max<int64_t>(a_size, 1))));
    int8_t* bs8 = static_cast<int8_t*>(math::thread_buffer(3, static_cast<size_t>(std::max<int64_t>(b_size, 1))));
    const uint8_t* ar = static_cast<const uint8_t*>(a.raw());
    const uint8_t* br = static_cast<const uint8_t*>(b.raw());
    const uint8_t a_flip = m_.a.type == EPHOST_ELEMENT_UINT8 ? 0 : 0x80;
    const uint8_t b_flip = m_.b.type == EPHOST_ELEMENT_INT8 ? 0 : 0x80;
    for (int64_t i = 0; i < a_size; ++i) au[i] = static_cast<uint8_t>(ar[i] ^ a_flip);
    for (int64_t i = 0; i < b_size; ++i) bs8[i] = static_cast<int8_t>(br[i] ^ b_flip);
    const int64_t a_mats = a_size / std::max<int64_t>(M * K, 1), b_mats = b_size / std::max<int64_t>(K * N, 1);
    // Per calling thread: runs of one session may overlap.
    thread_local std::vector<int32_t> row_sum, col_sum;
    row_sum.assign(static_cast<size_t>(a_mats * M), 0);
    col_sum.assign(static_cast<size_t>(b_mats * N), 0);
    for (int64_t r = 0; r < a_mats * M; ++r) {
      int32_t s = 0;
      for (int64_t k = 0; k < K; ++k) s += au[r * K + k];
      row_sum[static_cast<size_t>(r)] = s;
    }
    for (int64_t mat = 0; mat < b_mats; ++mat)
      for (int64_t k = 0; k < K; ++k) {
        const int8_t* row = bs8 + (mat * K + k) * N;
        int32_t* cs = col_sum.data() + mat * N;
        for (int64_t n = 0; n < N; ++n) cs[n] += row[n];
      }

    int32_t* acc = static_cast<int32_t*>(math::thread_buffer(1, static_cast<size_t>(M * N) * sizeof(int32_t)));
    float* yrow = static_cast<float*>(math::thread_buffer(4, static_cast<size_t>(N) * sizeof(float)));
    const int team = math::threads_for_int8_work(2.0 * static_cast<double>(M) * static_cast<double>(N * K), threads);
    math::set_num_threads(team);
    std::shared_ptr<Plan> plan = plan_for(M, K, N, team);
    dnnl::engine& eng = math::cpu_engine();
    dnnl::stream& s = math::thread_stream();
    const Shape a_strides = math::strides_of(a_batch.empty() ? Shape{1} : a_batch);
    const Shape b_strides = math::strides_of(b_batch.empty() ? Shape{1} : b_batch);
    const size_t rank = batch.size();
    Shape idx(rank, 0);
    const int32_t kzz = static_cast<int32_t>(K) * za_ * zb_;
    for (int64_t bi = 0; bi < batches; ++bi) {
      // The operands' matrices for this output batch index (size-1 axes broadcast).
      int64_t ai = 0, bj = 0;
      for (size_t d = 0; d < rank; ++d) {
        const size_t da = d + a_batch.size() - rank, db = d + b_batch.size() - rank;
        if (d + a_batch.size() >= rank && a_batch[da] != 1) ai += idx[d] * a_strides[da];
        if (d + b_batch.size() >= rank && b_batch[db] != 1) bj += idx[d] * b_strides[db];
      }
      memory am(plan->a, eng, au + ai * M * K);
      memory bm(plan->b, eng, bs8 + bj * K * N);
      memory accm(plan->acc, eng, acc);
      plan->prim.execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, accm},
                             {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}});
      s.wait();
      const int32_t* rs = row_sum.data() + ai * M;
      const int32_t* cs = col_sum.data() + bj * N;
      for (int64_t r = 0; r < M; ++r) {
        const int32_t* accr = acc + r * N;
        const int32_t row_term = zb_ * rs[r] - kzz;
        for (int64_t n = 0; n < N; ++n)
          yrow[n] = static_cast<float>(accr[n] - row_term - za_ * cs[n]) * scale_;
        const int64_t off = (bi * M + r) * N;
        if (m_.y.type == EPHOST_ELEMENT_UINT8)
          math::quantize_linear(yrow, m_.y.scale, static_cast<uint8_t>(m_.y.zero_point), static_cast<uint8_t*>(y) + off, N);
        else
          math::quantize_linear(yrow, m_.y.scale, static_cast<int8_t>(m_.y.zero_point), static_cast<int8_t*>(y) + off, N);
      }
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 activation matmul " + name_ + " (" + m_.mm.name() + "): " + what);
  }

  std::shared_ptr<Plan> plan_for(int64_t M, int64_t K, int64_t N, int threads) {
    const std::vector<int64_t> key{M, K, N, threads};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto plan = std::make_shared<Plan>();
    plan->a = math::plain_desc({M, K}, memory::data_type::u8);
    plan->b = math::plain_desc({K, N}, memory::data_type::s8);
    plan->acc = math::plain_desc({M, N}, memory::data_type::s32);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    math::set_num_threads(threads);
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->a, plan->b, plan->acc), attr, math::cpu_engine());
    plan->prim = dnnl::matmul(pd);
    plan->scratch = pd.scratchpad_desc().get_size();
    if (plans_.size() >= 64) plans_.erase(plans_.begin());
    plans_.emplace(key, plan);
    return plan;
  }

  std::string name_;
  QdqActivationMatMulMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int a_index_ = -1, b_index_ = -1, out_index_ = -1;
  int32_t za_ = 0, zb_ = 0;
  float scale_ = 1.f;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
};

#endif  // EPHOST_WITH_DNNL

class QdqActivationMatMulFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_activation_matmul"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqActivationMatMulMatch m;
    return match_qdq_activation_matmul(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqActivationMatMulMatch m;
    if (!match_qdq_activation_matmul(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED,
                "cpu cannot compile fused int8 activation matmul " + group.name() + ": pattern not found");
#if defined(EPHOST_WITH_DNNL)
    return std::make_unique<QdqActivationMatMulGroup>(m, group, config);
#else
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused int8 activation matmul needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& qdq_activation_matmul_fusion() {
  static const QdqActivationMatMulFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
