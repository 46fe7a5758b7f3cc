// A copy that reads its source through arbitrary strides: y (contiguous, shape `dims`) at
// [i_0, .., i_{r-1}] gets x[sum_d i_d * strides[d]]. Permuted strides transpose, summed strides
// take diagonals, zero strides broadcast; Einsum uses all three.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel.h"
#include "shape.h"

namespace ephost::cpu::math {

template <typename T>
void strided_copy(const T* x, const Shape& dims, const std::vector<int64_t>& strides, T* y, int threads) {
  const int64_t n = numel(dims);
  if (n == 0) return;
  const size_t r = dims.size();
  if (r == 0) {
    y[0] = x[0];
    return;
  }
  const int64_t inner = dims[r - 1], step = strides[r - 1];
  const int64_t rows = n / inner;
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    // The outer index of row r0, then advanced one row at a time like an odometer.
    std::vector<int64_t> idx(r - 1);
    int64_t rem = r0, off = 0;
    for (size_t d = r - 1; d-- > 0;) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      off += idx[d] * strides[d];
    }
    for (int64_t row = r0; row < r1; ++row) {
      const T* xr = x + off;
      T* yr = y + row * inner;
      if (step == 1) std::copy(xr, xr + inner, yr);
      else if (step == 0) std::fill(yr, yr + inner, xr[0]);
      else
        for (int64_t j = 0; j < inner; ++j) yr[j] = xr[j * step];
      for (size_t d = r - 1; d-- > 0;) {
        off += strides[d];
        if (++idx[d] < dims[d]) break;
        off -= strides[d] * dims[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace ephost::cpu::math
