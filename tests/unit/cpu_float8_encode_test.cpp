// math::float8_encode_f32 (the vector float -> float8 encoder behind Cast) against the scalar narrow_encode
// through double, byte for byte, on every ISA tier, for e4m3fn, e4m3fnuz, e5m2 and e5m2fnuz, saturating
// and not: NaN of both signs, infinities, signed zeros, every code's value, every midpoint between two
// neighbouring codes (the ties) and the floats just either side of each, values past the largest finite
// one, float subnormals, and a sweep over the float bit patterns; at lengths that leave vector tails,
// written at an offset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ephost/ephost_types.h"
#include "isa_tiers.h"
#include "math/float8_encode.h"
#include "math/narrow_types.h"

namespace m = ephost::cpu::math;

namespace {

std::vector<float> hard_values(int32_t type) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), inf,
                          -inf, 0.f, -0.f, std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  std::vector<double> finite;
  for (int code = 0; code < 256; ++code) {
    const double value = m::narrow_decode_one(type, static_cast<uint8_t>(code));
    if (std::isfinite(value) && value >= 0) finite.push_back(value);
  }
  std::sort(finite.begin(), finite.end());
  const double step_past_max = finite.back() - finite[finite.size() - 2];
  finite.push_back(finite.back() + step_past_max);  // the value one quantum past the largest finite one
  for (size_t i = 0; i < finite.size(); ++i) {
    std::vector<double> points = {finite[i]};
    if (i + 1 < finite.size()) points.push_back((finite[i] + finite[i + 1]) / 2);  // a tie
    for (double p : points)
      for (float f : {static_cast<float>(p), std::nextafter(static_cast<float>(p), inf),
                      std::nextafter(static_cast<float>(p), -inf)}) {
        v.push_back(f);
        v.push_back(-f);
      }
  }
  // A sweep over the float bit patterns (NaNs, subnormals and huge values included).
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 0x10003) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    v.push_back(f);
  }
  return v;
}

}  // namespace

class CpuFloat8Encode : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuFloat8Encode);

TEST_P(CpuFloat8Encode, MatchesTheDoublePathByteForByte) {
  for (int32_t type : {EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2,
                       EPHOST_ELEMENT_FLOAT8E5M2FNUZ}) {
    const std::vector<float> all = hard_values(type);
    for (bool saturate : {true, false}) {
      m::NarrowEncoding how;
      how.saturate = saturate;
      for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{33}, static_cast<int64_t>(all.size())}) {
        const int64_t begin = 5;  // written at an offset, as the kernels' blocks are
        const std::vector<double> xd(all.begin(), all.begin() + n);
        std::vector<uint8_t> want(static_cast<size_t>(begin + n), 0xAA), got(want);
        m::narrow_encode(type, xd.data(), n, want.data(), begin, how);
        m::float8_encode_f32(type, all.data(), n, saturate, got.data(), begin);
        ASSERT_EQ(got.size(), want.size());
        size_t mismatches = 0;
        for (size_t i = 0; i < got.size(); ++i)
          if (got[i] != want[i] && mismatches++ < 5)
            ADD_FAILURE() << "type " << type << " saturate " << saturate << " n " << n << ": x = "
                          << (i >= static_cast<size_t>(begin) ? all[i - begin] : 0.f) << " gives 0x" << std::hex
                          << int(got[i]) << ", the double path 0x" << int(want[i]) << std::dec;
        EXPECT_EQ(mismatches, 0u) << "type " << type << " saturate " << saturate << " n " << n;
      }
    }
  }
}
