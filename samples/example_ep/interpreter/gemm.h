// Single-precision matrix multiplication, the workhorse of Conv and MatMul.
#pragma once

#include <cstdint>

namespace example_ep {

// c[m, n] = sum_k a[m, k] * b[k, n] (+ c[m, n] when `accumulate`), m < M, n < N, k < K. Row-major;
// lda, ldb, ldc are the row strides. Cache-blocked: operands are packed into panels that stay in the
// caches while a register-tiled kernel walks them.
void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
          int64_t ldc, bool accumulate);

}  // namespace example_ep
