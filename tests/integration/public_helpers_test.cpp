// The header-only helpers of the public headers (EphostElementSize in ephost_types.h, ephost_half.h):
// they agree with the library, keep their documented rounding, and compile as C.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_half.h"

extern "C" int ephost_test_public_helpers_in_c(void);

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

TEST(PublicHelpers, CompileAndWorkInC) { EXPECT_EQ(ephost_test_public_helpers_in_c(), 1); }

TEST(PublicHelpers, ElementSizeAgreesWithTheLibrary) {
  for (int32_t type = -1; type <= EPHOST_ELEMENT_BFLOAT16 + 2; ++type)
    EXPECT_EQ(EphostElementSize(type), Ephost::api().GetElementSize(static_cast<EphostElementType>(type)))
        << EphostElementTypeName(type);
  EXPECT_EQ(EphostElementSize(EPHOST_ELEMENT_COMPLEX128), 16u);
  EXPECT_EQ(EphostElementSize(EPHOST_ELEMENT_UNDEFINED), 0u);
}

TEST(PublicHelpers, Float16RoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    const float f = EphostFloat16ToFloat(static_cast<uint16_t>(h));
    if (nan) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_TRUE(std::isnan(EphostFloat16ToFloat(EphostFloatToFloat16(f)))) << std::hex << h;
    } else {
      EXPECT_EQ(EphostFloatToFloat16(f), h) << std::hex << h;
    }
  }
}

TEST(PublicHelpers, Float16RoundsToNearestEven) {
  EXPECT_EQ(EphostFloatToFloat16(1.0f + 1.0f / 2048), 0x3c00u);        // tie between 0x3c00 and 0x3c01: even
  EXPECT_EQ(EphostFloatToFloat16(1.0f + 3.0f / 2048), 0x3c02u);        // tie between 0x3c01 and 0x3c02: even
  EXPECT_EQ(EphostFloatToFloat16(65504.0f), 0x7bffu);                  // the largest float16
  EXPECT_EQ(EphostFloatToFloat16(65520.0f), 0x7c00u);                  // rounds beyond it: infinity
  EXPECT_EQ(EphostFloatToFloat16(-1e9f), 0xfc00u);
  EXPECT_EQ(EphostFloatToFloat16(5.9604645e-8f), 0x0001u);             // the smallest subnormal
  EXPECT_EQ(EphostFloatToFloat16(std::ldexp(1.0f, -25)), 0x0000u);    // half of it: ties to even (zero)
  EXPECT_EQ(EphostFloatToFloat16(-std::ldexp(1.0f, -26)), 0x8000u);   // signed zero
  EXPECT_EQ(EphostFloatToFloat16(std::numeric_limits<float>::infinity()), 0x7c00u);
  EXPECT_EQ(EphostFloatToFloat16(std::nanf("")) & 0x7e00u, 0x7e00u);  // a quiet NaN
}

TEST(PublicHelpers, Bfloat16RoundsToNearestEvenOrTruncates) {
  EXPECT_EQ(EphostBfloat16ToFloat(0x3f80u), 1.0f);
  EXPECT_EQ(bits_of(EphostBfloat16ToFloat(0xc0a1u)), 0xc0a10000u);
  const float tie_down = float_of(0x3f808000u), tie_up = float_of(0x3f818000u), above = float_of(0x3f808001u);
  EXPECT_EQ(EphostFloatToBfloat16(tie_down), 0x3f80u);  // ties go to the even pattern
  EXPECT_EQ(EphostFloatToBfloat16(tie_up), 0x3f82u);
  EXPECT_EQ(EphostFloatToBfloat16(above), 0x3f81u);
  EXPECT_EQ(EphostFloatToBfloat16Truncate(tie_up), 0x3f81u);  // ONNX's reference Cast drops the low half
  EXPECT_EQ(EphostFloatToBfloat16Truncate(above), 0x3f80u);
  for (uint16_t (*to_bf16)(float) : {&EphostFloatToBfloat16, &EphostFloatToBfloat16Truncate}) {
    EXPECT_TRUE(std::isnan(EphostBfloat16ToFloat(to_bf16(float_of(0x7f800001u)))))
        << "a NaN whose payload is in the low half stays a NaN";
    EXPECT_EQ(to_bf16(-std::numeric_limits<float>::infinity()), 0xff80u);
  }
}

}  // namespace
