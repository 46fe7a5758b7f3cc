// The CPU plugin's QuantizeLinear / DequantizeLinear element loops (plugins/cpu/math/quantize.h) on every
// ISA tier (tests/unit/isa_tiers.h) against the ONNX expressions evaluated one element at a time with
// std::nearbyint, bit for bit: halves (round half to even), saturation at both ends, NaN and infinities,
// every tail length, every element type, one scale per run and one scale per element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "math/byte_table.h"
#include "math/quantize.h"
#include "isa_tiers.h"

namespace m = ephost::cpu::math;

namespace {

// The ONNX reference: saturate(round_half_to_even(x / scale) + zero_point).
template <typename Q>
Q reference_quantize(float x, float scale, Q zero_point) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  const float v = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  return static_cast<Q>(std::min(hi, std::max(lo, v)));
}

template <typename Q>
float reference_dequantize(Q x, float scale, Q zero_point) {
  return static_cast<float>(static_cast<int64_t>(x) - static_cast<int64_t>(zero_point)) * scale;
}

// Values that probe rounding and saturation for a scale of 1 (and land elsewhere for other scales).
std::vector<float> probe_inputs(uint32_t seed) {
  std::vector<float> v = {0.f, -0.f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f, 128.5f, -127.5f,
                          -128.5f, -129.5f, 254.5f, 255.5f, 256.5f, 32766.5f, 32767.5f, -32768.5f, 65534.5f,
                          65535.5f, 4194303.5f, 4194304.f, 8388607.f, 8388609.f, 1e10f, -1e10f, 1e-30f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> wide(-300.f, 300.f);
  std::uniform_int_distribution<int> half(-70000, 70000);
  for (int i = 0; i < 200; ++i) v.push_back(wide(gen));
  for (int i = 0; i < 100; ++i) v.push_back(static_cast<float>(half(gen)) + 0.5f);
  return v;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename Q>
std::vector<Q> zero_points(uint32_t seed, size_t n) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> d(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  std::vector<Q> z(n);
  for (Q& q : z) q = static_cast<Q>(d(gen));
  return z;
}

std::vector<float> scales(uint32_t seed, size_t n) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-6.f, 2.f);
  std::vector<float> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = (i % 5 == 0) ? 1.f : std::exp2(d(gen)) * (i % 7 == 3 ? -1.f : 1.f);
  return s;
}

template <typename Q>
void check_quantize(uint32_t seed) {
  const std::vector<float> x = probe_inputs(seed);
  const std::vector<float> s = scales(seed + 1, x.size());
  const std::vector<Q> z = zero_points<Q>(seed + 2, x.size());
  // Every offset and tail length up to two AVX-512 vectors, then the whole input.
  for (size_t start : {size_t{0}, size_t{3}}) {
    for (size_t n = 0; n + start <= x.size(); n = n < 40 ? n + 1 : x.size() - start) {
      for (float scale : {1.f, 0.37f, 1.f / 64.f, 3e-4f}) {
        for (Q zero : {Q{0}, std::numeric_limits<Q>::max(), static_cast<Q>(std::numeric_limits<Q>::lowest() / 2 + 7)}) {
          std::vector<Q> y(n + 1, Q{42});
          m::quantize_linear(x.data() + start, scale, zero, y.data(), static_cast<int64_t>(n));
          for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(y[i], reference_quantize<Q>(x[start + i], scale, zero))
                << "x=" << x[start + i] << " scale=" << scale << " zero=" << +zero << " n=" << n << " i=" << i;
          ASSERT_EQ(y[n], Q{42}) << "wrote past the end, n=" << n;
        }
      }
      for (bool with_zero : {false, true}) {
        std::vector<Q> y(n + 1, Q{42});
        m::quantize_linear_each(x.data() + start, s.data() + start, with_zero ? z.data() + start : nullptr, y.data(),
                                static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(y[i], reference_quantize<Q>(x[start + i], s[start + i], with_zero ? z[start + i] : Q{0}))
              << "x=" << x[start + i] << " scale=" << s[start + i] << " n=" << n << " i=" << i;
        ASSERT_EQ(y[n], Q{42}) << "wrote past the end, n=" << n;
      }
      if (n == x.size() - start) break;
    }
  }
}

template <typename Q>
void check_dequantize(uint32_t seed) {
  const size_t count = 300;
  std::vector<Q> x = zero_points<Q>(seed, count);
  x[0] = std::numeric_limits<Q>::lowest();
  x[1] = std::numeric_limits<Q>::max();
  const std::vector<float> s = scales(seed + 1, count);
  std::vector<Q> z = zero_points<Q>(seed + 2, count);
  // int32's zero point is 0 in ONNX; a nonzero one must still not overflow.
  for (size_t n = 0; n <= count; n = n < 40 ? n + 1 : count) {
    for (float scale : {1.f, 0.37f, 3e-4f}) {
      for (Q zero : {Q{0}, std::numeric_limits<Q>::max(), std::numeric_limits<Q>::lowest()}) {
        std::vector<float> y(n + 1, 42.f);
        m::dequantize_linear(x.data(), scale, zero, y.data(), static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i)
          ASSERT_TRUE(same_bits(y[i], reference_dequantize<Q>(x[i], scale, zero)))
              << "x=" << +x[i] << " scale=" << scale << " zero=" << +zero << ": " << y[i];
        ASSERT_EQ(y[n], 42.f);
      }
    }
    for (bool with_zero : {false, true}) {
      std::vector<float> y(n + 1, 42.f);
      m::dequantize_linear_each(x.data(), s.data(), with_zero ? z.data() : nullptr, y.data(), static_cast<int64_t>(n));
      for (size_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_bits(y[i], reference_dequantize<Q>(x[i], s[i], with_zero ? z[i] : Q{0})))
            << "x=" << +x[i] << " scale=" << s[i] << ": " << y[i];
      ASSERT_EQ(y[n], 42.f);
    }
    if (n == count) break;
  }
}

}  // namespace

class CpuQuantizeLinear : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuQuantizeLinear);

TEST_P(CpuQuantizeLinear, Uint8MatchesTheReferenceBitForBit) { check_quantize<uint8_t>(1); }
TEST_P(CpuQuantizeLinear, Int8MatchesTheReferenceBitForBit) { check_quantize<int8_t>(2); }
TEST_P(CpuQuantizeLinear, Uint16MatchesTheReferenceBitForBit) { check_quantize<uint16_t>(3); }
TEST_P(CpuQuantizeLinear, Int16MatchesTheReferenceBitForBit) { check_quantize<int16_t>(4); }

TEST_P(CpuQuantizeLinear, RoundsHalvesToEvenAndSaturates) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 300.f, -300.f,
                                std::numeric_limits<float>::quiet_NaN(), 127.5f, -128.5f};
  std::vector<int8_t> y(x.size());
  m::quantize_linear(x.data(), 1.f, int8_t{0}, y.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(std::vector<int>(y.begin(), y.end()), (std::vector<int>{0, 2, 2, 0, -2, -2, 127, -128, -128, 127, -128}));
}

class CpuDequantizeLinear : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuDequantizeLinear);

TEST_P(CpuDequantizeLinear, Uint8MatchesTheReferenceBitForBit) { check_dequantize<uint8_t>(11); }
TEST_P(CpuDequantizeLinear, Int8MatchesTheReferenceBitForBit) { check_dequantize<int8_t>(12); }
TEST_P(CpuDequantizeLinear, Uint16MatchesTheReferenceBitForBit) { check_dequantize<uint16_t>(13); }
TEST_P(CpuDequantizeLinear, Int16MatchesTheReferenceBitForBit) { check_dequantize<int16_t>(14); }
TEST_P(CpuDequantizeLinear, Int32MatchesTheReferenceBitForBit) { check_dequantize<int32_t>(15); }

// The int8 residual Add's one pass (fusion/qdq_conv.cpp) against DequantizeLinear, a float add, Relu and
// QuantizeLinear evaluated one after another, bit for bit: random bytes, every tail length up to 40,
// scales that make sums land on halves and saturate at both ends.
template <typename A, typename B, typename Y>
void check_add_then_quantize(uint32_t seed) {
  const size_t count = 300;
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> wide(-40.f, 40.f);
  std::vector<A> a(count);
  std::vector<B> b(count);
  for (A& v : a) v = static_cast<A>(byte(gen));
  for (B& v : b) v = std::is_same_v<B, float> ? static_cast<B>(wide(gen)) : static_cast<B>(byte(gen));
  b[0] = std::is_same_v<B, float> ? static_cast<B>(std::numeric_limits<float>::quiet_NaN()) : b[0];
  const A za = static_cast<A>(seed % 2 ? 3 : -5);
  const B zb = static_cast<B>(std::is_same_v<B, float> ? 0 : 7);
  for (size_t n = 0; n <= count; n = n < 40 ? n + 1 : count) {
    for (bool relu : {false, true}) {
      for (float sy : {0.125f, 0.05f, 0.003f}) {
        const float sa = 0.25f, sb = 0.0625f;
        const Y zy = static_cast<Y>(std::is_same_v<Y, uint8_t> ? 17 : -9);
        std::vector<Y> y(n + 1, Y{42});
        m::add_dequantized_then_quantize(a.data(), sa, za, b.data(), sb, zb, relu, sy, zy, y.data(),
                                         static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          float fb = 0.f;
          if constexpr (std::is_same_v<B, float>)
            fb = b[i];
          else
            fb = reference_dequantize<B>(b[i], sb, zb);
          float v = reference_dequantize<A>(a[i], sa, za) + fb;
          if (relu) v = v > 0.f ? v : 0.f;
          ASSERT_EQ(+y[i], +reference_quantize<Y>(v, sy, zy))
              << "n " << n << " at " << i << ": a=" << +a[i] << " b=" << +b[i] << " relu " << relu << " sy " << sy;
        }
        ASSERT_EQ(y[n], Y{42}) << "wrote past the end, n " << n;
      }
    }
    if (n == count) break;
  }
}

class CpuAddDequantizedThenQuantize : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuAddDequantizedThenQuantize);

TEST_P(CpuAddDequantizedThenQuantize, Uint8BytesMatchTheOpsBitForBit) {
  check_add_then_quantize<uint8_t, uint8_t, uint8_t>(21);
}
TEST_P(CpuAddDequantizedThenQuantize, SignedAndMixedBytesMatchTheOpsBitForBit) {
  check_add_then_quantize<int8_t, uint8_t, int8_t>(22);
  check_add_then_quantize<uint8_t, int8_t, int8_t>(23);
}
TEST_P(CpuAddDequantizedThenQuantize, FloatOperandMatchesTheOpsBitForBit) {
  check_add_then_quantize<uint8_t, float, uint8_t>(24);
  check_add_then_quantize<int8_t, float, uint8_t>(25);
}

// The residual Add's division-free form (x / sy as a product with 1 / sy and one FMA correction) on
// every pair of bytes, for random scales and zero points over a wide range of magnitudes: the check
// accepts every one (Markstein's step rounds as the division does), and where it does, every byte
// the form writes on this tier (all tail lengths, through the vector body and its tail) is the op-by-
// op reference's.
template <typename A, typename B, typename Y>
void check_add_by_reciprocal(uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> exponent(-12.f, 2.f);
  std::uniform_int_distribution<int> byte(0, 255);
  constexpr int64_t kPairs = 256 * 256;
  std::vector<A> a(kPairs);
  std::vector<B> b(kPairs);
  for (int64_t i = 0; i < kPairs; ++i) {
    a[i] = static_cast<A>(static_cast<uint8_t>(i & 255));
    b[i] = static_cast<B>(static_cast<uint8_t>(i >> 8));
  }
  for (int round = 0; round < 12; ++round) {
    const float sa = std::exp2(exponent(gen)), sb = std::exp2(exponent(gen));
    // sy near the operands' scales (as a calibrated model has it), sometimes far below or above.
    const float sy = std::max(sa, sb) * std::exp2(exponent(gen) / 4.f + (round % 4 == 3 ? 3.f : 0.f));
    const auto za = static_cast<A>(byte(gen)), zb = static_cast<B>(byte(gen));
    const auto zy = static_cast<Y>(byte(gen));
    const bool relu = round % 2 == 1;
    ASSERT_TRUE(m::add_quantize_by_reciprocal_exact(sa, za, sb, zb, relu, sy, zy))
        << "sa " << sa << " sb " << sb << " sy " << sy << " relu " << relu;
    std::vector<Y> y(kPairs + 1, Y{42});
    for (int64_t n : {kPairs, int64_t{0}, int64_t{1}, int64_t{7}, int64_t{17}, int64_t{64}, int64_t{100}, int64_t{129}}) {
      std::fill(y.begin(), y.end(), Y{42});
      m::add_dequantized_then_quantize_by_reciprocal(a.data(), sa, za, b.data(), sb, zb, relu, sy, zy, y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        float v = reference_dequantize<A>(a[i], sa, za) + reference_dequantize<B>(b[i], sb, zb);
        if (relu) v = v > 0.f ? v : 0.f;
        ASSERT_EQ(+y[i], +reference_quantize<Y>(v, sy, zy))
            << "n " << n << " a=" << +a[i] << " b=" << +b[i] << " sa " << sa << " sb " << sb << " sy " << sy;
      }
      ASSERT_EQ(y[n], Y{42}) << "wrote past the end, n " << n;
    }
  }
}

TEST_P(CpuAddDequantizedThenQuantize, ByReciprocalMatchesTheOpsOnEveryPairOfBytes) {
  if (m::hardware_isa() != m::Isa::kAvx512) GTEST_SKIP() << "this CPU has no AVX-512, where the check says no";
  check_add_by_reciprocal<uint8_t, uint8_t, uint8_t>(31);
  check_add_by_reciprocal<int8_t, uint8_t, int8_t>(32);
  check_add_by_reciprocal<uint8_t, int8_t, uint8_t>(33);
  check_add_by_reciprocal<int8_t, int8_t, int8_t>(34);
}

// The int8 activation tables (fusion/qdq_unary.cpp): every byte value, lengths around the 64-byte
// vector and its masked tail, against the element loop.
class CpuLookupBytes : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuLookupBytes);

TEST_P(CpuLookupBytes, MatchesTheElementLoop) {
  std::mt19937 gen(5);
  uint8_t table[256];
  for (uint8_t& t : table) t = static_cast<uint8_t>(gen());
  for (int64_t n : {0, 1, 63, 64, 65, 127, 256, 1000}) {
    std::vector<uint8_t> x(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 3, 0xA5);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(i < 256 ? i : gen());
    m::lookup_bytes(table, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], table[x[i]]) << "n " << n << " at " << i;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(y[static_cast<size_t>(n) + k], 0xA5) << "wrote past the end, n " << n;
  }
  if (GetParam() != ephost::cpu::math::Isa::kAvx512) {
    EXPECT_FALSE(m::lookup_bytes_uses_vbmi());
  }
}
