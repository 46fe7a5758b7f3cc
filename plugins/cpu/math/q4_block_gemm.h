// A matrix product whose right-hand side is a 4-bit weight (int4 or uint4, ONNX's DequantizeLinear-21
// with block_size: one scale, and optionally one zero point, per `block` consecutive rows of K), run
// without ever holding the float weights: y = x · W with W[k, n] = (q[k, n] - z[k / block, n]) *
// s[k / block, n], dequantized tile by tile into a small per-thread buffer as the product needs it.
// Today's exporters write LLM weights this way (ONNX Runtime runs it as MatMulNBits).
//
// The weights are repacked once (pack_q4_block_weights) into column tiles of kQ4Tile columns: per tile,
// K rows of kQ4Tile / 2 bytes (byte j holds column j in its low nibble and column j + kQ4Tile / 2 in its
// high nibble), and per block the tile's scales and zero points as floats. Codes are kept unsigned
// (int4 values shifted by 8, with their zero points), so (code - zero) is exact. Two paths:
//  - many rows: each kChunk rows of K of a tile are dequantized into the buffer, every weight equal to
//    DequantizeLinear's float(q - z) * s bit for bit, then multiplied by every row (the dequantization
//    costs 1 / rows of the product);
//  - up to 4 rows (decoding one token): no buffer; per block, the sums of x * code are taken over the
//    codes themselves and scaled once, s * (sum x * q - z * sum x): the same value with the rounding of
//    a reassociated sum, as ONNX Runtime's MatMulNBits computes it.
// Either way only the order and rounding of the sum over k differ from DequantizeLinear then MatMul.
//
// Instruction sets (isa.h): scalar, AVX2 and AVX-512 loops, picked at run time.
//
// Thread-safety: packed weights are immutable; q4_block_gemm may run concurrently on the same weights.
#pragma once

#include <cstdint>
#include <vector>

namespace ephost::cpu::math {

// Columns per packed tile.
constexpr int64_t kQ4Tile = 64;

// Where pack_q4_block_weights reads a 4-bit weight W[K, N] given as ONNX stores it (two codes per byte,
// the first element in the low nibble): element (k, n) is element k * k_stride + n * n_stride of
// `codes`; its scale is scales[(k / block) * scale_k_stride + n * scale_n_stride], and its zero point
// (when `zero_points` is not null) the element at that same index of the packed `zero_points`.
// Per-tensor and per-column quantization are the cases block = K with zero strides.
struct Q4WeightSource {
  bool is_signed = true;  // int4 (true) or uint4
  const void* codes = nullptr;
  int64_t k_stride = 0, n_stride = 0;
  const float* scales = nullptr;
  int64_t scale_k_stride = 0, scale_n_stride = 0;
  const void* zero_points = nullptr;  // may be null (zero)
};

struct Q4BlockWeights {
  int64_t k = 0, n = 0, block = 0, blocks = 0, tiles = 0;
  std::vector<uint8_t> codes;  // [tiles][k][kQ4Tile / 2]
  std::vector<float> scales;   // [tiles][blocks][kQ4Tile]
  std::vector<float> zeros;    // [tiles][blocks][kQ4Tile], in the unsigned code domain
};

// Repacks W[k, n] (k, n >= 0, block >= 1). Columns past n in the last tile get scale 0.
Q4BlockWeights pack_q4_block_weights(const Q4WeightSource& src, int64_t k, int64_t n, int64_t block);

// y[m, :] = x[m, :] · W (+ bias) for m < rows: x is rows × k, y rows × n, both row-major and dense;
// `bias` (n values) may be null. Up to `threads` threads.
void q4_block_gemm(const float* x, int64_t rows, const Q4BlockWeights& w, const float* bias, float* y, int threads);

}  // namespace ephost::cpu::math
