// Products of a few rows with a constant matrix, for the per-step recurrence of RNN/GRU/LSTM
// (h [B, K] x R^T, B = 1 in streaming inference): a oneDNN call costs microseconds of overhead per
// step, more than the arithmetic of a 64-unit LSTM.
#pragma once

#include <cstdint>
#include <vector>

namespace ephost::cpu::math {

// R [N, K] row-major, packed once for small_gemm: R^T in panels of 64 columns (the last one 16, 32 or
// 48 wide, zero-padded), each panel [K][width] contiguous so the product streams through it.
struct SmallGemmWeights {
  int64_t n = 0, k = 0;
  std::vector<float> panels;
};
SmallGemmWeights pack_for_small_gemm(const float* r, int64_t n, int64_t k);

// y[b, 0:N] = sum_k x[b, k] * R[0:N, k] for b < rows.
void small_gemm(const float* x, int64_t rows, const SmallGemmWeights& w, float* y);

}  // namespace ephost::cpu::math
