// Branch-free float helpers that the compiler can vectorise (std::exp and std::floor are library
// calls at the baseline ISA, which keeps loops scalar).
#pragma once

#include <cstdint>
#include <cstring>

namespace ephost::cpu::math {

// exp(x) within ~2 ulp over the float range (Cephes' polynomial), saturating at the ends.
inline float fast_exp(float x) {
  x = x > 88.3762626647949f ? 88.3762626647949f : x;
  x = x < -87.3365447504019f ? -87.3365447504019f : x;
  float fx = x * 1.44269504088896341f + 0.5f;
  // floor without a library call: truncate, then step down for negatives. Done on the integer: with
  // SSE4.1/AVX2 enabled GCC turns a float round trip into roundss and no longer vectorises the select.
  int32_t ti = static_cast<int32_t>(fx);
  ti -= static_cast<float>(ti) > fx ? 1 : 0;
  const float t = static_cast<float>(ti);
  x = x - t * 0.693359375f + t * 2.12194440e-4f;
  const float z = x * x;
  float y = 1.9875691500E-4f;
  y = y * x + 1.3981999507E-3f;
  y = y * x + 8.3334519073E-3f;
  y = y * x + 4.1665795894E-2f;
  y = y * x + 1.6666665459E-1f;
  y = y * x + 5.0000001201E-1f;
  y = y * z + x + 1.f;
  const int32_t bits = (static_cast<int32_t>(t) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

// 1 / (1 + e^-x), and 0 below x = -88.38 (where fast_exp(-x) saturates): there 1 / (1 + e^88.38) is a
// subnormal far above the true value, which SiLU's x * sigmoid(x) turns into a visible error
// (silu(-1e30) would be -4e-9, not -0). The true sigmoid there is below the smallest normal float; the
// AVX-512 loop (math/vec.cpp) answers 0 too. The select picks the dividend, not the quotient: with
// `x < -88.38 ? 0 : 1 / (...)` GCC moves the division under a branch, and under target("avx2") the loop
// then stays scalar (six times slower; it was 70% of EfficientNet's time on the AVX2 tier).
inline float fast_sigmoid(float x) {
  const float one_or_zero = x < -88.3762626647949f ? 0.f : 1.f;
  return one_or_zero / (1.f + fast_exp(-x));
}

// tanh(x) within a few ulp (Cephes' tanhf): an odd polynomial below |x| = 0.625, where the exp form
// would cancel, and 1 - 2 / (e^2|x| + 1) above it. Both are computed and one selected, so loops
// over it vectorise.
inline float fast_tanh(float x) {
  const float a = x < 0.f ? -x : x;
  const float z = x * x;
  float p = -5.70498872745E-3f;
  p = p * z + 2.06390887954E-2f;
  p = p * z - 5.37397155531E-2f;
  p = p * z + 1.33314422036E-1f;
  p = p * z - 3.33332819422E-1f;
  const float small = p * z * x + x;
  float large = 1.f - 2.f / (fast_exp(2.f * a) + 1.f);
  large = x < 0.f ? -large : large;
  return a < 0.625f ? small : large;
}

// erf(x) within ~1e-7 relative (float rounding aside): Taylor's series (8 terms) below |x| = 0.5 and
// Numerical Recipes' erfc (a Chebyshev fit, 1.2e-7 relative) above, 1 - erfc. Both are computed and
// one selected, so loops over it vectorise (libm's erff is a scalar call).
inline float fast_erf(float x) {
  const float a = x < 0.f ? -x : x;
  const float z = x * x;
  float p = -1.492565035840625e-05f;
  p = p * z + 1.2055332981789664e-04f;
  p = p * z - 8.548327023450852e-04f;
  p = p * z + 5.223977625442188e-03f;
  p = p * z - 2.6866170645131252e-02f;
  p = p * z + 1.1283791670955126e-01f;
  p = p * z - 3.7612638903183754e-01f;
  p = p * z + 1.1283791670955126f;
  const float small = x * p;
  const float t = 1.f / (1.f + 0.5f * a);
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  const float erfc = t * fast_exp(q - z);
  float large = 1.f - erfc;
  large = x < 0.f ? -large : large;
  return a < 0.5f ? small : large;
}

// GELU with erf: 0.5 x (1 + erf(x / sqrt 2)).
inline float fast_gelu_erf(float x) { return 0.5f * x * (1.f + fast_erf(x * 0.70710678118654752f)); }

// Reductions with eight independent accumulators: without -ffast-math the compiler may not
// reassociate a single running sum or max, which would leave the loop scalar.
inline float max_of(const float* x, int64_t n) {
  float acc[8];
  for (float& a : acc) a = -__builtin_inff();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] = acc[j] < x[i + j] ? x[i + j] : acc[j];
  for (; i < n; ++i) acc[0] = acc[0] < x[i] ? x[i] : acc[0];
  float m = acc[0];
  for (int j = 1; j < 8; ++j) m = m < acc[j] ? acc[j] : m;
  return m;
}

// Float lanes per block of 4096 elements, blocks added in double: fast and accurate for long rows.
inline double sum_of(const float* x, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += 4096) {
    const int64_t e = b + 4096 < n ? b + 4096 : n;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = b;
    for (; i + 8 <= e; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
    for (; i < e; ++i) acc[0] += x[i];
    for (int j = 0; j < 8; ++j) total += acc[j];
  }
  return total;
}

}  // namespace ephost::cpu::math
