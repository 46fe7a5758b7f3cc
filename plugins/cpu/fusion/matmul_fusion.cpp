// MatMul / Gemm against constant weights, with what follows it fused into one oneDNN matmul: a
// constant bias Add along the last axis, an activation (including the exporters' decomposed GELU,
// SiLU and HardSwish), a residual Add of a same-shaped tensor, and an activation after that.
//
//   MatMul(A, W) [-> Add(., b)] [-> act] [-> Add(., R)] [-> act]      Gemm(A, W, C) likewise
//
// A's leading axes fold into the GEMM's rows; the weights are reordered once into the layout the
// primitive prefers. A residual whose shape differs at run time (broadcasting) is added after the
// primitive instead.
#include <algorithm>
#include <map>
#include <mutex>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/broadcast.h"
#include "math/matmul.h"
#include "math/parallel.h"

#if defined(EPHOST_WITH_DNNL)
#include "dnnl_post_ops.h"
#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

namespace {

// What the matcher found.
struct MatMulMatch {
  sdk::Node mm;
  bool gemm = false;
  sdk::Node bias_add;       // MatMul's bias Add (invalid when none)
  Activation act, act2;     // before and after the residual
  sdk::Node residual_add;   // invalid when none
  std::string residual;     // the residual input's name
  sdk::Value out;
  std::vector<sdk::Node> nodes;
  int64_t K = 0, N = 0;
};

bool constant_float(const sdk::Value& v) { return is_float(v) && is_constant(v); }

bool match_matmul(const sdk::Node& anchor, const Available& ok, MatMulMatch* m) {
#if !defined(EPHOST_WITH_DNNL)
  return false;
#endif
  const bool gemm = is_op(anchor, "Gemm");
  if (!gemm && !is_op(anchor, "MatMul")) return false;
  if (!ok(anchor) || !anchor.has_input(0) || !anchor.has_input(1) || !is_float(anchor.output(0))) return false;
  const sdk::Value a = anchor.input(0), b = anchor.input(1);
  if (!is_float(a) || is_constant(a) || !constant_float(b)) return false;
  const sdk::Tensor w = constant_of(b);
  if (w.rank() != 2) return false;
  m->mm = anchor;
  m->gemm = gemm;
  if (gemm) {
    if (anchor.attr_int("transA", 0) != 0 || (a.rank() >= 0 && a.rank() != 2)) return false;
    const bool tb = anchor.attr_int("transB", 0) != 0;
    m->K = tb ? w.dim(1) : w.dim(0);
    m->N = tb ? w.dim(0) : w.dim(1);
    if (anchor.has_input(2)) {
      const sdk::Value c = anchor.input(2);
      if (!constant_float(c) || constant_of(c).size() != m->N) return false;
      const std::vector<int64_t> cd = constant_of(c).shape();
      if (!cd.empty() && cd.back() != m->N) return false;  // [N] or [1, N], not [M, 1]
    }
  } else {
    if (a.rank() == 0) return false;  // (-1: unknown, checked at run time)
    m->K = w.dim(0);
    m->N = w.dim(1);
  }
  m->nodes = {anchor};
  sdk::Value cur = anchor.output(0);
  if (!gemm) {
    const sdk::Node add = sole_consumer(cur);
    const int k = is_op(add, "Add") ? other_input(add, cur.name()) : -1;
    if (k >= 0 && ok(add) && constant_float(add.input(static_cast<size_t>(k)))) {
      const sdk::Tensor bias = constant_of(add.input(static_cast<size_t>(k)));
      const std::vector<int64_t> bd = bias.shape();
      if (bias.size() == m->N && !bd.empty() && bd.back() == m->N) {
        m->bias_add = add;
        m->nodes.push_back(add);
        cur = add.output(0);
      }
    }
  }
  sdk::Value next;
  if (match_activation(cur, ok, &m->act, &m->nodes, &next)) cur = next;
  const sdk::Node add = sole_consumer(cur);
  const int k = is_op(add, "Add") ? other_input(add, cur.name()) : -1;
  if (k >= 0 && ok(add) && is_float(add.input(static_cast<size_t>(k))) && !is_constant(add.input(static_cast<size_t>(k)))) {
    m->residual_add = add;
    m->residual = add.input(static_cast<size_t>(k)).name();
    m->nodes.push_back(add);
    cur = add.output(0);
    std::vector<sdk::Node> act2_nodes;
    Activation act2;
    if (match_activation(cur, ok, &act2, &act2_nodes, &next)
#if defined(EPHOST_WITH_DNNL)
        && post_ops_supported({m->act, act2})
#endif
    ) {
      m->act2 = act2;
      m->nodes.insert(m->nodes.end(), act2_nodes.begin(), act2_nodes.end());
      cur = next;
    }
  }
  m->out = cur;
  return m->nodes.size() >= 2;
}

#if defined(EPHOST_WITH_DNNL)

using dnnl::memory;

struct Plan {
  dnnl::matmul prim;
  memory::desc a, y, r;
  memory w;            // weights in the primitive's layout
  size_t scratch = 0;
  bool bf16 = false;   // A is converted by a_bf16 (precision=bf16)
  math::Bf16Operand a_bf16;
};

class MatMulGroup : public sdk::CompiledGroup {
 public:
  MatMulGroup(const MatMulMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), m_(m), default_threads_(config.default_threads), adaptive_(config.adaptive_threads),
        bf16_(config.bf16) {
    a_index_ = group_input(group, m.mm.input(0).name());
    if (!m.residual.empty()) r_index_ = group_input(group, m.residual);
    out_index_ = group_output(group, m.out.name());
    if (a_index_ < 0 || (!m.residual.empty() && r_index_ < 0) || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused matmul " + name_ + ": unexpected group interface");
    const sdk::Tensor w = constant_of(m.mm.input(1));
    w_ = w.data<float>();
    trans_b_ = m.gemm && m.mm.attr_int("transB", 0) != 0;
    if (m.gemm) {
      const float alpha = m.mm.attr_float("alpha", 1.f), beta = m.mm.attr_float("beta", 1.f);
      if (alpha != 1.f) {
        scaled_w_.assign(w.data<float>(), w.data<float>() + w.size());
        for (float& v : scaled_w_) v *= alpha;
        w_ = scaled_w_.data();
      }
      if (m.mm.has_input(2) && beta != 0.f) {
        const sdk::Tensor c = constant_of(m.mm.input(2));
        bias_.assign(c.data<float>(), c.data<float>() + c.size());
        for (float& v : bias_) v *= beta;
      }
    } else if (m.bias_add.valid()) {
      const sdk::Value bv = m.bias_add.input(m.bias_add.input(0).name() == m.mm.output(0).name() ? 1 : 0);
      const sdk::Tensor b = constant_of(bv);
      bias_.assign(b.data<float>(), b.data<float>() + b.size());
    }
    // The output shape's rank: MatMul broadcasts a bias of higher rank ([1, 1, N] against [M, N]).
    {
      dnnl::post_ops ops;
      append_activation(ops, m.act);
      residual_post_op_ = ops.len();
    }
    // A static A: the primitive now, not on the first run.
    const Shape as = static_shape(m.mm.input(0));
    if (!as.empty()) {
      try {
        Shape ys = m.gemm ? Shape{as[0], m.N} : math::matmul_output_shape(as, {m.K, m.N});
        const Shape rs = r_index_ >= 0 ? static_shape(group.input(static_cast<size_t>(r_index_))) : Shape{};
        const int64_t rows = m.N == 0 ? 0 : math::numel(ys) / m.N;
        if (m.K > 0 && rows > 0) pending_prepare_ = {rows, !rs.empty() && rs == ys ? 1 : 0};
      } catch (const std::exception&) {
      }
    }
    if (m.bias_add.valid()) bias_rank_ = static_cast<int64_t>(m.bias_add.input(0).name() == m.mm.output(0).name()
                                                                  ? m.bias_add.input(1).rank()
                                                                  : m.bias_add.input(0).rank());
  }

  // Builds the plan the constructor found static shapes for.
  void prepare_static() {
    if (pending_prepare_.empty()) return;
    try {
      const int team = math::threads_for_work(
          2.0 * static_cast<double>(pending_prepare_[0]) * static_cast<double>(m_.N * m_.K), std::max(1, default_threads_));
      plan_for(pending_prepare_[0], team, pending_prepare_[1] != 0);
    } catch (const std::exception&) {
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor a = ctx.input(static_cast<size_t>(a_index_));
    if (!a.present() || a.elem_type() != EPHOST_ELEMENT_FLOAT) fail("A must be a float tensor");
    const Shape as = a.shape();
    Shape ys;
    try {
      ys = m_.gemm ? math::gemm_output_shape(gemm_params(), as, trans_b_ ? Shape{m_.N, m_.K} : Shape{m_.K, m_.N})
                   : math::matmul_output_shape(as, {m_.K, m_.N});
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    while (static_cast<int64_t>(ys.size()) < bias_rank_) ys.insert(ys.begin(), 1);
    sdk::Tensor r;
    bool fused_residual = false;
    if (r_index_ >= 0) {
      r = ctx.input(static_cast<size_t>(r_index_));
      if (!r.present() || r.elem_type() != EPHOST_ELEMENT_FLOAT) fail("the residual must be a float tensor");
      fused_residual = r.shape() == ys;
    }
    Shape out_shape = ys;
    if (r_index_ >= 0 && !fused_residual) {
      try {
        out_shape = math::broadcast_shapes(ys, r.shape());
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
    }
    float* y = ctx.output<float>(static_cast<size_t>(out_index_), out_shape);
    const int64_t rows = m_.N == 0 ? 0 : math::numel(ys) / m_.N;
    if (math::numel(out_shape) == 0) return;
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    math::set_num_threads(threads);
    float* dst = y;
    std::vector<float> tmp;
    if (r_index_ >= 0 && !fused_residual) {
      tmp.resize(static_cast<size_t>(math::numel(ys)));
      dst = tmp.data();
    }
    if (m_.K == 0) {
      // Nothing to accumulate: the bias and the activations of zero.
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < m_.N; ++j) dst[i * m_.N + j] = bias_.empty() ? 0.f : bias_[j];
      apply_activation(m_.act, dst, rows * m_.N);
      if (fused_residual) {
        const float* rp = r.data<float>();
        for (int64_t i = 0; i < rows * m_.N; ++i) dst[i] += rp[i];
        apply_activation(m_.act2, dst, rows * m_.N);
      }
    } else {
      const int team = math::threads_for_work(2.0 * static_cast<double>(rows) * static_cast<double>(m_.N * m_.K),
                                              threads);
      math::set_num_threads(team);
      std::shared_ptr<Plan> plan = plan_for(rows, team, fused_residual);
      dnnl::engine& eng = math::cpu_engine();
      dnnl::stream& s = math::thread_stream();
      memory am = plan->bf16 ? plan->a_bf16.convert(a.data<float>(), 0, s)
                             : memory(plan->a, eng, const_cast<float*>(a.data<float>()));
      memory ym(plan->y, eng, dst);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, plan->w}, {DNNL_ARG_DST, ym},
                                           {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}};
      if (!bias_.empty()) args.emplace(DNNL_ARG_BIAS, bias_mem_);
      if (fused_residual)
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(residual_post_op_) | DNNL_ARG_SRC_1,
                     memory(plan->r, eng, const_cast<float*>(r.data<float>())));
      plan->prim.execute(s, args);
      s.wait();
    }
    if (r_index_ >= 0 && !fused_residual) {
      const Shape rs = r.shape();
      math::broadcast_binary(dst, ys, r.data<float>(), rs, y, out_shape, threads,
                             [](float p, float q) { return p + q; });
      apply_activation(m_.act2, y, math::numel(out_shape));
    }
    math::note_team_end(threads);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    sdk::fail(EPHOST_INVALID_ARGUMENT, "fused matmul " + name_ + " (" + m_.mm.name() + "): " + what);
  }

  math::GemmParams gemm_params() const {
    math::GemmParams p;
    p.trans_b = trans_b_;
    return p;
  }

  std::shared_ptr<Plan> plan_for(int64_t rows, int threads, bool residual) {
    const std::vector<int64_t> key{rows, threads, residual ? 1 : 0};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto plan = std::make_shared<Plan>();
    const int64_t K = m_.K, N = m_.N;
    plan->a = math::plain_desc({rows, K});
    plan->y = math::plain_desc({rows, N});
    plan->r = plan->y;
    const memory::desc w_user = math::strided_desc({K, N}, trans_b_ ? Shape{1, K} : Shape{N, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;
    append_activation(ops, m_.act);
    if (residual) {
      ops.append_binary(dnnl::algorithm::binary_add, plan->r);
      append_activation(ops, m_.act2);
    }
    attr.set_post_ops(ops);
    const memory::desc bias_md = bias_.empty() ? memory::desc() : math::plain_desc({1, N});
    math::set_num_threads(threads);
    // precision=bf16: A and W in bf16 where oneDNN has a bf16 kernel for them, else f32.
    auto describe = [&](memory::data_type dt) {
      const memory::desc a = dt == memory::data_type::f32 ? plan->a : math::plain_desc({rows, K}, dt);
      const memory::desc w_any({K, N}, dt, memory::format_tag::any);
      auto desc = bias_.empty() ? dnnl::matmul::desc(a, w_any, plan->y) : dnnl::matmul::desc(a, w_any, bias_md, plan->y);
      return dnnl::matmul::primitive_desc(desc, attr, math::cpu_engine());
    };
    dnnl::matmul::primitive_desc pd;
    if (bf16_) {
      try {
        pd = describe(memory::data_type::bf16);
        plan->bf16 = !math::is_reference_impl(pd);
      } catch (const dnnl::error&) {
      }
    }
    if (plan->bf16)
      plan->a_bf16.prepare(plan->a);
    else
      pd = describe(memory::data_type::f32);
    plan->prim = dnnl::matmul(pd);
    plan->scratch = pd.scratchpad_desc().get_size();
    // Weights, reordered once per layout.
    const memory::desc want = pd.weights_desc();
    for (const auto& [d, mem] : weights_)
      if (d == want) plan->w = mem;
    if (!plan->w) {
      memory user(w_user, math::cpu_engine(), const_cast<float*>(w_));
      memory packed(want, math::cpu_engine());
      dnnl::stream& s = math::thread_stream();
      dnnl::reorder(user, packed).execute(s, user, packed);
      s.wait();
      weights_.emplace_back(want, packed);
      plan->w = packed;
    }
    if (!bias_.empty() && !bias_mem_) bias_mem_ = memory(bias_md, math::cpu_engine(), bias_.data());
    if (plans_.size() >= 64) plans_.erase(plans_.begin());
    plans_.emplace(key, plan);
    return plan;
  }

  std::string name_;
  MatMulMatch m_;
  int default_threads_;
  bool adaptive_ = true;
  bool bf16_ = false;
  int a_index_ = -1, r_index_ = -1, out_index_ = -1;
  const float* w_ = nullptr;
  bool trans_b_ = false;
  std::vector<float> scaled_w_, bias_;
  int64_t bias_rank_ = 0;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
  std::vector<std::pair<memory::desc, memory>> weights_;
  memory bias_mem_;
  int residual_post_op_ = 0;
  std::vector<int64_t> pending_prepare_;
};

#endif  // EPHOST_WITH_DNNL

class MatMulFusion : public Fusion {
 public:
  const char* name() const override { return "matmul"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    MatMulMatch m;
    return match_matmul(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    MatMulMatch m;
    if (!match_matmul(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused matmul " + group.name() + ": pattern not found");
#if defined(EPHOST_WITH_DNNL)
    auto g = std::make_unique<MatMulGroup>(m, group, config);
    g->prepare_static();
    return g;
#else
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused matmul needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& matmul_fusion() {
  static const MatMulFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
