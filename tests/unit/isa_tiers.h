// Runs a kernel test once per ISA tier of the CPU plugin (plugins/cpu/math/isa.h): scalar, AVX2 and
// AVX-512, each under a process-wide cap for the test's duration. A tier this CPU lacks is skipped
// with the reason, so an AVX-512 machine tests all three paths and an AVX2 machine the two it has.
//
//   class MyKernel : public IsaTierTest {};
//   TEST_P(MyKernel, Something) { ... }
//   EPHOST_INSTANTIATE_FOR_EVERY_ISA(MyKernel);
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "math/isa.h"

class IsaTierTest : public ::testing::TestWithParam<ephost::cpu::math::Isa> {
 protected:
  void SetUp() override {
    namespace m = ephost::cpu::math;
    if (GetParam() > m::hardware_isa())
      GTEST_SKIP() << "this CPU has no " << m::isa_name(GetParam()) << " (its widest tier is "
                   << m::isa_name(m::hardware_isa()) << ")";
    cap_.emplace(GetParam());
    ASSERT_EQ(m::active_isa(), GetParam());
  }
  void TearDown() override { cap_.reset(); }

 private:
  std::optional<ephost::cpu::math::ScopedIsaCap> cap_;
};

// Every tier, narrowest first.
inline std::vector<ephost::cpu::math::Isa> every_isa_tier() {
  using ephost::cpu::math::Isa;
  return {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
}

// The tiers this CPU can run, narrowest first.
inline std::vector<ephost::cpu::math::Isa> runnable_isa_tiers() {
  std::vector<ephost::cpu::math::Isa> tiers;
  for (auto isa : every_isa_tier())
    if (isa <= ephost::cpu::math::hardware_isa()) tiers.push_back(isa);
  return tiers;
}

#define EPHOST_INSTANTIATE_FOR_EVERY_ISA(Suite)                                                     \
  INSTANTIATE_TEST_SUITE_P(Isa, Suite, ::testing::ValuesIn(every_isa_tier()),                         \
                           [](const ::testing::TestParamInfo<ephost::cpu::math::Isa>& info) {       \
                             return std::string(ephost::cpu::math::isa_name(info.param));           \
                           })
