// The narrow element types of opsets 19 to 25 (plugins/cpu/math/narrow_types.h, ephost_narrow.h):
// every code decodes and encodes back to itself; the rows of Cast's saturate tables (ONNX Cast-19 to
// Cast-25) for each float8 format, float4e2m1's rounding and saturation, float8e8m0's round modes,
// int4/int2 clamping with rounding half to even, and packing with a partly filled last byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../../plugins/cpu/math/narrow_types.h"
#include "ephost/ephost_narrow.h"

namespace m = ephost::cpu::math;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const int32_t kAllNarrow[] = {EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2,
                              EPHOST_ELEMENT_FLOAT8E5M2FNUZ, EPHOST_ELEMENT_UINT4, EPHOST_ELEMENT_INT4,
                              EPHOST_ELEMENT_FLOAT4E2M1, EPHOST_ELEMENT_FLOAT8E8M0, EPHOST_ELEMENT_UINT2,
                              EPHOST_ELEMENT_INT2};

uint8_t enc(int32_t t, double v, bool saturate = true) {
  m::NarrowEncoding how;
  how.saturate = saturate;
  return m::narrow_encode_one(t, v, how);
}

TEST(NarrowTypes, SizesAndNames) {
  EXPECT_EQ(EphostElementSize(EPHOST_ELEMENT_FLOAT8E4M3FN), 1u);
  EXPECT_EQ(EphostElementSize(EPHOST_ELEMENT_FLOAT8E8M0), 1u);
  EXPECT_EQ(EphostElementSize(EPHOST_ELEMENT_INT4), 0u);  // not a whole number of bytes
  EXPECT_EQ(EphostElementBits(EPHOST_ELEMENT_INT4), 4u);
  EXPECT_EQ(EphostElementBits(EPHOST_ELEMENT_UINT2), 2u);
  EXPECT_EQ(EphostElementBits(EPHOST_ELEMENT_FLOAT), 32u);
  EXPECT_EQ(EphostElementBits(27), 0u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_INT4, 5), 3u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_INT2, 5), 2u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_INT2, 8), 2u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_FLOAT8E5M2, 5), 5u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_INT64, 3), 24u);
  EXPECT_EQ(EphostTensorDataSize(EPHOST_ELEMENT_UNDEFINED, 3), 0u);
  EXPECT_STREQ(EphostElementTypeName(EPHOST_ELEMENT_FLOAT4E2M1), "float4e2m1");
  EXPECT_STREQ(EphostElementTypeName(EPHOST_ELEMENT_INT2), "int2");
}

TEST(NarrowTypes, EveryCodeDecodesAndEncodesBackToItself) {
  for (int32_t t : kAllNarrow) {
    SCOPED_TRACE(EphostElementTypeName(t));
    const uint32_t codes = 1u << (EphostElementBits(t));
    for (uint32_t c = 0; c < codes; ++c) {
      const double v = m::narrow_decode_one(t, static_cast<uint8_t>(c));
      EXPECT_TRUE(v == EphostNarrowCodeToDouble(t, c) || (std::isnan(v) && std::isnan(EphostNarrowCodeToDouble(t, c))));
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(m::narrow_decode_one(t, enc(t, v)))) << c;
        continue;
      }
      // An infinity (float8e5m2's) stays one without saturate; saturate makes it the largest value.
      if (!std::isinf(v)) {
        EXPECT_EQ(enc(t, v, true), c) << "code " << c << " value " << v;
      }
      EXPECT_EQ(enc(t, v, false), c) << "code " << c << " value " << v;
    }
  }
}

TEST(NarrowTypes, Float8E4M3FnFollowsTheSaturateTables) {
  const int32_t t = EPHOST_ELEMENT_FLOAT8E4M3FN;
  EXPECT_EQ(m::narrow_decode_one(t, 0x7E), 448.0);
  EXPECT_EQ(enc(t, 0.0), 0x00);
  EXPECT_EQ(enc(t, -0.0), 0x80);
  EXPECT_EQ(enc(t, 464.0), 0x7E);          // a tie between 448 and 480: to the even code
  EXPECT_EQ(enc(t, 465.0, true), 0x7E);    // rounds past 448: the largest value when saturating
  EXPECT_EQ(enc(t, 465.0, false), 0x7F);   // NaN otherwise
  EXPECT_EQ(enc(t, -1e6, false), 0xFF);
  EXPECT_EQ(enc(t, kInf, true), 0x7E);
  EXPECT_EQ(enc(t, -kInf, true), 0xFE);
  EXPECT_EQ(enc(t, kInf, false), 0x7F);
  EXPECT_EQ(enc(t, kNaN), 0x7F);
  EXPECT_EQ(enc(t, std::ldexp(1.0, -9)), 0x01);       // the smallest subnormal
  EXPECT_EQ(enc(t, std::ldexp(1.0, -10)), 0x00);      // half of it: a tie, to zero (even)
  EXPECT_EQ(enc(t, 1.5 * std::ldexp(1.0, -9)), 0x02); // a tie between 1 and 2 steps: to 2
  EXPECT_EQ(enc(t, 1.0 + 1.0 / 16), 0x38);            // a tie between 1 and 1.125: to 1
}

TEST(NarrowTypes, Float8E5M2KeepsInfinitiesWithoutSaturate) {
  const int32_t t = EPHOST_ELEMENT_FLOAT8E5M2;
  EXPECT_EQ(m::narrow_decode_one(t, 0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(m::narrow_decode_one(t, 0x7C)));
  EXPECT_TRUE(std::isnan(m::narrow_decode_one(t, 0x7D)));
  EXPECT_EQ(enc(t, kInf, false), 0x7C);
  EXPECT_EQ(enc(t, -kInf, false), 0xFC);
  EXPECT_EQ(enc(t, kInf, true), 0x7B);
  EXPECT_EQ(enc(t, 61440.0, false), 0x7C);  // the tie between 57344 and 65536 goes to the even 65536: Inf
  EXPECT_EQ(enc(t, 61440.0, true), 0x7B);
  EXPECT_EQ(enc(t, 60000.0, true), 0x7B);
}

TEST(NarrowTypes, FnuzTypesHaveOneNaNAndNoNegativeZero) {
  for (int32_t t : {EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2FNUZ}) {
    SCOPED_TRACE(EphostElementTypeName(t));
    EXPECT_TRUE(std::isnan(m::narrow_decode_one(t, 0x80)));
    EXPECT_EQ(enc(t, -0.0), 0x00);
    EXPECT_EQ(enc(t, -1e-30), 0x00);  // a negative value that rounds to zero: zero, not NaN
    EXPECT_EQ(enc(t, kNaN), 0x80);
    EXPECT_EQ(enc(t, kInf, true), 0x7F);
    EXPECT_EQ(enc(t, -kInf, true), 0xFF);
    EXPECT_EQ(enc(t, kInf, false), 0x80);
    EXPECT_EQ(enc(t, 1e9, false), 0x80);
  }
  EXPECT_EQ(m::narrow_decode_one(EPHOST_ELEMENT_FLOAT8E4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(m::narrow_decode_one(EPHOST_ELEMENT_FLOAT8E5M2FNUZ, 0x7F), 57344.0);
}

TEST(NarrowTypes, Float4E2M1RoundsHalfToEvenAndSaturates) {
  const int32_t t = EPHOST_ELEMENT_FLOAT4E2M1;
  const double values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint8_t c = 0; c < 8; ++c) EXPECT_EQ(m::narrow_decode_one(t, c), values[c]);
  EXPECT_EQ(m::narrow_decode_one(t, 0xF), -6.0);
  EXPECT_EQ(enc(t, 0.25), 0x0);
  EXPECT_EQ(enc(t, 0.75), 0x2);
  EXPECT_EQ(enc(t, 1.25), 0x2);
  EXPECT_EQ(enc(t, 2.5), 0x4);
  EXPECT_EQ(enc(t, 5.0), 0x6);
  EXPECT_EQ(enc(t, 5.01), 0x7);
  EXPECT_EQ(enc(t, 1e9, false), 0x7);  // no NaN and no Inf: always saturates
  EXPECT_EQ(enc(t, -kInf), 0xF);
  EXPECT_EQ(enc(t, kNaN), 0x7);
  EXPECT_EQ(enc(t, -0.0), 0x8);
}

TEST(NarrowTypes, Float8E8M0RoundModes) {
  const int32_t t = EPHOST_ELEMENT_FLOAT8E8M0;
  m::NarrowEncoding how;
  auto code = [&](double v, m::E8m0Rounding r, bool saturate) {
    how.e8m0_rounding = r;
    how.saturate = saturate;
    return m::narrow_encode_one(t, v, how);
  };
  EXPECT_EQ(code(3.0, m::E8m0Rounding::kUp, true), 129);
  EXPECT_EQ(code(3.0, m::E8m0Rounding::kDown, true), 128);
  EXPECT_EQ(code(3.0, m::E8m0Rounding::kNearest, true), 129);  // the tie between 2 and 4 rounds up
  EXPECT_EQ(code(2.9, m::E8m0Rounding::kNearest, true), 128);
  EXPECT_EQ(code(4.0, m::E8m0Rounding::kUp, true), 129);
  EXPECT_EQ(code(0.0, m::E8m0Rounding::kUp, true), 0);
  EXPECT_EQ(code(0.0, m::E8m0Rounding::kUp, false), 0xFF);
  EXPECT_EQ(code(kInf, m::E8m0Rounding::kUp, true), 0xFE);
  EXPECT_EQ(code(3e38, m::E8m0Rounding::kUp, false), 0xFF);
  EXPECT_EQ(code(kNaN, m::E8m0Rounding::kUp, true), 0xFF);
  EXPECT_EQ(m::narrow_decode_one(t, 127), 1.0);
  m::E8m0Rounding r;
  EXPECT_TRUE(m::parse_e8m0_rounding("nearest", &r));
  EXPECT_FALSE(m::parse_e8m0_rounding("even", &r));
}

TEST(NarrowTypes, IntegersClampThenRoundHalfToEven) {
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT4, 7.5), 0x7);
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT4, -8.5), 0x8);
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT4, 2.5), 0x2);
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT4, -1), 0xF);
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT4, 1e12), 0x7);
  EXPECT_EQ(enc(EPHOST_ELEMENT_UINT4, -3), 0x0);
  EXPECT_EQ(enc(EPHOST_ELEMENT_UINT4, 14.5), 14);
  EXPECT_EQ(enc(EPHOST_ELEMENT_INT2, -5), 0x2);
  EXPECT_EQ(enc(EPHOST_ELEMENT_UINT2, 9), 0x3);
  EXPECT_EQ(m::narrow_decode_one(EPHOST_ELEMENT_INT4, 0x8), -8.0);
  EXPECT_EQ(m::narrow_decode_one(EPHOST_ELEMENT_INT2, 0x3), -1.0);
}

TEST(NarrowTypes, PackedTensorsKeepTheFirstElementLowAndZeroTheUnusedBits) {
  const std::vector<double> values = {1, -2, 3, -4, 7};
  std::vector<uint8_t> bytes(3, 0xAA);
  m::narrow_encode(EPHOST_ELEMENT_INT4, values.data(), 5, bytes.data(), 0, m::NarrowEncoding{});
  EXPECT_EQ(bytes[0], 0xE1);
  EXPECT_EQ(bytes[1], 0xC3);
  EXPECT_EQ(bytes[2], 0x07);  // high half of the last byte: zero
  std::vector<double> back(5);
  m::narrow_decode(EPHOST_ELEMENT_INT4, bytes.data(), 0, 5, back.data());
  EXPECT_EQ(back, values);
  m::narrow_decode(EPHOST_ELEMENT_INT4, bytes.data(), 3, 2, back.data());
  EXPECT_EQ(back[0], -4);
  EXPECT_EQ(back[1], 7);
  EXPECT_EQ(EphostNarrowElementToDouble(EPHOST_ELEMENT_INT4, bytes.data(), 1), -2.0);

  const std::vector<double> twos = {1, 0, -1, -2, 1, 1};
  std::vector<uint8_t> packed2(2, 0xFF);
  m::narrow_encode(EPHOST_ELEMENT_INT2, twos.data(), 6, packed2.data(), 0, m::NarrowEncoding{});
  EXPECT_EQ(packed2[0], 0x01 | (0x0 << 2) | (0x3 << 4) | (0x2 << 6));
  EXPECT_EQ(packed2[1], 0x05);
  EXPECT_EQ(EphostNarrowCode(EPHOST_ELEMENT_INT2, packed2.data(), 5), 1u);
}

}  // namespace
