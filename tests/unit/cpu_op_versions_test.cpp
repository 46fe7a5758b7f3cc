// The CPU plugin's kernel ranges for opsets above 17 (plugins/cpu/op_versions.h).
#include <gtest/gtest.h>

#include "../../plugins/cpu/op_versions.h"
#include "opsets/opsets.h"

using namespace ephost;

// The CPU plugin's table of operator versions (plugins/cpu/op_versions.cpp) agrees with the schemas the
// host registers, and kernel ranges stop where an operator changes more than its types.
TEST(CpuOpVersions, KernelRangesFollowTheRegisteredVersions) {
  for (const auto& [op, version] : opsets::registered_versions())
    EXPECT_EQ(cpu::newest_version_after_17(op, version), version) << op << "-" << version;
  EXPECT_EQ(cpu::last_opset_of_version("Add", 17), cpu::kNewestOpset);        // never changes
  EXPECT_EQ(cpu::last_opset_of_version("Pad", 17), 17);                       // 18 adds axes
  EXPECT_EQ(cpu::last_opset_of_version("Pad", 19), cpu::kNewestOpset);        // 21, 23-25 add types only
  EXPECT_EQ(cpu::last_opset_of_version("GroupNormalization", 18), 20);       // 21: scale per channel
  EXPECT_EQ(cpu::last_opset_of_version("ReduceMax", 18), cpu::kNewestOpset);  // 20 adds bool only
  EXPECT_EQ(cpu::last_opset_of_version("Resize", 17), 17);
  EXPECT_EQ(cpu::last_opset_of_version("Range", 11), 26);                     // 27: a new version
  EXPECT_EQ(cpu::last_opset_of_version("DequantizeLinear", 21), 23);          // 23 adds types; 24 output_dtype
  EXPECT_EQ(cpu::last_opset_of_version("QuantizeLinear", 21), 22);            // 23 adds precision
  EXPECT_EQ(cpu::last_opset_of_version("QuantizeLinear", 23), cpu::kNewestOpset);  // 24, 25 add types only
  EXPECT_EQ(cpu::last_opset_of_version("Attention", 23), 23);
  EXPECT_EQ(cpu::kNewestOpset, 27) << "the CPU plugin covers every opset the host registers";
}
