// The CPU plugin's integer GEMM (plugins/cpu/math/int_gemm.h, behind the quantized ops) against a
// naive int64 reference on every ISA tier, and its counter-based random numbers (math/random.h, behind the random ops)
// for determinism and distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "math/int_gemm.h"
#include "math/random.h"
#include "isa_tiers.h"

namespace m = ephost::cpu::math;

namespace {

std::vector<int16_t> random_i16(int64_t n, uint32_t seed, int lo = -255, int hi = 255) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int16_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int16_t>(dist(gen));
  return v;
}

}  // namespace

// Sizes straddle the 8-row / 256-column tiles, odd K exercises the unpaired k step, and strides wider
// than the matrices check that lda/ldb/ldy are honoured. The extremes (+-255 everywhere) must not
// overflow anything short of int32.
class CpuIntGemm : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuIntGemm);

TEST_P(CpuIntGemm, MatchesInt64Reference) {
  struct Case {
    int64_t M, N, K;
  };
  const Case cases[] = {{1, 1, 1}, {3, 5, 7}, {8, 256, 2}, {9, 257, 33}, {17, 600, 301}, {64, 31, 1000}, {2, 1, 0}};
  uint32_t seed = 11;
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      const int64_t lda = c.K + 3, ldb = c.N + 5, ldy = c.N + 2;
      const auto a = random_i16(c.M * lda, seed++), b = random_i16(std::max<int64_t>(c.K, 1) * ldb, seed++);
      std::vector<int32_t> y(static_cast<size_t>(c.M * ldy), -7);
      m::gemm_s16_s32(c.M, c.N, c.K, a.data(), lda, b.data(), ldb, y.data(), ldy, threads);
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          int64_t want = 0;
          for (int64_t k = 0; k < c.K; ++k) want += int64_t{a[i * lda + k]} * b[k * ldb + j];
          ASSERT_EQ(y[i * ldy + j], want) << "M=" << c.M << " N=" << c.N << " K=" << c.K << " at " << i << "," << j;
        }
      // Padding columns between rows are not written.
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = c.N; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], -7);
    }
  const int64_t K = 4000;
  const std::vector<int16_t> a(K, -255), b(K, 255);
  int32_t y = 0;
  m::gemm_s16_s32(1, 1, K, a.data(), K, b.data(), 1, &y, 1, 1);
  EXPECT_EQ(y, -255 * 255 * K);
}

// K = 0 is an empty sum: y becomes zeros (honouring ldy) and neither operand is read. fuzz_model found a
// ConvInteger whose kernel has a 0 dimension: the packed AVX2 path offset into its empty panels (UBSan).
TEST_P(CpuIntGemm, EmptySumWritesZeros) {
  for (const int64_t n : {3, 17, 300}) {
    std::vector<int32_t> y(static_cast<size_t>(9 * (n + 2)), 7);
    m::gemm_s16_s32(9, n, 0, nullptr, 0, nullptr, n, y.data(), n + 2, 2);
    for (int64_t r = 0; r < 9; ++r)
      for (int64_t c = 0; c < n + 2; ++c)
        EXPECT_EQ(y[static_cast<size_t>(r * (n + 2) + c)], c < n ? 0 : 7) << "row " << r << " col " << c << " n " << n;
  }
}

TEST(CpuRandom, DeterministicPerKeyAndIndex) {
  EXPECT_EQ(m::uniform01(42, 7), m::uniform01(42, 7));
  EXPECT_NE(m::uniform01(42, 7), m::uniform01(43, 7));
  EXPECT_NE(m::uniform01(42, 7), m::uniform01(42, 8));
  // Equal seeds give equal run keys, run after run; the key changes from run to run.
  m::RandomKeys k1(true, 5), k2(true, 5), k3(true, 6);
  const uint64_t first = k1.next();
  EXPECT_EQ(first, k2.next());
  EXPECT_NE(first, k3.next());
  EXPECT_NE(k1.next(), first);
  k2.next();
  EXPECT_EQ(k1.next(), k2.next());
}

TEST(CpuRandom, UniformAndNormalMoments) {
  const int n = 400000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0;
  double lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    const double u = m::uniform01(12345, i);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    su += u;
    su2 += u * u;
    const double z = m::normal01(777, i);
    sn += z;
    sn2 += z * z;
    sn4 += z * z * z * z;
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(su2 / n - (su / n) * (su / n), 1.0 / 12, 0.002);
  EXPECT_NEAR(sn / n, 0.0, 0.01);
  EXPECT_NEAR(sn2 / n, 1.0, 0.01);
  EXPECT_NEAR(sn4 / n, 3.0, 0.06);  // normal kurtosis
}
