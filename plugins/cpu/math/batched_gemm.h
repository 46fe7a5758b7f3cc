// Batched row-major matrix products c[b] = a[b] (M x K) * b[b] (K x N) for the element types
// oneDNN's CPU matmul does not take (double and the integers); float goes through MatMulRunner.
#pragma once

#include <algorithm>
#include <cstdint>

#include "parallel.h"

namespace ephost::cpu::math {

// Four rows of a at a time share each streamed row of b, and the j loop over contiguous rows of b
// and c vectorises; work is split over (batch, row block).
template <typename T>
void batched_gemm(const T* a, const T* b, T* c, int64_t batch, int64_t M, int64_t K, int64_t N, int threads) {
  constexpr int64_t kRows = 4;
  const int64_t blocks = (M + kRows - 1) / kRows;
  const int64_t work = std::max<int64_t>(kRows * K * N, 1);
  parallel_for(batch * blocks, threads, std::max<int64_t>(1, (int64_t{1} << 16) / work), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bt = t / blocks, i0 = (t % blocks) * kRows, rows = std::min(kRows, M - i0);
      const T* bm = b + bt * K * N;
      const T* ar = a + (bt * M + i0) * K;
      T* cr = c + (bt * M + i0) * N;
      std::fill(cr, cr + rows * N, T(0));
      for (int64_t k = 0; k < K; ++k) {
        const T* brow = bm + k * N;
        if (rows == kRows) {
          const T a0 = ar[k], a1 = ar[K + k], a2 = ar[2 * K + k], a3 = ar[3 * K + k];
          T* c0 = cr;
          T* c1 = cr + N;
          T* c2 = cr + 2 * N;
          T* c3 = cr + 3 * N;
          for (int64_t j = 0; j < N; ++j) {
            const T bv = brow[j];
            c0[j] += a0 * bv;
            c1[j] += a1 * bv;
            c2[j] += a2 * bv;
            c3[j] += a3 * bv;
          }
        } else {
          for (int64_t i = 0; i < rows; ++i) {
            const T av = ar[i * K + k];
            T* ci = cr + i * N;
            for (int64_t j = 0; j < N; ++j) ci[j] += av * brow[j];
          }
        }
      }
    }
  });
}

}  // namespace ephost::cpu::math
