// A QDQ model's quantized MatMul / Gemm run in int8: the pattern ONNX Runtime runs as QLinearMatMul / QGemm.
//
//   DequantizeLinear(A_q, sa, za) ─┐
//   DequantizeLinear(W_q, sw, 0) ──┴─ MatMul | Gemm ─ [Add(., bias)] ─ [Relu] ─ QuantizeLinear(., sy, zy) ─ Y_q
//
// A_q is u8 or s8 with one scale and zero point; W_q is a constant s8 [K, N] (Gemm: [N, K] with transB)
// quantized per tensor or per output column, zero point 0; the bias is a float constant (the host precomputes a
// DequantizeLinear of int32); Y_q is u8 or s8 with one scale and zero point.
//
// A static quantizer that treats the bias Add as an op of its own (ours, and ONNX Runtime's for MatMul + Add)
// quantizes the product before the bias instead:
//
//   MatMul ─ QuantizeLinear(., st, zt) ─ DequantizeLinear(., st', zt') ─ Add(., DequantizeLinear(B_q)) ─ [Relu] ─
//   QuantizeLinear(., sy, zy) ─ Y_q
//
// That Add joins the group too (op by op it is a pass of its own over the output, 4-8 % of ViT's time). The
// product's QuantizeLinear / DequantizeLinear stay where the graph puts them: each row of products is rounded
// to (st, zt) with math/quantize.h, dequantized with (st', zt'), and only then is the bias added. Adding the
// bias in int32 before one rounding, as ONNX Runtime's QGemm does, would skip a rounding the graph defines and
// move outputs by up to a step; kept, the group computes the op-by-op arithmetic, value for value.
//
// oneDNN computes acc = A_q * W_q exactly in int32 (weights packed once); the epilogue then evaluates
// y = (acc - za * colsum(W_q)) * sa * sw[n] + bias[n], Relu, and QuantizeLinear (math/quantize.h: round
// half to even, saturate). That is the QDQ graph's arithmetic with the float rounding of the sum moved
// after it, so results stay within a quantization step of the op-by-op evaluation.
//
// Where oneDNN's int8 product would not be exact (qdq_common.h), the pattern is not taken.
//
// When A's DequantizeLinear feeds other nodes too, it stays outside the group and the group re-quantizes
// its float output with (sa, za): x = (q - za) * sa recovers q exactly (|q - za| <= 255).
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "constant_lookup.h"
#include "ephost/sdk/profile_spans.hpp"
#include "graph_match.h"
#include "qdq_common.h"
#include "math/parallel.h"
#include "math/quantize.h"

#if defined(EPHOST_WITH_DNNL)
#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

namespace {

struct QdqMatMulMatch {
  sdk::Node dq_a, dq_w, mm, bias_add, relu, q;
  bool a_quantized_input = false;  // the group reads A_q (dq_a is in the group)
  ScalarQuant a, y;
  // The product's own QuantizeLinear -> DequantizeLinear before a quantized bias Add (bias_add is then that Add).
  bool requantized_product = false;
  sdk::Node product_q, product_dq;
  ScalarQuant product_quant, product_dequant;
  std::vector<sdk::Node> nodes;
  int64_t K = 0, N = 0;
  bool trans_b = false;
};

// W_q's shape [K, N] (Gemm with transB: [N, K]) and per-column scales.
bool weight_quant(const sdk::Node& dq, bool trans_b, int64_t* K, int64_t* N, std::vector<float>* scales) {
  const sdk::Tensor w = constant_of(dq.input(0));
  if (!w.present() || w.rank() != 2) return false;
  *K = trans_b ? w.dim(1) : w.dim(0);
  *N = trans_b ? w.dim(0) : w.dim(1);
  return channel_weight_quant(dq, 2, trans_b ? 0 : 1, *N, scales);
}

// An Add that *cur alone feeds, its other input a float constant of N values along the last axis (the bias,
// dequantized by the host): appended to m's nodes, *cur moved to its output.
bool match_bias_add(const Available& ok, QdqMatMulMatch* m, sdk::Value* cur) {
  const sdk::Node add = sole_consumer(*cur);
  const int k = is_op(add, "Add") ? other_input(add, cur->name()) : -1;
  if (k < 0 || !ok(add)) return false;
  const sdk::Tensor b = constant_of(add.input(static_cast<size_t>(k)));
  if (!b.present() || b.elem_type() != EPHOST_ELEMENT_FLOAT || b.size() != m->N || b.shape().empty() ||
      b.shape().back() != m->N)
    return false;
  m->bias_add = add;
  m->nodes.push_back(add);
  *cur = add.output(0);
  return true;
}

// The product's QuantizeLinear -> DequantizeLinear, then a bias Add (match_bias_add): the quantized bias of a
// quantizer that treats Add as an op of its own. Leaves m as it was when the chain is not there.
bool match_quantized_bias_add(const Available& ok, QdqMatMulMatch* m, sdk::Value* cur) {
  sdk::Node q, dq;
  ScalarQuant q_quant, dq_quant;
  if (!match_requantize(*cur, ok, &q, &dq, &q_quant, &dq_quant)) return false;
  const size_t before = m->nodes.size();
  m->nodes.push_back(q);
  m->nodes.push_back(dq);
  sdk::Value past = dq.output(0);
  if (!match_bias_add(ok, m, &past)) {
    m->nodes.resize(before);
    return false;
  }
  m->requantized_product = true;
  m->product_q = q;
  m->product_dq = dq;
  m->product_quant = q_quant;
  m->product_dequant = dq_quant;
  *cur = past;
  return true;
}

bool match_qdq_matmul(const sdk::Node& anchor, const Available& ok, QdqMatMulMatch* m) {
#if !defined(EPHOST_WITH_DNNL)
  return false;
#endif
  const bool gemm = is_op(anchor, "Gemm");
  if (!gemm && !is_op(anchor, "MatMul")) return false;
  if (!ok(anchor) || !anchor.has_input(0) || !anchor.has_input(1) || !is_float(anchor.output(0))) return false;
  m->mm = anchor;
  if (!match_dequantized_operands(anchor, &m->dq_a, &m->dq_w, &m->a)) return false;
  if (gemm) {
    if (anchor.attr_int("transA", 0) != 0 || anchor.attr_float("alpha", 1.f) != 1.f) return false;
    if (anchor.input(0).rank() != 2) return false;
    m->trans_b = anchor.attr_int("transB", 0) != 0;
  } else if (anchor.input(0).rank() == 0) {
    return false;  // an unknown rank (-1: after a Reshape to a computed shape, as in BERT) is checked per run
  }
  std::vector<float> scales;
  if (!weight_quant(m->dq_w, m->trans_b, &m->K, &m->N, &scales)) return false;
  if (!int8_product_exact(constant_of(m->dq_w.input(0)))) return false;
  // A's DequantizeLinear joins the group when the product is its only reader.
  m->a_quantized_input = ok(m->dq_a) && sole_consumer(m->dq_a.output(0)).valid();
  m->nodes.clear();
  if (m->a_quantized_input) m->nodes.push_back(m->dq_a);
  m->nodes.push_back(anchor);
  take_weight_dequantize(m->dq_w, ok, &m->nodes);
  sdk::Value cur = anchor.output(0);
  if (gemm && anchor.has_input(2)) {
    const sdk::Tensor c = constant_of(anchor.input(2));
    if (!c.present() || c.elem_type() != EPHOST_ELEMENT_FLOAT || c.size() != m->N || c.shape().back() != m->N ||
        anchor.attr_float("beta", 1.f) != 1.f)
      return false;
  }
  if (!gemm) {
    if (!match_bias_add(ok, m, &cur)) match_quantized_bias_add(ok, m, &cur);
  }
  return match_relu_then_quantize(cur, ok, &m->relu, &m->q, &m->y, &m->nodes);
}

#if defined(EPHOST_WITH_DNNL)

using dnnl::memory;

struct Plan {
  dnnl::matmul prim;
  memory::desc a, acc;
  memory w;
  size_t scratch = 0;
};

class QdqMatMulGroup : public sdk::CompiledGroup {
 public:
  QdqMatMulGroup(const QdqMatMulMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads),
        host_w_(m.dq_w.input(0)) {
    in_index_ = group_input(group, m.a_quantized_input ? m.dq_a.input(0).name() : m.dq_a.output(0).name());
    out_index_ = group_output(group, m.q.output(0).name());
    if (in_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 matmul " + name_ + ": unexpected group interface");
    int64_t K = 0, N = 0;
    std::vector<float> w_scales;
    weight_quant(m.dq_w, m.trans_b, &K, &N, &w_scales);
    const int8_t* w_ = host_w_.data();
    // Per column: sa * sw[n], and za * sum_k W_q[k, n] (the zero point's share of the int32 product).
    scale_.resize(static_cast<size_t>(N));
    offset_.assign(static_cast<size_t>(N), 0);
    for (int64_t n = 0; n < N; ++n) {
      scale_[n] = m.a.scale * w_scales[n];
      int64_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += m.trans_b ? w_[n * K + k] : w_[k * N + n];
      offset_[n] = static_cast<int32_t>(m.a.zero_point * sum);
    }
    bias_.assign(static_cast<size_t>(N), 0.f);
    sdk::Value bias_value;
    const std::string biased = m.requantized_product ? m.product_dq.output(0).name() : m.mm.output(0).name();
    if (m.bias_add.valid()) bias_value = m.bias_add.input(m.bias_add.input(0).name() == biased ? 1 : 0);
    if (m.mm.op_type() == "Gemm" && m.mm.has_input(2)) bias_value = m.mm.input(2);
    if (bias_value.valid()) {
      const sdk::Tensor b = constant_of(bias_value);
      std::copy(b.data<float>(), b.data<float>() + N, bias_.begin());
    }
    if (m.bias_add.valid())
      bias_rank_ = std::max(bias_value.rank(), m.mm.output(0).rank());
    // With the product quantized first, the bias is added after that rounding, not in the product's sum.
    if (m.requantized_product) {
      bias_after_rounding_.swap(bias_);
      bias_.assign(static_cast<size_t>(N), 0.f);
    }
    plan_at_compile(group.input(static_cast<size_t>(in_index_)).dims());
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor a = ctx.input(static_cast<size_t>(in_index_));
    const int32_t a_type = m_.a.type;
    if (!a.present() || a.elem_type() != (m_.a_quantized_input ? a_type : EPHOST_ELEMENT_FLOAT))
      fail("A has an unexpected type");
    const Shape as = a.shape();
    if (as.empty() || as.back() != m_.K) fail("A's last axis must have " + std::to_string(m_.K) + " elements");
    if (m_.mm.op_type() == "Gemm" && as.size() != 2) fail("Gemm's A must be a matrix");
    Shape ys = as;
    ys.back() = m_.N;
    while (static_cast<int64_t>(ys.size()) < bias_rank_) ys.insert(ys.begin(), 1);
    const int64_t rows = math::numel(as) / std::max<int64_t>(m_.K, 1);
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const size_t a_bytes = static_cast<size_t>(rows * m_.K);
    // A as u8/s8: the input itself, or the DequantizeLinear output quantized back (exact).
    const void* a_q = a.raw();
    if (!m_.a_quantized_input) {
      void* buf = math::thread_buffer(0, std::max<size_t>(a_bytes, 1));
      const float* af = a.data<float>();
      math::parallel_for(static_cast<int64_t>(a_bytes), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        if (a_type == EPHOST_ELEMENT_UINT8)
          math::quantize_linear(af + i0, m_.a.scale, static_cast<uint8_t>(m_.a.zero_point), static_cast<uint8_t*>(buf) + i0, i1 - i0);
        else
          math::quantize_linear(af + i0, m_.a.scale, static_cast<int8_t>(m_.a.zero_point), static_cast<int8_t*>(buf) + i0, i1 - i0);
      });
      a_q = buf;
    }
    void* y = ctx.output_raw(static_cast<size_t>(out_index_), m_.y.type, ys);
    if (rows == 0 || m_.N == 0) return;
    int32_t* acc = static_cast<int32_t*>(math::thread_buffer(1, static_cast<size_t>(rows * m_.N) * sizeof(int32_t)));
    if (m_.K == 0) {
      std::fill(acc, acc + rows * m_.N, 0);
    } else {
      const int team = team_for(rows, threads);
      math::set_num_threads(team);
      // With profiling on, a run that creates the primitive (the first of a new row count; with a
      // static shape compile did) reports it as its own span: the tests count these spans.
      sdk::SpanTimer spans(ctx);
      bool planned_now = false;
      std::shared_ptr<Plan> plan = plan_for(rows, team, &planned_now);
      if (planned_now) spans.close("plan for these input shapes", "Plan", {});
      dnnl::engine& eng = math::cpu_engine();
      memory am(plan->a, eng, const_cast<void*>(a_q));
      memory accm(plan->acc, eng, acc);
      dnnl::stream& s = math::thread_stream();
      plan->prim.execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, plan->w}, {DNNL_ARG_DST, accm},
                             {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}});
      s.wait();
    }
    math::parallel_for(rows, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(m_.N, 1)),
                       [&](int64_t r0, int64_t r1) { epilogue(acc, y, r0, r1); });
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused int8 matmul " + name_ + " (" + m_.mm.name() + "): " + what);
  }

  int team_for(int64_t rows, int threads) const {
    return math::threads_for_int8_work(2.0 * static_cast<double>(rows) * static_cast<double>(m_.N * m_.K), threads);
  }

  // With a static shape of A, the primitive is created and the weights packed at session creation,
  // and this thread's buffers of a run are touched (their page faults), so that the first run does no
  // more than any other. Planned for the session's thread count (see qdq_conv.cpp).
  void plan_at_compile(const Shape& a_shape) {
    if (a_shape.empty() || a_shape.back() != m_.K || m_.K == 0 || m_.N == 0) return;
    for (int64_t d : a_shape)
      if (d <= 0) return;
    const int64_t rows = math::numel(a_shape) / m_.K;
    try {
      std::shared_ptr<Plan> plan = plan_for(rows, team_for(rows, std::max(1, default_threads_)));
      {
        // Packed for the shape it runs with: the host's copy can go (plugin ABI 5).
        std::lock_guard<std::mutex> lock(mu_);
        host_w_.done();
      }
      if (!m_.a_quantized_input) math::touch_thread_buffer(0, static_cast<size_t>(rows * m_.K));
      math::touch_thread_buffer(1, static_cast<size_t>(rows * m_.N) * sizeof(int32_t));
      math::touch_thread_buffer(2, plan->scratch);
    } catch (const std::exception& e) {
      sdk::log(EPHOST_LOG_VERBOSE, "fused int8 matmul " + name_ + ": no plan at compile time: " + e.what());
    }
  }

  // Rows [r0, r1): the float value of each output as the graph defines it, then QuantizeLinear.
  void epilogue(const int32_t* acc, void* y, int64_t r0, int64_t r1) const {
    const int64_t N = m_.N;
    float* row = static_cast<float*>(math::thread_buffer(4, static_cast<size_t>(N) * sizeof(float)));
    const bool relu = m_.relu.valid();
    for (int64_t r = r0; r < r1; ++r) {
      const int32_t* ar = acc + r * N;
      if (m_.requantized_product) {
        for (int64_t n = 0; n < N; ++n) row[n] = static_cast<float>(ar[n] - offset_[n]) * scale_[n];
        add_bias_after_rounding(row);
      } else {
        for (int64_t n = 0; n < N; ++n) row[n] = static_cast<float>(ar[n] - offset_[n]) * scale_[n] + bias_[n];
      }
      if (relu)
        for (int64_t n = 0; n < N; ++n) row[n] = row[n] > 0.f ? row[n] : 0.f;
      if (m_.y.type == EPHOST_ELEMENT_UINT8)
        math::quantize_linear(row, m_.y.scale, static_cast<uint8_t>(m_.y.zero_point), static_cast<uint8_t*>(y) + r * N, N);
      else
        math::quantize_linear(row, m_.y.scale, static_cast<int8_t>(m_.y.zero_point), static_cast<int8_t*>(y) + r * N, N);
    }
  }

  // The product row rounded by its QuantizeLinear, dequantized by the next DequantizeLinear, plus the bias:
  // as the three nodes compute it.
  void add_bias_after_rounding(float* row) const {
    const int64_t N = m_.N;
    void* bytes = math::thread_buffer(5, static_cast<size_t>(N));
    quantize_row(row, m_.product_quant, bytes, N);
    dequantize_row(bytes, m_.product_dequant, row, N);
    for (int64_t n = 0; n < N; ++n) row[n] = row[n] + bias_after_rounding_[n];
  }

  // The plan for this row count and team, built (and *built set) when there is none yet.
  std::shared_ptr<Plan> plan_for(int64_t rows, int threads, bool* built = nullptr) {
    const std::vector<int64_t> key{rows, threads};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (built != nullptr) *built = true;
    auto plan = std::make_shared<Plan>();
    const int64_t K = m_.K, N = m_.N;
    const auto a_dt = m_.a.type == EPHOST_ELEMENT_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
    plan->a = math::plain_desc({rows, K}, a_dt);
    plan->acc = math::plain_desc({rows, N}, memory::data_type::s32);
    const memory::desc w_user = math::strided_desc({K, N}, m_.trans_b ? Shape{1, K} : Shape{N, 1}, memory::data_type::s8);
    const memory::desc w_any({K, N}, memory::data_type::s8, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    math::set_num_threads(threads);
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->a, w_any, plan->acc), attr, math::cpu_engine());
    plan->prim = dnnl::matmul(pd);
    plan->scratch = pd.scratchpad_desc().get_size();
    plan->w = weights_.in_layout(pd.weights_desc(), w_user, host_w_);
    if (plans_.size() >= 64) plans_.erase(plans_.begin());
    plans_.emplace(key, plan);
    return plan;
  }

  std::string name_;
  QdqMatMulMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  int in_index_ = -1, out_index_ = -1;
  HostWeights host_w_;  // the constant W_q, packed per layout, given back once the compile packed it
  std::vector<float> scale_, bias_;
  std::vector<float> bias_after_rounding_;  // the quantized bias Add's constant (requantized_product)
  std::vector<int32_t> offset_;
  int64_t bias_rank_ = 0;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
  PackedWeights weights_;
};

#endif  // EPHOST_WITH_DNNL

class QdqMatMulFusion : public Fusion {
 public:
  const char* name() const override { return "qdq_matmul"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    QdqMatMulMatch m;
    return match_qdq_matmul(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    QdqMatMulMatch m;
    if (!match_qdq_matmul(anchor, group_members(anchor, group), &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused int8 matmul " + group.name() + ": pattern not found");
#if defined(EPHOST_WITH_DNNL)
    return std::make_unique<QdqMatMulGroup>(m, group, config);
#else
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused int8 matmul needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& qdq_matmul_fusion() {
  static const QdqMatMulFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
