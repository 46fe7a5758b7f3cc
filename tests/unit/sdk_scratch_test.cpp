// The SDK's working-buffer checks (ephost/sdk/scratch.hpp): a kernel's scratch buffer whose size a
// model controls must fail with an error naming it, under the same limit as the host's values, and
// never reach the allocator with a wrapped or absurd size.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "ephost/sdk/scratch.hpp"

using ephost::sdk::Error;
using ephost::sdk::scratch_bytes;

namespace {

// The message of the Error that `fn` throws, with its code.
template <typename Fn>
std::string error_of(Fn fn, EphostStatusCode* code) {
  try {
    fn();
  } catch (const Error& e) {
    *code = e.code();
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(SdkScratch, SizesAreTheProductOfTheFactors) {
  EXPECT_EQ(scratch_bytes({15, 1000}, 2, "the im2col buffer", 0), 30000u);
  EXPECT_EQ(scratch_bytes({}, 4, "a scalar", 0), 4u);
  EXPECT_EQ(scratch_bytes({3, 5}, 4, "a buffer", 60), 60u);  // exactly the limit fits
}

TEST(SdkScratch, AZeroFactorIsEmptyHoweverLargeTheOthers) {
  // ConvInteger with 0 output channels and pads of 2^40: an empty output needs no buffer.
  EXPECT_EQ(scratch_bytes({0, std::numeric_limits<int64_t>::max(), 1 << 20}, 8, "a buffer", 64), 0u);
}

TEST(SdkScratch, BuffersOverTheLimitAreRefusedByName) {
  EphostStatusCode code = EPHOST_OK;
  const std::string m = error_of([] { scratch_bytes({15, 1099511627778}, 2, "ConvInteger's im2col buffer", 4194304); },
                                 &code);
  EXPECT_EQ(code, EPHOST_FAIL);
  EXPECT_NE(m.find("out of memory: ConvInteger's im2col buffer of 32985348833340 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("15 x 1099511627778 values of 2 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("EPHOST_TENSOR_BYTES_LIMIT (4194304 bytes)"), std::string::npos) << m;
  EXPECT_EQ(error_of([] { scratch_bytes({3, 5}, 4, "a buffer", 59); }, &code).rfind("out of memory", 0), 0u);
}

TEST(SdkScratch, ProductsThatOverflowAreRefusedWithoutALimit) {
  EphostStatusCode code = EPHOST_OK;
  const int64_t big = int64_t{1} << 40;
  std::string m = error_of([&] { scratch_bytes({big, big}, 2, "the columns", 0); }, &code);
  EXPECT_EQ(code, EPHOST_FAIL);
  EXPECT_NE(m.find("the columns (1099511627776 x 1099511627776 values of 2 bytes) is larger than any memory"),
            std::string::npos)
      << m;
  // Larger than half the address space is refused too: no allocator can give it.
  m = error_of([] { scratch_bytes({std::numeric_limits<int64_t>::max()}, 2, "the columns", 0); }, &code);
  EXPECT_NE(m.find("larger than any memory"), std::string::npos) << m;
}

TEST(SdkScratch, NegativeSizesAreInvalidArguments) {
  EphostStatusCode code = EPHOST_OK;
  const std::string m = error_of([] { scratch_bytes({4, -1}, 4, "the columns", 0); }, &code);
  EXPECT_EQ(code, EPHOST_INVALID_ARGUMENT);
  EXPECT_NE(m.find("the columns has a negative size (4 x -1 values of 4 bytes)"), std::string::npos) << m;
}

TEST(SdkScratch, ScratchVectorHasTheElementsZeroed) {
  const auto v = ephost::sdk::scratch_vector<int16_t>({3, 4}, "a buffer");
  ASSERT_EQ(v.size(), 12u);
  for (int16_t x : v) EXPECT_EQ(x, 0);
}
