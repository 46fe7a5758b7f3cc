// The SDK's MAJOR.MINOR.PATCH parser (ephost/sdk/semver.hpp): what plugins' context-compatibility rules
// read from blob headers and EPContext attributes, so it must refuse everything that is not exactly a
// version instead of guessing one.
#include <gtest/gtest.h>

#include "ephost/sdk/semver.hpp"

using ephost::sdk::parse_semver;
using ephost::sdk::Semver;

TEST(SdkSemver, ParsesThreeDecimalParts) {
  const auto v = parse_semver("1.22.333");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 1u);
  EXPECT_EQ(v->minor, 22u);
  EXPECT_EQ(v->patch, 333u);
  EXPECT_EQ(v->to_string(), "1.22.333");
  EXPECT_EQ(parse_semver("0.0.0"), (Semver{0, 0, 0}));
  EXPECT_EQ(parse_semver("1.02.0"), (Semver{1, 2, 0}));
  EXPECT_EQ(parse_semver("999999999.0.1"), (Semver{999999999, 0, 1}));
}

TEST(SdkSemver, RefusesAnythingElse) {
  for (const char* text : {"", "1", "1.2", "1.2.", ".1.2", "1..2", "1.2.3.4", "v1.2.3", "1.2.3-rc1", "1.2.3+build",
                           " 1.2.3", "1.2.3 ", "-1.2.3", "1.2.x", "1000000000.0.0", "1.2.3\n"}) {
    EXPECT_FALSE(parse_semver(text)) << "'" << text << "'";
  }
  EXPECT_FALSE(parse_semver(std::string("1.2.3\0", 6)));
}

TEST(SdkSemver, OrdersByMajorThenMinorThenPatch) {
  EXPECT_LT((Semver{1, 9, 9}), (Semver{2, 0, 0}));
  EXPECT_LT((Semver{1, 2, 9}), (Semver{1, 3, 0}));
  EXPECT_LT((Semver{1, 2, 3}), (Semver{1, 2, 4}));
  EXPECT_GT((Semver{1, 10, 0}), (Semver{1, 9, 0})) << "numbers, not text";
  EXPECT_FALSE((Semver{1, 2, 3}) < (Semver{1, 2, 3}));
  EXPECT_NE((Semver{1, 2, 3}), (Semver{1, 2, 4}));
}
