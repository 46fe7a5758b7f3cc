// math::narrow_encode_integer_f32 (the vector float -> int4 / uint4 / int2 / uint2 encoder behind Cast and
// QuantizeLinear) against the scalar narrow_encode through double, byte for byte, on every ISA tier:
// NaN, infinities, signed zeros, every tie between two integers in and around each type's range, the
// floats just either side of those ties, huge values and random ones, at lengths that leave vector tails
// and a final partial byte, written at an offset.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ephost/ephost_types.h"
#include "isa_tiers.h"
#include "math/narrow_types.h"

namespace m = ephost::cpu::math;

namespace {

std::vector<float> hard_values() {
  std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          0.f, -0.f, 1e30f, -1e30f, 16777216.f, -16777217.f, std::numeric_limits<float>::denorm_min()};
  for (int k = -20; k <= 20; ++k) {
    const float tie = static_cast<float>(k) + 0.5f;
    v.push_back(tie);
    v.push_back(std::nextafter(tie, 100.f));
    v.push_back(std::nextafter(tie, -100.f));
    v.push_back(static_cast<float>(k));
  }
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> d(-20.f, 20.f);
  for (int i = 0; i < 300; ++i) v.push_back(d(gen));
  return v;
}

}  // namespace

class CpuNarrowIntEncode : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuNarrowIntEncode);

TEST_P(CpuNarrowIntEncode, MatchesTheDoublePathByteForByte) {
  const std::vector<float> all = hard_values();
  for (int32_t type : {EPHOST_ELEMENT_INT4, EPHOST_ELEMENT_UINT4, EPHOST_ELEMENT_INT2, EPHOST_ELEMENT_UINT2}) {
    const int64_t per_byte = m::elements_per_byte(type);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{33}, static_cast<int64_t>(all.size())}) {
      const int64_t begin = 4 * per_byte;  // written at an offset, as the kernels' blocks are
      const std::vector<float> x(all.begin(), all.begin() + n);
      const std::vector<double> xd(x.begin(), x.end());
      const size_t bytes = static_cast<size_t>((begin + n + per_byte - 1) / per_byte);
      std::vector<uint8_t> want(bytes, 0xAA), got(bytes, 0xAA);
      m::narrow_encode(type, xd.data(), n, want.data(), begin, m::NarrowEncoding{});
      m::narrow_encode_integer_f32(type, x.data(), n, got.data(), begin);
      EXPECT_EQ(got, want) << "type " << type << " n " << n;
    }
  }
}
