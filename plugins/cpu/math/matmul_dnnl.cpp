// MatMulRunner and GemmRunner on oneDNN (the build's default; matmul_ref.cpp stands in without it).
#if defined(EPHOST_WITH_DNNL)

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broadcast.h"
#include "dnnl_util.h"
#include "matmul.h"

namespace ephost::cpu::math {

namespace {

using dnnl::memory;

// Primitives kept per runner (see conv_dnnl.cpp).
constexpr size_t kMaxPlans = 64;

memory::dims dims_of(const Shape& s) { return memory::dims(s.begin(), s.end()); }

struct Plan {
  dnnl::matmul prim;
  memory::desc a, b_user, b, y;
  dnnl::reorder b_reorder;
  bool reorder_b = false;
  memory const_b;
  size_t scratch_bytes = 0;
  bool empty_k = false;  // K == 0: the product is all zeros
};

// Constant weights, reordered once per layout that a primitive asks for.
struct WeightCache {
  std::vector<std::pair<memory::desc, memory>> entries;
  memory get(const memory::desc& user_desc, const memory::desc& want, const float* data) {
    for (const auto& [d, m] : entries)
      if (d == want) return m;
    memory user(user_desc, cpu_engine(), const_cast<float*>(data));
    memory mem(want, cpu_engine());
    dnnl::stream s(cpu_engine());
    dnnl::reorder(user, mem).execute(s, user, mem);
    s.wait();
    entries.emplace_back(want, mem);
    return mem;
  }
};

// Builds a matmul primitive (a, b_user, y fully described) and prepares B: constant weights let
// oneDNN choose B's layout (b_any) and are reordered into it once, through the weight cache; a B
// given at run time keeps its layout, with a reorder when the primitive wants another.
void build(Plan& plan, const memory::desc& b_any, const dnnl::primitive_attr& attr, const float* const_b,
           WeightCache& weights) {
  auto desc = dnnl::matmul::desc(plan.a, const_b ? b_any : plan.b_user, plan.y);
  auto pd = dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
  plan.prim = dnnl::matmul(pd);
  plan.b = pd.weights_desc();
  plan.scratch_bytes = pd.scratchpad_desc().get_size();
  plan.reorder_b = plan.b != plan.b_user;
  if (const_b)
    plan.const_b = weights.get(plan.b_user, plan.b, const_b);
  else if (plan.reorder_b)
    plan.b_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan.b_user, cpu_engine(), plan.b));
}

using PlanMap = std::map<std::vector<int64_t>, std::shared_ptr<Plan>>;

// Keeps at most kMaxPlans primitives per runner (shapes seldom vary much).
void remember(PlanMap& plans, const std::vector<int64_t>& key, std::shared_ptr<Plan> plan) {
  if (plans.size() >= kMaxPlans) plans.erase(plans.begin());
  plans.emplace(key, std::move(plan));
}

void execute(const Plan& plan, const float* a, const float* b, float* y, int threads) {
  set_num_threads(threads);
  dnnl::engine& eng = cpu_engine();
  dnnl::stream s(eng);
  memory am(plan.a, eng, const_cast<float*>(a));
  memory ym(plan.y, eng, y);
  memory bm;
  if (plan.const_b) {
    bm = plan.const_b;
  } else {
    bm = memory(plan.b_user, eng, const_cast<float*>(b));
    if (plan.reorder_b) {
      memory tmp(plan.b, eng, thread_buffer(3, plan.b.get_size()));
      plan.b_reorder.execute(s, bm, tmp);
      bm = tmp;
    }
  }
  memory scratch(memory::desc({static_cast<memory::dim>(plan.scratch_bytes)}, memory::data_type::u8,
                              memory::format_tag::a),
                 eng, thread_buffer(2, plan.scratch_bytes));
  plan.prim.execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}});
  s.wait();
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace

struct MatMulRunner::Impl {
  const float* const_b;
  std::mutex mu;
  PlanMap plans;
  WeightCache weights;
};

MatMulRunner::MatMulRunner(const float* constant_b) : impl_(std::make_unique<Impl>()) { impl_->const_b = constant_b; }
MatMulRunner::~MatMulRunner() = default;

namespace {

std::shared_ptr<Plan> matmul_plan(MatMulRunner::Impl& impl, const Shape& a_shape, const Shape& b_shape, int threads);

}  // namespace

void MatMulRunner::prepare(const Shape& a_shape, const Shape& b_shape, int threads) {
  threads = std::max(threads, 1);
  if (numel(matmul_output_shape(a_shape, b_shape)) == 0) return;
  matmul_plan(*impl_, a_shape, b_shape, threads);
}

void MatMulRunner::run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* y,
                       int threads) {
  threads = std::max(threads, 1);
  const Shape out = matmul_output_shape(a_shape, b_shape);
  if (numel(out) == 0) return;
  std::shared_ptr<Plan> plan = matmul_plan(*impl_, a_shape, b_shape, threads);
  if (plan->empty_k) {
    std::fill(y, y + numel(out), 0.f);
    return;
  }
  execute(*plan, a, b, y, threads);
}

namespace {

std::shared_ptr<Plan> matmul_plan(MatMulRunner::Impl& impl, const Shape& a_shape, const Shape& b_shape, int threads) {
  Shape key = a_shape;
  key.push_back(-1);
  key.insert(key.end(), b_shape.begin(), b_shape.end());
  key.push_back(threads);
  std::lock_guard<std::mutex> lock(impl.mu);
  auto it = impl.plans.find(key);
  if (it != impl.plans.end()) return it->second;
  auto plan = std::make_shared<Plan>();

  Shape A = a_shape.size() == 1 ? Shape{1, a_shape[0]} : a_shape;
  Shape B = b_shape.size() == 1 ? Shape{b_shape[0], 1} : b_shape;
  const size_t r = std::max(A.size(), B.size());
  A.insert(A.begin(), r - A.size(), 1);
  B.insert(B.begin(), r - B.size(), 1);
  Shape Y(r);
  for (size_t i = 0; i + 2 < r; ++i) Y[i] = std::max(A[i], B[i]);
  Y[r - 2] = A[r - 2];
  Y[r - 1] = B[r - 1];
  // B without batch dimensions (weights): A's batch folds into its rows, one [M', K] x [K, N]
  // GEMM instead of a batch of thin ones (ViT's [197, 1, 768] x [768, 2304] would otherwise be 197
  // matrix-vector products, each streaming all of B).
  bool b_batched = false;
  for (size_t i = 0; i + 2 < r; ++i) b_batched = b_batched || B[i] != 1;
  if (!b_batched && r > 2 && A.back() > 0) {
    const int64_t rows = numel(A) / A.back();
    A = {rows, A.back()};
    B = {B[r - 2], B[r - 1]};
    Y = {rows, Y[r - 1]};
  }
  if (A.size() > DNNL_MAX_NDIMS) invalid("rank " + std::to_string(r) + " is above oneDNN's limit");
  plan->empty_k = A.back() == 0;
  if (!plan->empty_k) {
    plan->a = plain_desc(A);
    plan->b_user = plain_desc(B);
    plan->y = plain_desc(Y);
    set_num_threads(threads);
    const memory::desc b_any(dims_of(B), memory::data_type::f32, memory::format_tag::any);
    build(*plan, b_any, base_attr(), impl.const_b, impl.weights);
  }
  remember(impl.plans, key, plan);
  return plan;
}

}  // namespace

// ---- Gemm -----------------------------------------------------------------------------------------

struct GemmRunner::Impl {
  GemmParams p;
  const float* const_b;
  std::mutex mu;
  PlanMap plans;
  WeightCache weights;
};

GemmRunner::GemmRunner(const GemmParams& params, const float* constant_b) : impl_(std::make_unique<Impl>()) {
  impl_->p = params;
  impl_->const_b = constant_b;
}
GemmRunner::~GemmRunner() = default;

namespace {

std::shared_ptr<Plan> gemm_plan(GemmRunner::Impl& impl, const Shape& a_shape, const Shape& b_shape, bool use_c,
                                int threads) {
  const GemmParams& p = impl.p;
  const Shape out = gemm_output_shape(p, a_shape, b_shape);
  const int64_t M = out[0], N = out[1], K = p.trans_a ? a_shape[0] : a_shape[1];
  const std::vector<int64_t> key{a_shape[0], a_shape[1], b_shape[0], b_shape[1], use_c ? 1 : 0, threads};
  std::lock_guard<std::mutex> lock(impl.mu);
  auto it = impl.plans.find(key);
  if (it != impl.plans.end()) return it->second;
  auto plan = std::make_shared<Plan>();
  plan->a = strided_desc({M, K}, p.trans_a ? Shape{1, M} : Shape{K, 1});
  plan->b_user = strided_desc({K, N}, p.trans_b ? Shape{1, K} : Shape{N, 1});
  plan->y = plain_desc({M, N});
  dnnl::primitive_attr attr = base_attr();
  dnnl::post_ops ops;
  if (p.alpha != 1.f) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, p.alpha, 0.f);
  if (use_c) ops.append_sum(1.f);
  attr.set_post_ops(ops);
  set_num_threads(threads);
  const memory::desc b_any({K, N}, memory::data_type::f32, memory::format_tag::any);
  build(*plan, b_any, attr, impl.const_b, impl.weights);
  remember(impl.plans, key, plan);
  return plan;
}

}  // namespace

void GemmRunner::prepare(const Shape& a_shape, const Shape& b_shape, bool with_c, int threads) {
  threads = std::max(threads, 1);
  const GemmParams& p = impl_->p;
  const Shape out = gemm_output_shape(p, a_shape, b_shape);
  const int64_t K = p.trans_a ? a_shape[0] : a_shape[1];
  if (out[0] == 0 || out[1] == 0 || K == 0 || p.alpha == 0.f) return;
  gemm_plan(*impl_, a_shape, b_shape, with_c && p.beta != 0.f, threads);
}

void GemmRunner::run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, const float* c,
                     const Shape& c_shape, float* y, int threads) {
  threads = std::max(threads, 1);
  const GemmParams& p = impl_->p;
  const Shape out = gemm_output_shape(p, a_shape, b_shape);
  const int64_t M = out[0], N = out[1], K = p.trans_a ? a_shape[0] : a_shape[1];
  const bool use_c = c != nullptr && p.beta != 0.f;
  if (use_c && !broadcasts_to(c_shape, out))
    invalid("C of shape " + to_string(c_shape) + " does not broadcast to the result " + to_string(out));
  if (M == 0 || N == 0) return;
  // beta * C goes into y first; the product is then accumulated onto it (a sum post-op).
  if (use_c) {
    const float beta = p.beta;
    broadcast_binary(c, c_shape, &beta, Shape{}, y, out, threads, [](float cv, float bv) { return cv * bv; });
  }
  if (K == 0 || p.alpha == 0.f) {
    if (!use_c) std::fill(y, y + M * N, 0.f);
    return;
  }
  execute(*gemm_plan(*impl_, a_shape, b_shape, use_c, threads), a, b, y, threads);
}

}  // namespace ephost::cpu::math

#endif  // EPHOST_WITH_DNNL
