// math::q4_block_gemm (the fused DequantizeLinear-21 int4/uint4 block weights -> MatMul) against the
// unfused reference: each weight dequantized as DequantizeLinear does, float((q - z)) * s, then a plain
// product. Odd K and N (tile tails), block sizes that do not divide K, with and without zero points,
// int4 and uint4, row-major and transposed sources (Gemm's transB), per-column and per-tensor scales,
// 1 to many rows and several threads, on every ISA tier.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "isa_tiers.h"
#include "math/q4_block_gemm.h"

namespace m = ephost::cpu::math;

namespace {

// A packed 4-bit tensor of `count` random codes (ONNX's layout: first element in the low nibble).
std::vector<uint8_t> random_codes(int64_t count, std::mt19937& gen) {
  std::vector<uint8_t> bytes(static_cast<size_t>((count + 1) / 2), 0);
  std::uniform_int_distribution<int> d(0, 15);
  for (int64_t i = 0; i < count; ++i) bytes[i / 2] |= static_cast<uint8_t>(d(gen) << (i % 2 ? 4 : 0));
  return bytes;
}

int code_value(const std::vector<uint8_t>& bytes, int64_t i, bool is_signed) {
  const int c = (bytes[i / 2] >> (i % 2 ? 4 : 0)) & 0xF;
  return is_signed && c >= 8 ? c - 16 : c;
}

struct Case {
  int64_t rows, k, n, block;
  bool is_signed, zero_points, transposed, bias;
  int threads;
};

// Runs one case through pack + q4_block_gemm and checks every output against the reference.
void check(const Case& c, std::mt19937& gen) {
  const int64_t blocks = (c.k + c.block - 1) / c.block;
  const std::vector<uint8_t> codes = random_codes(c.k * c.n, gen);
  const std::vector<uint8_t> zps = random_codes(blocks * c.n, gen);
  std::uniform_real_distribution<float> ds(0.001f, 0.1f), dx(-1.f, 1.f);
  std::vector<float> scales(static_cast<size_t>(blocks * c.n)), x(static_cast<size_t>(c.rows * c.k)),
      bias(static_cast<size_t>(c.n));
  for (float& v : scales) v = ds(gen);
  for (float& v : x) v = dx(gen);
  for (float& v : bias) v = dx(gen);
  // W[k, n] stored [K, N] with scales [blocks, N], or (transposed) [N, K] with scales [N, blocks].
  m::Q4WeightSource src;
  src.is_signed = c.is_signed;
  src.codes = codes.data();
  src.k_stride = c.transposed ? 1 : c.n;
  src.n_stride = c.transposed ? c.k : 1;
  src.scales = scales.data();
  src.scale_k_stride = c.transposed ? 1 : c.n;
  src.scale_n_stride = c.transposed ? blocks : 1;
  src.zero_points = c.zero_points ? zps.data() : nullptr;
  const m::Q4BlockWeights w = m::pack_q4_block_weights(src, c.k, c.n, c.block);
  std::vector<float> y(static_cast<size_t>(c.rows * c.n), -7.f);
  m::q4_block_gemm(x.data(), c.rows, w, c.bias ? bias.data() : nullptr, y.data(), c.threads);
  // The unfused reference: DequantizeLinear's float weights, then the product (in double).
  std::vector<float> wf(static_cast<size_t>(c.k * c.n));
  for (int64_t k = 0; k < c.k; ++k)
    for (int64_t n = 0; n < c.n; ++n) {
      const int64_t at = k * src.k_stride + n * src.n_stride;
      const int64_t sat = (k / c.block) * src.scale_k_stride + n * src.scale_n_stride;
      const int z = c.zero_points ? code_value(zps, sat, c.is_signed) : 0;
      wf[k * c.n + n] = static_cast<float>(code_value(codes, at, c.is_signed) - z) * scales[sat];
    }
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t n = 0; n < c.n; ++n) {
      double want = c.bias ? bias[n] : 0.0, magnitude = std::fabs(want);
      for (int64_t k = 0; k < c.k; ++k) {
        want += static_cast<double>(x[r * c.k + k]) * wf[k * c.n + n];
        magnitude += std::fabs(static_cast<double>(x[r * c.k + k]) * wf[k * c.n + n]);
      }
      ASSERT_NEAR(y[r * c.n + n], want, 1e-6 * (1.0 + magnitude) * std::sqrt(static_cast<double>(c.k) + 1.0))
          << "rows " << c.rows << " k " << c.k << " n " << c.n << " block " << c.block << " signed " << c.is_signed
          << " zp " << c.zero_points << " transposed " << c.transposed << " at " << r << "," << n;
    }
}

}  // namespace

class CpuQ4BlockGemm : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuQ4BlockGemm);

TEST_P(CpuQ4BlockGemm, MatchesDequantizeThenMatMul) {
  std::mt19937 gen(23);
  for (int64_t n : {1, 7, 64, 65, 130})
    for (int64_t k : {1, 5, 33, 300})
      for (int64_t block : {1, 7, 16, 32, 1000})
        for (int64_t rows : {1, 3, 6})
          for (bool is_signed : {true, false})
            for (bool zp : {false, true}) {
              check({rows, k, n, block, is_signed, zp, false, false, 1}, gen);
              if (HasFatalFailure()) return;
            }
}

TEST_P(CpuQ4BlockGemm, TransposedSourceBiasAndThreads) {
  std::mt19937 gen(29);
  for (bool transposed : {false, true})
    for (int threads : {1, 4}) {
      check({37, 531, 200, 32, true, true, transposed, true, threads}, gen);
      check({2, 64, 257, 16, false, true, transposed, true, threads}, gen);
      check({130, 96, 3, 96, true, false, transposed, false, threads}, gen);
      if (HasFatalFailure()) return;
    }
}

TEST_P(CpuQ4BlockGemm, PerColumnAndPerTensorScales) {
  std::mt19937 gen(31);
  // Per column: block = K, scale stride along k 0; per tensor: both strides 0.
  for (bool per_tensor : {false, true}) {
    const int64_t k = 45, n = 70, rows = 5;
    const std::vector<uint8_t> codes = random_codes(k * n, gen), zp = random_codes(n, gen);
    std::vector<float> scales(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) scales[i] = 0.01f * static_cast<float>(i + 1);
    std::vector<float> x(static_cast<size_t>(rows * k));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    m::Q4WeightSource src;
    src.codes = codes.data();
    src.k_stride = n;
    src.n_stride = 1;
    src.scales = scales.data();
    src.scale_n_stride = per_tensor ? 0 : 1;
    src.zero_points = zp.data();
    const m::Q4BlockWeights w = m::pack_q4_block_weights(src, k, n, k);
    std::vector<float> y(static_cast<size_t>(rows * n));
    m::q4_block_gemm(x.data(), rows, w, nullptr, y.data(), 2);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) {
        const int64_t sat = per_tensor ? 0 : j;
        double want = 0;
        for (int64_t i = 0; i < k; ++i)
          want += x[r * k + i] * static_cast<double>(static_cast<float>(code_value(codes, i * n + j, true) -
                                                                        code_value(zp, sat, true)) *
                                                     scales[sat]);
        ASSERT_NEAR(y[r * n + j], want, 1e-5 * (1.0 + std::fabs(want))) << r << "," << j;
      }
  }
}

TEST_P(CpuQ4BlockGemm, EmptyK) {
  m::Q4WeightSource src;
  const m::Q4BlockWeights w = m::pack_q4_block_weights(src, 0, 3, 4);
  const float bias[3] = {1.f, 2.f, 3.f};
  std::vector<float> y(6, -1.f);
  m::q4_block_gemm(nullptr, 2, w, bias, y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{1.f, 2.f, 3.f, 1.f, 2.f, 3.f}));
}
