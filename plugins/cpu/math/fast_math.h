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
  // floor without a library call: truncate, then step down for negatives.
  float t = static_cast<float>(static_cast<int32_t>(fx));
  t = t > fx ? t - 1.f : t;
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

inline float fast_sigmoid(float x) { return 1.f / (1.f + fast_exp(-x)); }

}  // namespace ephost::cpu::math
