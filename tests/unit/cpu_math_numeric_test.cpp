// The CPU plugin's numeric helpers behind DFT/STFT, Einsum, Det and the recurrent ops, against
// naive references (plugins/cpu/math: fft, einsum, strided, batched_gemm, linalg, rnn_activation,
// fast_tanh).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "math/batched_gemm.h"
#include "math/einsum.h"
#include "math/fast_math.h"
#include "math/fft.h"
#include "math/linalg.h"
#include "math/rnn_activation.h"
#include "math/strided.h"

namespace m = ephost::cpu::math;
using m::Complex;
using m::Shape;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<Complex> naive_dft(const std::vector<Complex>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<Complex> y(x.size());
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j)
      y[k] += x[j] * std::polar(1.0, (inverse ? 2.0 : -2.0) * kPi * static_cast<double>((j * k) % n) / n);
  return y;
}

}  // namespace

TEST(CpuFft, MatchesNaiveDftForEveryLength) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  // Powers of two take the radix-2 path, the others Bluestein's.
  for (int64_t n : {1, 2, 3, 5, 8, 10, 12, 16, 17, 64, 97, 100, 128, 243}) {
    std::vector<Complex> x(n);
    for (auto& v : x) v = Complex(dist(gen), dist(gen));
    const m::FftPlan plan(n);
    std::vector<Complex> scratch;
    for (bool inverse : {false, true}) {
      std::vector<Complex> y = x;
      plan.run(y.data(), inverse, scratch);
      const std::vector<Complex> want = naive_dft(x, inverse);
      for (int64_t k = 0; k < n; ++k)
        ASSERT_LT(std::abs(y[k] - want[k]), 1e-9 * n) << "n = " << n << ", inverse = " << inverse << ", k = " << k;
    }
  }
  EXPECT_THROW(m::FftPlan(0), std::invalid_argument);
}

TEST(CpuFft, InverseUndoesForward) {
  const int64_t n = 1000;
  std::vector<Complex> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = Complex(std::sin(0.1 * i), std::cos(0.37 * i));
  const m::FftPlan plan(n);
  std::vector<Complex> y = x, scratch;
  plan.run(y.data(), false, scratch);
  plan.run(y.data(), true, scratch);
  for (int64_t i = 0; i < n; ++i) ASSERT_LT(std::abs(y[i] / static_cast<double>(n) - x[i]), 1e-12);
}

TEST(CpuEinsum, ParsesLabelsEllipsisAndImplicitOutput) {
  // Labels get ids in order of first appearance; the ellipsis axes come first (ids 0..).
  m::EinsumSpec s = m::parse_einsum("ij, jk -> ik", {2, 2});
  EXPECT_EQ(s.labels, 3);
  EXPECT_EQ(s.inputs, (std::vector<std::vector<int>>{{0, 1}, {1, 2}}));
  EXPECT_EQ(s.output, (std::vector<int>{0, 2}));

  // Implicit output: letters used once, alphabetically (upper case first); repeated ones summed.
  s = m::parse_einsum("ba,Ab", {2, 2});
  EXPECT_EQ(s.output, (std::vector<int>{2, 1}));  // A, a
  s = m::parse_einsum("i,i", {1, 1});
  EXPECT_TRUE(s.output.empty());

  // The ellipsis covers the most axes any input leaves it, right-aligned across inputs.
  s = m::parse_einsum("...ij,j...->...i", {4, 2});
  EXPECT_EQ(s.labels, 4);  // two ellipsis axes, i, j
  EXPECT_EQ(s.inputs[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s.inputs[1], (std::vector<int>{3, 1}));  // j, then the last ellipsis axis
  EXPECT_EQ(s.output, (std::vector<int>{0, 1, 2}));
  s = m::parse_einsum("...ii", {3});
  EXPECT_EQ(s.inputs[0], (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(s.output, (std::vector<int>{0}));  // implicit: ellipsis axes; i repeats

  EXPECT_THROW(m::parse_einsum("ij,jk->ik", {2}), std::invalid_argument);     // two terms, one input
  EXPECT_THROW(m::parse_einsum("ij->ik", {2}), std::invalid_argument);        // k in no input
  EXPECT_THROW(m::parse_einsum("ij->ii", {2}), std::invalid_argument);        // repeated output label
  EXPECT_THROW(m::parse_einsum("ijk", {2}), std::invalid_argument);           // rank mismatch
  EXPECT_THROW(m::parse_einsum("i.j", {2}), std::invalid_argument);           // stray character
  EXPECT_THROW(m::parse_einsum("...i...", {3}), std::invalid_argument);       // two ellipses
}

TEST(CpuStridedCopy, TransposesDiagonalsAndBroadcasts) {
  std::vector<int32_t> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i;
  std::vector<int32_t> y(12);
  m::strided_copy(x.data(), {4, 3}, {1, 4}, y.data(), 2);  // transpose of [3, 4]
  EXPECT_EQ(y, (std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  std::vector<int32_t> d(3);
  m::strided_copy(x.data(), {3}, {4 + 1}, d.data(), 1);  // diagonal of [3, 4]
  EXPECT_EQ(d, (std::vector<int32_t>{0, 5, 10}));
  std::vector<int32_t> b(6);
  m::strided_copy(x.data(), {2, 3}, {0, 1}, b.data(), 1);  // row 0 broadcast twice
  EXPECT_EQ(b, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(CpuBatchedGemm, MatchesReference) {
  std::mt19937 gen(3);
  std::uniform_int_distribution<int64_t> dist(-9, 9);
  // M covers whole and partial four-row blocks.
  for (const auto& [B, M, K, N] : std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {2, 5, 3, 4}, {3, 8, 7, 9}, {1, 6, 0, 2}}) {
    std::vector<int64_t> a(B * M * K), b(B * K * N), c(B * M * N, 77);
    for (auto& v : a) v = dist(gen);
    for (auto& v : b) v = dist(gen);
    m::batched_gemm(a.data(), b.data(), c.data(), B, M, K, N, 2);
    for (int64_t t = 0; t < B; ++t)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          int64_t want = 0;
          for (int64_t k = 0; k < K; ++k) want += a[(t * M + i) * K + k] * b[(t * K + k) * N + j];
          ASSERT_EQ(c[(t * M + i) * N + j], want);
        }
  }
}

TEST(CpuDeterminant, MatchesKnownValues) {
  std::vector<double> work;
  const double a2[] = {3, 8, 4, 6};
  EXPECT_NEAR(m::determinant(a2, 2, work), -14.0, 1e-12);
  // Needs a row swap (zero leading pivot), which flips the sign.
  const float a3[] = {0, 2, 1, 1, 1, 1, 2, 3, 5};
  EXPECT_NEAR(m::determinant(a3, 3, work), -5.0, 1e-12);
  const double singular[] = {1, 2, 3, 2, 4, 6, 1, 0, 1};
  EXPECT_EQ(m::determinant(singular, 3, work), 0.0);
  // det(I * 2) of size 6 = 64; an empty matrix has determinant 1.
  std::vector<double> eye(36, 0.0);
  for (int i = 0; i < 6; ++i) eye[i * 7] = 2.0;
  EXPECT_NEAR(m::determinant(eye.data(), 6, work), 64.0, 1e-9);
  EXPECT_EQ(m::determinant(eye.data(), 0, work), 1.0);
}

TEST(CpuRnnActivation, AlphaBetaAreConsumedInOrderByTheFunctionsThatTakeThem) {
  // Tanh takes none, LeakyRelu alpha, ScaledTanh alpha and beta, HardSigmoid falls back to defaults.
  const auto acts = m::rnn_activations({"Tanh", "LeakyRelu", "scaledtanh", "HardSigmoid"}, {0.5f, 2.f}, {3.f});
  ASSERT_EQ(acts.size(), 4u);
  EXPECT_EQ(acts[1].alpha, 0.5f);
  EXPECT_EQ(acts[2].alpha, 2.f);
  EXPECT_EQ(acts[2].beta, 3.f);
  EXPECT_EQ(acts[3].alpha, 0.2f);
  EXPECT_EQ(acts[3].beta, 0.5f);
  float v[3] = {-1.f, 0.25f, 2.f};
  acts[2].apply(v, 3);
  EXPECT_NEAR(v[0], 2.f * std::tanh(-3.f), 1e-6);
  EXPECT_NEAR(v[2], 2.f * std::tanh(6.f), 1e-6);
  float s[2] = {0.f, -100.f};
  m::rnn_activations({"Sigmoid"}, {}, {})[0].apply(s, 2);
  EXPECT_NEAR(s[0], 0.5f, 1e-7);
  EXPECT_NEAR(s[1], 0.f, 1e-7);
  EXPECT_THROW(m::rnn_activations({"Swish"}, {}, {}), std::invalid_argument);
}

TEST(CpuFastMath, TanhIsAccurateAcrossTheRange) {
  // Relative error near 0 (the polynomial) and around the switch to the exp form, saturation far out.
  double worst = 0;
  for (float x = -20.f; x <= 20.f; x += 0.00137f) {
    const double want = std::tanh(static_cast<double>(x));
    const double got = m::fast_tanh(x);
    if (want != 0) worst = std::max(worst, std::abs(got - want) / std::abs(want));
  }
  EXPECT_LT(worst, 1e-6);
  for (float x : {1e-30f, 1e-6f, -3e-4f}) EXPECT_NEAR(m::fast_tanh(x), x, std::abs(x) * 1e-6);
  EXPECT_EQ(m::fast_tanh(0.f), 0.f);
  EXPECT_EQ(m::fast_tanh(100.f), 1.f);
  EXPECT_EQ(m::fast_tanh(-100.f), -1.f);
}
