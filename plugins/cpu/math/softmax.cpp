#include "softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "fast_math.h"
#include "parallel.h"
#include "vec.h"

namespace ephost::cpu::math {

void softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, bool log, int threads) {
  if (outer * n * inner == 0) return;
  if (inner == 1) {
    if (!log) {
      parallel_for(outer, threads, pass_grain(2 * static_cast<int64_t>(sizeof(float)) * n), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) softmax_row_f32(x + r * n, 1.f, nullptr, y + r * n, n);
      });
      return;
    }
    parallel_for(outer, threads, pass_grain(2 * static_cast<int64_t>(sizeof(float)) * n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const float m = max_of(xr, n);
        // exp into y first (a vectorisable loop), then sum it with split accumulators.
        for (int64_t i = 0; i < n; ++i) yr[i] = fast_exp(xr[i] - m);
        const double sum = sum_of(yr, n);
        if (log) {
          const float ls = static_cast<float>(std::log(sum));
          for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] - m - ls;
        } else {
          const float inv = static_cast<float>(1.0 / sum);
          for (int64_t i = 0; i < n; ++i) yr[i] *= inv;
        }
      }
    });
    return;
  }
  // Strided axis: work on all `inner` lanes of one outer block at once so reads stay contiguous.
  parallel_for(outer, threads, 1, [&](int64_t r0, int64_t r1) {
    std::vector<float> m(inner);
    std::vector<double> s(inner);
    for (int64_t r = r0; r < r1; ++r) {
      const float* xb = x + r * n * inner;
      float* yb = y + r * n * inner;
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      std::fill(s.begin(), s.end(), 0.0);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) m[i] = std::max(m[i], xb[j * inner + i]);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          const float e = fast_exp(xb[j * inner + i] - m[i]);
          if (!log) yb[j * inner + i] = e;
          s[i] += e;
        }
      if (log) {
        for (int64_t i = 0; i < inner; ++i) m[i] += static_cast<float>(std::log(s[i]));
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) yb[j * inner + i] = xb[j * inner + i] - m[i];
      } else {
        for (int64_t i = 0; i < inner; ++i) m[i] = static_cast<float>(1.0 / s[i]);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) yb[j * inner + i] *= m[i];
      }
    }
  });
}

}  // namespace ephost::cpu::math
