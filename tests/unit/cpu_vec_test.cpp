// The CPU plugin's vector loops that approximate (math/vec.h: exp-based sigmoid, SiLU, softmax rows,
// erf, GELU, layer norm) against double-precision references, over every tail length and the
// extremes of the float range, on every ISA tier (tests/unit/isa_tiers.h: scalar, AVX2, AVX-512 where
// the CPU has them), and the tiers against each other: the exact loops bit for bit, the approximating
// ones within their bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "math/vec.h"
#include "isa_tiers.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

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

class CpuVecApprox : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuVecApprox);

TEST_P(CpuVecApprox, SigmoidAndSiluAcrossTheRange) {
  std::vector<float> x = inputs(1000, 1, -30.f, 30.f);
  // -88.37626f is the last input not answered 0: e^-x there is at the top of exp's range (2^128 times 0.7).
  for (float e : {0.f, -0.f, 1e-30f, -1e-30f, 87.f, -87.f, -88.2f, -88.3762626647949f, 88.5f, -88.5f, 100.f, -100.f,
                  1e30f, -1e30f})
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

TEST_P(CpuVecApprox, SoftmaxRowsWithScaleAndMask) {
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

// A masked-out score (an attention mask's -10000, or anything ~87 below the row's maximum) has a
// probability below the smallest normal float: it comes out 0, never subnormal (every later operation
// on a subnormal costs a microcode assist: an int8 BERT spent 40% of its run on them), and the
// caller's floating-point mode is left as it was.
TEST_P(CpuVecApprox, SoftmaxGivesZeroNotSubnormalsAndKeepsTheCallersMode) {
  for (int64_t n : {2, 16, 17, 128}) {
    std::vector<float> x(static_cast<size_t>(n), 0.f);
    for (int64_t i = 1; i < n; ++i) x[static_cast<size_t>(i)] = -80.f - static_cast<float>(i % 40);  // e^-80..e^-119
    std::vector<float> mask(static_cast<size_t>(n), 0.f);
    mask[static_cast<size_t>(n - 1)] = -10000.f;
#if defined(__x86_64__)
    const unsigned mode = _mm_getcsr();
#endif
    std::vector<float> y(static_cast<size_t>(n));
    m::softmax_row_f32(x.data(), 1.f, mask.data(), y.data(), n);
#if defined(__x86_64__)
    EXPECT_EQ(_mm_getcsr(), mode) << "softmax left the caller's MXCSR changed";
#endif
    EXPECT_NEAR(y[0], 1.f, 1e-6f);
    for (int64_t i = 1; i < n; ++i)
      ASSERT_NE(std::fpclassify(y[static_cast<size_t>(i)]), FP_SUBNORMAL) << "n " << n << " at " << i << ": " << y[static_cast<size_t>(i)];
  }
}

TEST_P(CpuVecApprox, ErfGeluAndLayerNorm) {
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

TEST_P(CpuVecApprox, TanhAcrossTheRange) {
  std::vector<float> x = inputs(1000, 8, -12.f, 12.f);
  for (float e : {0.f, -0.f, 0.6249f, 0.625f, -0.625f, 1e-30f, 44.f, -44.f, 100.f, -100.f, 1e30f, -1e30f})
    x.push_back(e);
  std::vector<float> y(x.size());
  m::tanh_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(static_cast<double>(x[i]));
    ASSERT_NEAR(y[i], want, 1e-7 + 1e-6 * std::fabs(want)) << "tanh(" << x[i] << ")";
  }
}

namespace {

// Every vec.h loop over `x` (and `x2` for the binary ops), concatenated in a fixed order.
struct VecOutputs {
  std::vector<float> exact;        // loops whose result is the scalar expression, bit for bit
  std::vector<float> approximate;  // exp/erf/tanh-based loops and the row reductions
  double sum = 0;
};

// The row loops (layer norm, softmax, sum) see only the first `row` elements: an infinity makes a whole row NaN.
VecOutputs run_every_loop(const std::vector<float>& x, const std::vector<float>& x2, int64_t row) {
  const int64_t n = static_cast<int64_t>(x.size());
  VecOutputs out;
  std::vector<float> y(x.size());
  auto keep = [&](std::vector<float>& into) { into.insert(into.end(), y.begin(), y.end()); };
  for (m::BinOp op : {m::BinOp::kAdd, m::BinOp::kSub, m::BinOp::kMul, m::BinOp::kDiv}) {
    m::binary_f32(op, x.data(), true, x2.data(), true, y.data(), n);
    keep(out.exact);
    m::binary_f32(op, x.data(), true, x2.data(), false, y.data(), n);
    keep(out.exact);
    m::binary_f32(op, x.data(), false, x2.data(), true, y.data(), n);
    keep(out.exact);
  }
  m::clip_f32(x.data(), -2.f, 3.f, y.data(), n);
  keep(out.exact);
  m::hard_sigmoid_f32(x.data(), 0.2f, 0.5f, y.data(), n);
  keep(out.exact);
  m::hard_swish_f32(x.data(), y.data(), n);
  keep(out.exact);
  m::relu_f32(x.data(), y.data(), n);
  keep(out.exact);
  m::linear_f32(x.data(), 1.5f, -0.25f, y.data(), n);
  keep(out.exact);
  for (auto fn : {m::sigmoid_f32, m::tanh_f32, m::swish_f32, m::erf_f32, m::gelu_erf_f32}) {
    fn(x.data(), y.data(), n);
    keep(out.approximate);
  }
  y.assign(x.size(), 0.f);
  m::layer_norm_f32(x.data(), y.data(), row, x2.data(), x.data(), 1e-5f);
  keep(out.approximate);
  m::softmax_row_f32(x.data(), 0.5f, x2.data(), y.data(), row);
  keep(out.approximate);
  out.sum = m::sum_f32(x.data(), row);
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

}  // namespace

// The paths a machine can run agree with the scalar one: what an AVX2-only machine computes is what an
// AVX-512 machine capped to AVX2 computes, and both stay where the scalar build is.
TEST(CpuVecTiers, EveryTierAgreesWithTheScalarOne) {
  std::vector<float> x = inputs(1003, 9, -20.f, 20.f), x2 = inputs(1003, 10, 0.25f, 4.f);
  const int64_t row = static_cast<int64_t>(x.size());
  for (float e : {0.f, -0.f, 1e30f, -1e30f, 88.5f, -88.5f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()}) {
    x.push_back(e);
    x2.push_back(1.f);
  }
  VecOutputs scalar;
  {
    m::ScopedIsaCap cap(m::Isa::kScalar);
    scalar = run_every_loop(x, x2, row);
  }
  for (m::Isa isa : runnable_isa_tiers()) {
    m::ScopedIsaCap cap(isa);
    const VecOutputs tier = run_every_loop(x, x2, row);
    ASSERT_EQ(tier.exact.size(), scalar.exact.size());
    for (size_t i = 0; i < tier.exact.size(); ++i)
      ASSERT_TRUE(same_bits(tier.exact[i], scalar.exact[i]))
          << m::isa_name(isa) << ": exact output " << i << " is " << tier.exact[i] << ", scalar " << scalar.exact[i];
    for (size_t i = 0; i < tier.approximate.size(); ++i) {
      const float a = tier.approximate[i], b = scalar.approximate[i];
      if (std::isnan(b) || std::isinf(b)) {
        ASSERT_TRUE(same_bits(a, b)) << m::isa_name(isa) << ": output " << i << " is " << a << ", scalar " << b;
        continue;
      }
      ASSERT_NEAR(a, b, 1e-6 * (1.0 + std::fabs(b))) << m::isa_name(isa) << ": approximate output " << i;
    }
    EXPECT_EQ(tier.sum, scalar.sum) << m::isa_name(isa) << ": the sum's lane structure is fixed";
  }
}

TEST(CpuIsa, NamesCapsAndTheEnvironment) {
  for (m::Isa isa : every_isa_tier()) EXPECT_EQ(m::parse_isa(m::isa_name(isa)), isa);
  EXPECT_FALSE(m::parse_isa("sse2").has_value());
  EXPECT_FALSE(m::parse_isa("AVX2").has_value());
  {
    m::ScopedIsaCap cap(m::Isa::kScalar);
    EXPECT_EQ(m::active_isa(), m::Isa::kScalar);
    // A cap above the hardware is clamped to it: the wider code would fault.
    m::ScopedIsaCap wide(m::Isa::kAvx512);
    EXPECT_EQ(m::active_isa(), m::hardware_isa());
  }
  const char* saved = std::getenv(m::kCpuIsaEnv);
  const std::string restore = saved ? saved : "";
  setenv(m::kCpuIsaEnv, "avx2", 1);
  EXPECT_EQ(m::isa_cap_from_environment(), m::Isa::kAvx2);
  setenv(m::kCpuIsaEnv, "neon", 1);
  EXPECT_FALSE(m::isa_cap_from_environment().has_value());
  if (saved) setenv(m::kCpuIsaEnv, restore.c_str(), 1);
  else unsetenv(m::kCpuIsaEnv);
}
