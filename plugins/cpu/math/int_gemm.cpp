#include "int_gemm.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EPHOST_INT_GEMM_X86 1
#endif

#include "isa.h"
#include "parallel.h"

namespace ephost::cpu::math {

namespace {

// Multiply-adds below which a thread is not worth waking.
constexpr int64_t kGrainMacs = int64_t{1} << 18;

// ---- portable path ----------------------------------------------------------------------------------
// A tile is kRows rows of y by up to kCols columns: its int32 accumulators (8 KiB) stay in L1 while
// the matching panel of b streams through once for all kRows rows.
constexpr int64_t kRows = 8;
constexpr int64_t kCols = 256;

void tile_portable(int64_t rows, int64_t cols, int64_t K, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                   int32_t* y, int64_t ldy) {
  alignas(64) int32_t acc[kRows][kCols];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) acc[r][j] = 0;
  int64_t k = 0;
  // Two k steps per pass halve the accumulator traffic.
  for (; k + 2 <= K; k += 2) {
    const int16_t* b0 = b + k * ldb;
    const int16_t* b1 = b0 + ldb;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t a0 = a[r * lda + k], a1 = a[r * lda + k + 1];
      if ((a0 | a1) == 0) continue;  // zero rows are common after zero-point subtraction and padding
      int32_t* acc_r = acc[r];
      for (int64_t j = 0; j < cols; ++j)
        acc_r[j] += a0 * static_cast<int32_t>(b0[j]) + a1 * static_cast<int32_t>(b1[j]);
    }
  }
  for (; k < K; ++k) {
    const int16_t* b0 = b + k * ldb;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t a0 = a[r * lda + k];
      if (a0 == 0) continue;
      int32_t* acc_r = acc[r];
      for (int64_t j = 0; j < cols; ++j) acc_r[j] += a0 * static_cast<int32_t>(b0[j]);
    }
  }
  for (int64_t r = 0; r < rows; ++r) std::copy(acc[r], acc[r] + cols, y + r * ldy);
}

void gemm_portable(int64_t M, int64_t N, int64_t K, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                   int32_t* y, int64_t ldy, int threads) {
  const int64_t row_groups = (M + kRows - 1) / kRows, col_blocks = (N + kCols - 1) / kCols;
  const int64_t grain = std::max<int64_t>(1, kGrainMacs / (kRows * kCols * std::max<int64_t>(K, 1)));
  // Tiles of one column block are consecutive, so a thread reuses the same panel of b.
  parallel_for(row_groups * col_blocks, threads, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t cb = t / row_groups, rg = t % row_groups;
      const int64_t m = rg * kRows, n = cb * kCols;
      tile_portable(std::min(kRows, M - m), std::min(kCols, N - n), K, a + m * lda, lda, b + n, ldb, y + m * ldy + n,
                    ldy);
    }
  });
}

// ---- AVX2 path --------------------------------------------------------------------------------------
// pmaddwd multiplies 16-bit pairs and adds each pair into one 32-bit lane: 16 multiply-adds per
// instruction, exact here (|a0 b0 + a1 b1| <= 2 * 255 * 255). Both operands are packed so that a
// lane holds a pair of consecutive k: a as one int32 (a[k], a[k+1]) per row, b as
// [k / 2][n][2] (column n's b[k][n], b[k+1][n] side by side). A 4 x 16 tile of y keeps its sums in
// eight registers over the whole of K.
#ifdef EPHOST_INT_GEMM_X86
constexpr int64_t kTileRows = 4, kTileCols = 16;

__attribute__((target("avx2"))) void tile_avx2(const int32_t* ap, int64_t kp_count, const int16_t* bp, int64_t np,
                                               int32_t* y, int64_t ldy, int64_t rows, int64_t cols) {
  __m256i acc[kTileRows][2];
  for (auto& r : acc) r[0] = r[1] = _mm256_setzero_si256();
  for (int64_t kp = 0; kp < kp_count; ++kp) {
    const int16_t* bk = bp + kp * np * 2;
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bk));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bk + 16));
    for (int64_t r = 0; r < kTileRows; ++r) {
      const __m256i av = _mm256_set1_epi32(ap[r * kp_count + kp]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b0, av));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b1, av));
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* yr = y + r * ldy;
    if (cols == kTileCols) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(yr), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(yr + 8), acc[r][1]);
    } else {
      alignas(32) int32_t tmp[kTileCols];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), acc[r][0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8), acc[r][1]);
      std::copy(tmp, tmp + cols, yr);
    }
  }
}

void gemm_avx2(int64_t M, int64_t N, int64_t K, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
               int32_t* y, int64_t ldy, int threads) {
  // Padded to whole tiles and an even K with zeros, which add nothing.
  const int64_t kp_count = (K + 1) / 2;
  const int64_t row_groups = (M + kTileRows - 1) / kTileRows, col_blocks = (N + kTileCols - 1) / kTileCols;
  const int64_t np = col_blocks * kTileCols;
  std::vector<int32_t> ap(static_cast<size_t>(row_groups * kTileRows * kp_count), 0);
  std::vector<int16_t> bp(static_cast<size_t>(kp_count * np * 2), 0);
  parallel_for(M, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(K, 1)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const uint32_t v = static_cast<uint16_t>(a[m * lda + k]);
        ap[m * kp_count + k / 2] |= static_cast<int32_t>(k % 2 ? v << 16 : v);
      }
  });
  parallel_for(K, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(N, 1)), [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      int16_t* dst = bp.data() + (k / 2) * np * 2 + k % 2;
      const int16_t* src = b + k * ldb;
      for (int64_t n = 0; n < N; ++n) dst[2 * n] = src[n];
    }
  });
  const int64_t grain = std::max<int64_t>(1, kGrainMacs / (kTileRows * kTileCols * std::max<int64_t>(K, 1)));
  // Tiles of one column block are consecutive, so a thread reuses the same panel of b.
  parallel_for(row_groups * col_blocks, threads, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t cb = t / row_groups, rg = t % row_groups;
      const int64_t m = rg * kTileRows, n = cb * kTileCols;
      tile_avx2(ap.data() + m * kp_count, kp_count, bp.data() + n * 2, np, y + m * ldy + n, ldy,
                std::min(kTileRows, M - m), std::min(kTileCols, N - n));
    }
  });
}

#endif

}  // namespace

void gemm_s16_s32(int64_t M, int64_t N, int64_t K, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                  int32_t* y, int64_t ldy, int threads) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    // An empty sum (a ConvInteger whose kernel has a 0 dimension, found by fuzz_model): zeros. The
    // packed kernels would offset into empty panels.
    for (int64_t m = 0; m < M; ++m) std::fill(y + m * ldy, y + m * ldy + N, 0);
    return;
  }
#ifdef EPHOST_INT_GEMM_X86
  if (active_isa() >= Isa::kAvx2) return gemm_avx2(M, N, K, a, lda, b, ldb, y, ldy, threads);
#endif
  gemm_portable(M, N, K, a, lda, b, ldb, y, ldy, threads);
}

}  // namespace ephost::cpu::math
