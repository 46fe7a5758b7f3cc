// The CPU plugin's own packing of 3x3 weights into oneDNN's Winograd layouts
// (plugins/cpu/fusion/winograd_weights.h) against oneDNN's reorder into the same layout, bit for bit,
// for the layouts oneDNN picks for ResNet-like shapes (F(2,3) and F(4,3)), channel counts that need
// padding, and folded per-output-channel factors. oneDNN has Winograd only on AVX-512: elsewhere the
// tests skip.
#include <gtest/gtest.h>

#if defined(EPHOST_WITH_DNNL)

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "../../plugins/cpu/fusion/winograd_weights.h"

namespace f = ephost::cpu::fusion;
namespace m = ephost::cpu::math;
using dnnl::memory;

namespace {

// The weights layout oneDNN's Winograd convolution wants for this shape (NHWC source, as the
// convolutional regions ask), or an empty desc where it has no Winograd kernel.
memory::desc winograd_weights_desc(int64_t oc, int64_t ic, int64_t hw) {
  try {
    const memory::desc src({1, ic, hw, hw}, memory::data_type::f32, memory::format_tag::any);
    const memory::desc dst({1, oc, hw, hw}, memory::data_type::f32, memory::format_tag::any);
    const memory::desc w({oc, ic, 3, 3}, memory::data_type::f32, memory::format_tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                         src, w, dst, {1, 1}, {0, 0}, {1, 1}, {1, 1});
    return dnnl::convolution_forward::primitive_desc(desc, m::cpu_engine()).weights_desc();
  } catch (const dnnl::error&) {
    return memory::desc();
  }
}

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

bool same_bytes(const m::WeightsMemory& a, const m::WeightsMemory& b, size_t bytes) {
  return std::memcmp(a.memory.get_data_handle(), b.memory.get_data_handle(), bytes) == 0;
}

struct Case {
  int64_t oc, ic, hw;
};

TEST(CpuWinogradWeights, EqualsOneDnnReorderBitForBit) {
  std::set<int> formats;
  f::PackBuffers buffers;
  for (const Case& c : {Case{64, 64, 56}, Case{128, 128, 28}, Case{256, 256, 14},
                        Case{48, 40, 28}, Case{40, 24, 14}, Case{96, 64, 56}}) {
    const memory::desc want = winograd_weights_desc(c.oc, c.ic, c.hw);
    if (want.data.ndims == 0 || !f::is_winograd_layout(want)) continue;
    formats.insert(want.data.format_desc.wino_desc.wino_format);
    const std::vector<float> w = random_values(static_cast<size_t>(c.oc * c.ic * 9), 7u);
    const m::WeightsMemory ours = f::pack_winograd_weights(w.data(), nullptr, c.oc, c.ic, want, buffers);
    const m::WeightsMemory ref = f::pack_winograd_weights_dnnl(w.data(), c.oc, c.ic, want);
    EXPECT_TRUE(same_bytes(ours, ref, want.get_size())) << "oc " << c.oc << " ic " << c.ic << " hw " << c.hw;
  }
  if (formats.empty()) GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU";
}

TEST(CpuWinogradWeights, FoldsPerChannelFactorsAsAScaledCopyWould) {
  f::PackBuffers buffers;
  bool any = false;
  for (const Case& c : {Case{64, 64, 56}, Case{128, 128, 28}}) {
    const memory::desc want = winograd_weights_desc(c.oc, c.ic, c.hw);
    if (want.data.ndims == 0 || !f::is_winograd_layout(want)) continue;
    any = true;
    const std::vector<float> w = random_values(static_cast<size_t>(c.oc * c.ic * 9), 11u);
    const std::vector<float> mul = random_values(static_cast<size_t>(c.oc), 13u);
    std::vector<float> scaled = w;
    for (int64_t o = 0; o < c.oc; ++o)
      for (int64_t k = 0; k < c.ic * 9; ++k) scaled[static_cast<size_t>(o * c.ic * 9 + k)] *= mul[o];
    const m::WeightsMemory ours = f::pack_winograd_weights(w.data(), mul.data(), c.oc, c.ic, want, buffers);
    const m::WeightsMemory ref = f::pack_winograd_weights_dnnl(scaled.data(), c.oc, c.ic, want);
    EXPECT_TRUE(same_bytes(ours, ref, want.get_size())) << "oc " << c.oc << " ic " << c.ic;
  }
  if (!any) GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU";
}

TEST(CpuWinogradWeights, LargeWeightsGetTheirOwnBlock) {
  const memory::desc big({1024, 1024}, memory::data_type::f32, memory::format_tag::ab);  // 4 MiB
  const m::WeightsMemory w = m::weights_memory(big);
  ASSERT_NE(w.block, nullptr);
  EXPECT_EQ(w.memory.get_data_handle(), w.block.get());
  const memory::desc small({16, 16}, memory::data_type::f32, memory::format_tag::ab);
  EXPECT_EQ(m::weights_memory(small).block, nullptr);
}

}  // namespace

#endif  // EPHOST_WITH_DNNL
