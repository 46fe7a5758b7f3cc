// MatMulRunner and GemmRunner without oneDNN (EPHOST_BUILD_DNNL_PLUGIN=OFF): plain loops.
#if !defined(EPHOST_WITH_DNNL)

#include <algorithm>
#include <vector>

#include "broadcast.h"
#include "matmul.h"
#include "parallel.h"

namespace ephost::cpu::math {

namespace {

// y[M, N] (+)= a[M, K] b[K, N] with explicit strides for transposed operands.
void gemm_loop(const float* a, int64_t sam, int64_t sak, const float* b, int64_t sbk, int64_t sbn, float* y, int64_t M,
               int64_t N, int64_t K, float alpha, bool accumulate, int threads) {
  parallel_for(M, threads, 1, [&](int64_t i0, int64_t i1) {
    std::vector<float> row(N);
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(row.begin(), row.end(), 0.f);
      for (int64_t k = 0; k < K; ++k) {
        const float av = a[i * sam + k * sak];
        const float* br = b + k * sbk;
        for (int64_t j = 0; j < N; ++j) row[j] += av * br[j * sbn];
      }
      float* yr = y + i * N;
      for (int64_t j = 0; j < N; ++j) yr[j] = (accumulate ? yr[j] : 0.f) + alpha * row[j];
    }
  });
}

}  // namespace

struct MatMulRunner::Impl {
  const float* const_b;
};

MatMulRunner::MatMulRunner(const float* constant_b) : impl_(std::make_unique<Impl>()) { impl_->const_b = constant_b; }
MatMulRunner::~MatMulRunner() = default;

void MatMulRunner::prepare(const Shape&, const Shape&, int) {}
void MatMulRunner::run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* y,
                       int threads) {
  if (impl_->const_b) b = impl_->const_b;
  const Shape out = matmul_output_shape(a_shape, b_shape);
  Shape A = a_shape.size() == 1 ? Shape{1, a_shape[0]} : a_shape;
  Shape B = b_shape.size() == 1 ? Shape{b_shape[0], 1} : b_shape;
  const size_t r = std::max(A.size(), B.size());
  A.insert(A.begin(), r - A.size(), 1);
  B.insert(B.begin(), r - B.size(), 1);
  const int64_t M = A[r - 2], K = A[r - 1], N = B[r - 1];
  const Shape ab(A.begin(), A.end() - 2), bb(B.begin(), B.end() - 2);
  const Shape batch = broadcast_shapes(ab, bb);
  const int64_t nb = numel(batch);
  const Shape as = strides_of(ab), bs = strides_of(bb);
  for (int64_t i = 0; i < nb; ++i) {
    int64_t rem = i, ao = 0, bo = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t c = rem % batch[d];
      rem /= batch[d];
      if (ab[d] != 1) ao += c * as[d];
      if (bb[d] != 1) bo += c * bs[d];
    }
    gemm_loop(a + ao * M * K, K, 1, b + bo * K * N, N, 1, y + i * M * N, M, N, K, 1.f, false, threads);
  }
  (void)out;
}

struct GemmRunner::Impl {
  GemmParams p;
  const float* const_b;
};

GemmRunner::GemmRunner(const GemmParams& params, const float* constant_b) : impl_(std::make_unique<Impl>()) {
  impl_->p = params;
  impl_->const_b = constant_b;
}
GemmRunner::~GemmRunner() = default;

void GemmRunner::prepare(const Shape&, const Shape&, bool, int) {}
void GemmRunner::run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, const float* c,
                     const Shape& c_shape, float* y, int threads) {
  if (impl_->const_b) b = impl_->const_b;
  const GemmParams& p = impl_->p;
  const Shape out = gemm_output_shape(p, a_shape, b_shape);
  const int64_t M = out[0], N = out[1], K = p.trans_a ? a_shape[0] : a_shape[1];
  const bool use_c = c != nullptr && p.beta != 0.f;
  if (use_c) {
    if (!broadcasts_to(c_shape, out))
      invalid("C of shape " + to_string(c_shape) + " does not broadcast to the result " + to_string(out));
    const float beta = p.beta;
    broadcast_binary(c, c_shape, &beta, Shape{}, y, out, threads, [](float cv, float bv) { return cv * bv; });
  }
  gemm_loop(a, p.trans_a ? 1 : K, p.trans_a ? M : 1, b, p.trans_b ? 1 : N, p.trans_b ? K : 1, y, M, N, K, p.alpha, use_c,
            threads);
}

}  // namespace ephost::cpu::math

#endif  // !EPHOST_WITH_DNNL
