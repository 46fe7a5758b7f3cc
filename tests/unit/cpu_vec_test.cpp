// The CPU plugin's vector loops that approximate (math/vec.h: exp-based sigmoid, SiLU, softmax rows,
// erf, GELU, layer norm) against double-precision references, over every tail length and the
// extremes of the float range. Whichever ISA tier the machine picks (baseline, AVX2, AVX-512) must
// stay within these bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../../plugins/cpu/math/vec.h"

namespace m = ephost::cpu::math;

namespace {

std::vector<float> inputs(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST(CpuVecApprox, SigmoidAndSiluAcrossTheRange) {
  std::vector<float> x = inputs(1000, 1, -30.f, 30.f);
  for (float e : {0.f, -0.f, 1e-30f, -1e-30f, 87.f, -87.f, 88.5f, -88.5f, 100.f, -100.f, 1e30f, -1e30f})
    x.push_back(e);
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, x.size()}) {
    std::vector<float> s(n), w(n);
    m::sigmoid_f32(x.data(), s.data(), static_cast<int64_t>(n));
    m::swish_f32(x.data(), w.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const double want = sigmoid(x[i]);
      ASSERT_NEAR(s[i], want, 2e-7 + 2e-6 * want) << "sigmoid(" << x[i] << ")";
      const double ws = x[i] * want;
      ASSERT_NEAR(w[i], ws, 1e-30 + 3e-6 * std::fabs(ws)) << "silu(" << x[i] << ")";
    }
  }
}

TEST(CpuVecApprox, SoftmaxRowsWithScaleAndMask) {
  for (int64_t n : {1, 2, 15, 16, 17, 31, 128, 197, 1000}) {
    const std::vector<float> x = inputs(static_cast<size_t>(n), 2, -20.f, 20.f);
    std::vector<float> mask = inputs(static_cast<size_t>(n), 3, -5.f, 0.f);
    if (n > 3) mask[1] = -10000.f;
    for (bool with_mask : {false, true}) {
      std::vector<float> y(static_cast<size_t>(n));
      const float scale = 0.125f;
      m::softmax_row_f32(x.data(), scale, with_mask ? mask.data() : nullptr, y.data(), n);
      double mx = -1e300;
      std::vector<double> z(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        z[i] = static_cast<double>(x[i]) * scale + (with_mask ? mask[i] : 0.0);
        mx = std::max(mx, z[i]);
      }
      double sum = 0;
      for (double& v : z) sum += (v = std::exp(v - mx));
      double total = 0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(y[i], z[i] / sum, 1e-6 * (1.0 + z[i] / sum)) << "n " << n << " at " << i;
        total += y[i];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
    // In place.
    std::vector<float> y = x;
    m::softmax_row_f32(y.data(), 1.f, nullptr, y.data(), n);
    for (float v : y) ASSERT_TRUE(v >= 0.f && v <= 1.f);
  }
}

TEST(CpuVecApprox, ErfGeluAndLayerNorm) {
  std::vector<float> x = inputs(999, 4, -6.f, 6.f);
  for (float e : {0.f, 0.4999f, 0.5f, -0.5f, 10.f, -10.f}) x.push_back(e);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> e(x.size()), g(x.size());
  m::erf_f32(x.data(), e.data(), n);
  m::gelu_erf_f32(x.data(), g.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(e[i], std::erf(static_cast<double>(x[i])), 3e-7) << "erf(" << x[i] << ")";
    const double gw = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
    ASSERT_NEAR(g[i], gw, 1e-6 * (1.0 + std::fabs(gw))) << "gelu(" << x[i] << ")";
  }
  for (int64_t c : {1, 7, 16, 33, 256, 768}) {
    const std::vector<float> r = inputs(static_cast<size_t>(c), 5, -3.f, 5.f);
    const std::vector<float> gamma = inputs(static_cast<size_t>(c), 6, 0.5f, 1.5f), beta = inputs(static_cast<size_t>(c), 7, -1.f, 1.f);
    std::vector<float> y(static_cast<size_t>(c));
    m::layer_norm_f32(r.data(), y.data(), c, gamma.data(), beta.data(), 1e-5f);
    double mean = 0, var = 0;
    for (float v : r) mean += v;
    mean /= static_cast<double>(c);
    for (float v : r) var += (v - mean) * (v - mean);
    var /= static_cast<double>(c);
    for (int64_t i = 0; i < c; ++i) {
      const double want = (r[i] - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i];
      ASSERT_NEAR(y[i], want, 2e-5 * (1.0 + std::fabs(want))) << "c " << c << " at " << i;
    }
  }
}
