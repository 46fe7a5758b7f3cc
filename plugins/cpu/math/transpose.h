// N-d transpose of elements of 1, 2, 4 or 8 bytes: y[i_perm[0], i_perm[1], ...] = x[i_0, i_1, ...].
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape.h"

namespace ephost::cpu::math {

// Output shape for `perm` (empty: reversed); throws when perm is not a permutation of the axes.
Shape transpose_shape(const Shape& in, std::vector<int64_t>* perm);
void transpose(const void* x, const Shape& in, const std::vector<int64_t>& perm, void* y, size_t elem_size,
               int threads);

// transpose_2d for bytes: 16x16 tiles transposed in SSE2 registers (the x86-64 baseline, so no
// dispatch), partial tiles at the edges through a 16x16 staging block. About 6x faster than the
// element loop below, which was a third of an int8 CNN's time in its NCHW <-> NHWC conversions.
void transpose_2d_bytes(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, int64_t rows,
                        int64_t cols);

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols: a 2-D transpose between
// strided rows (NCHW <-> NHWC rows, channel-major <-> pixel-major blocks). In square tiles, with the
// loop bounds and strides in locals: a strided store per element in a plain loop makes the
// compiler reload every captured bound after each store (a char store may alias anything), and
// touches a new cache line per element on one side; tiles keep both sides in L1.
template <typename T>
void transpose_2d(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  if constexpr (sizeof(T) == 1) {
    transpose_2d_bytes(reinterpret_cast<const uint8_t*>(src), src_stride, reinterpret_cast<uint8_t*>(dst), dst_stride,
                       rows, cols);
    return;
  }
  constexpr int64_t kTile = 64 / sizeof(T) < 16 ? 16 : 64 / sizeof(T);
  const T* __restrict s = src;
  T* __restrict d = dst;
  const int64_t ss = src_stride, ds = dst_stride, R = rows, C = cols;
  for (int64_t r0 = 0; r0 < R; r0 += kTile) {
    const int64_t r1 = r0 + kTile < R ? r0 + kTile : R;
    for (int64_t c0 = 0; c0 < C; c0 += kTile) {
      const int64_t c1 = c0 + kTile < C ? c0 + kTile : C;
      for (int64_t c = c0; c < c1; ++c) {
        T* out = d + c * ds;
        for (int64_t r = r0; r < r1; ++r) out[r] = s[r * ss + c];
      }
    }
  }
}

}  // namespace ephost::cpu::math
