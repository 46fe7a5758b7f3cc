// math::small_gemm (the per-step product of the recurrent ops) against a naive product, over panel
// widths and tails (N not a multiple of 64 or 16), odd K, and 1 to 4 rows, on every ISA tier.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "math/small_gemm.h"
#include "isa_tiers.h"

namespace m = ephost::cpu::math;

class CpuSmallGemm : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuSmallGemm);

TEST_P(CpuSmallGemm, MatchesNaiveProduct) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t n : {1, 5, 16, 17, 48, 64, 65, 100, 128, 192, 256, 384}) {
    for (int64_t k : {1, 3, 64, 127, 128}) {
      for (int64_t rows : {1, 2, 4}) {
        std::vector<float> r(static_cast<size_t>(n * k)), x(static_cast<size_t>(rows * k)), y(static_cast<size_t>(rows * n));
        for (float& v : r) v = d(gen);
        for (float& v : x) v = d(gen);
        const m::SmallGemmWeights w = m::pack_for_small_gemm(r.data(), n, k);
        m::small_gemm(x.data(), rows, w, y.data());
        for (int64_t b = 0; b < rows; ++b)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t i = 0; i < k; ++i) want += static_cast<double>(x[b * k + i]) * r[j * k + i];
            ASSERT_NEAR(y[b * n + j], want, 1e-5 * (1.0 + std::fabs(want)) * std::sqrt(static_cast<double>(k)))
                << "n " << n << " k " << k << " rows " << rows << " at " << b << "," << j;
          }
      }
    }
  }
}
