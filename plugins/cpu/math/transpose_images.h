// Layout changes of whole images between NCHW and NHWC, in parallel: each of `images` [rows][cols]
// matrices into [cols][rows] (rows = channels, cols = pixels for NCHW -> NHWC; the other way back).
#pragma once

#include <algorithm>
#include <cstdint>

#include "parallel.h"
#include "transpose.h"

namespace ephost::cpu::math {

// dst[i][c][r] = src[i][r][c] for i < images, r < rows, c < cols; src and dst must not overlap. Cut
// into blocks of whole 16-column tiles of about kElementwiseGrain elements (the byte transpose's
// tiles stay whole); a thread takes at least byte_grain() bytes of them.
template <typename T>
void transpose_images(const T* src, T* dst, int64_t images, int64_t rows, int64_t cols, int threads) {
  const int64_t block = std::max<int64_t>(16, kElementwiseGrain / std::max<int64_t>(rows, 1) / 16 * 16);
  const int64_t blocks = (cols + block - 1) / block;
  const int64_t grain =
      std::max<int64_t>(1, byte_grain() / static_cast<int64_t>(sizeof(T)) / std::max<int64_t>(block * rows, 1));
  parallel_for(images * blocks, threads, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i = b / blocks, c0 = b % blocks * block, count = std::min(block, cols - c0);
      const int64_t image = i * rows * cols;
      transpose_2d(src + image + c0, cols, dst + image + c0 * rows, rows, rows, count);
    }
  });
  note_team_end(threads);
}

}  // namespace ephost::cpu::math
