#include "gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "simd.h"

namespace example_ep {
namespace {

// Register tile (kMR x kNR accumulators) and cache blocks: a kKC x kNR strip of b stays in L1, the
// kMC x kKC block of a in L2, the kKC x kNC panel of b in L3.
constexpr int64_t kMR = 6, kNR = 16;
constexpr int64_t kKC = 256, kMC = 96, kNC = 1024;

// The rows [i, i + kMR) of a's block [.., k0 + kc) as kc groups of kMR values (zero rows past M).
void pack_a(const float* a, int64_t lda, int64_t rows, int64_t kc, float* out) {
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = 0; r < kMR; ++r) out[k * kMR + r] = r < rows ? a[r * lda + k] : 0.0f;
}

// The columns [j, j + kNR) of b's panel as kc rows of kNR values (zero columns past N).
void pack_b(const float* b, int64_t ldb, int64_t cols, int64_t kc, float* out) {
  for (int64_t k = 0; k < kc; ++k) {
    const float* row = b + k * ldb;
    float* dst = out + k * kNR;
    if (cols == kNR) {
      std::memcpy(dst, row, kNR * sizeof(float));
    } else {
      for (int64_t j = 0; j < kNR; ++j) dst[j] = j < cols ? row[j] : 0.0f;
    }
  }
}

// acc = packed a strip (kc x kMR) times packed b strip (kc x kNR): 12 vector accumulators (Vec8 keeps
// the tile in registers on every target), each step one broadcast of a and two vectors of b.
inline __attribute__((always_inline)) void kernel(int64_t kc, const float* ap, const float* bp,
                                                  float acc[kMR][kNR]) {
  Vec8 c[kMR][2] = {};
  for (int64_t k = 0; k < kc; ++k) {
    Vec8 b0, b1;
    EXAMPLE_EP_LOAD8(b0, bp + k * kNR);
    EXAMPLE_EP_LOAD8(b1, bp + k * kNR + 8);
    const float* ak = ap + k * kMR;
#pragma GCC unroll 6
    for (int64_t r = 0; r < kMR; ++r) {
      const Vec8 av = Vec8{} + ak[r];
      c[r][0] += av * b0;
      c[r][1] += av * b1;
    }
  }
  std::memcpy(acc, c, sizeof(c));
}

EXAMPLE_EP_MULTIVERSION
void gemm_blocked(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, bool accumulate) {
  // Per-thread packing buffers: concurrent runs never share them, and they are reused across calls.
  thread_local std::vector<float> a_pack, b_pack;
  a_pack.resize(kMC * kKC);
  b_pack.resize(kKC * kNC);
  float acc[kMR][kNR];
  for (int64_t j0 = 0; j0 < N; j0 += kNC) {
    const int64_t nc = std::min(kNC, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      const bool add = accumulate || k0 > 0;  // later k blocks add to what the first wrote
      for (int64_t j = 0; j < nc; j += kNR)
        pack_b(b + k0 * ldb + j0 + j, ldb, std::min(kNR, nc - j), kc, b_pack.data() + j * kc);
      for (int64_t i0 = 0; i0 < M; i0 += kMC) {
        const int64_t mc = std::min(kMC, M - i0);
        for (int64_t i = 0; i < mc; i += kMR)
          pack_a(a + (i0 + i) * lda + k0, lda, std::min(kMR, mc - i), kc, a_pack.data() + i * kc);
        for (int64_t j = 0; j < nc; j += kNR) {
          const int64_t cols = std::min(kNR, nc - j);
          for (int64_t i = 0; i < mc; i += kMR) {
            const int64_t rows = std::min(kMR, mc - i);
            kernel(kc, a_pack.data() + i * kc, b_pack.data() + j * kc, acc);
            float* out = c + (i0 + i) * ldc + j0 + j;
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t q = 0; q < cols; ++q) out[r * ldc + q] = (add ? out[r * ldc + q] : 0.0f) + acc[r][q];
          }
        }
      }
    }
  }
}

}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
          int64_t ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, 0.0f);
    return;
  }
  gemm_blocked(M, N, K, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace example_ep
