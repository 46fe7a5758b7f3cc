// ONNX Slice's window: which elements of an input of a given shape a Slice takes, from its starts, ends,
// axes and steps. Shared by the Slice kernel and constant folding, so that a folded Slice and a run one
// agree on every edge case (negative and out-of-range bounds, negative steps, duplicate axes); and the
// copy of a window, shared by the Slice kernel and the int8 slice of bytes (fusion/qdq_view.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "parallel.h"
#include "shape.h"

namespace ephost::cpu::math {

// y[i_0, .., i_{r-1}] = x[begin_0 + i_0 * step_0, ..]: y has shape `out`.
struct SliceWindow {
  Shape begin, step, out;
};

// `axes` empty means 0, 1, ..; `steps` empty means all 1. Bounds are clamped as the ONNX spec says
// (for a negative step, into [-1, d-1] for ends). Throws std::invalid_argument for lengths that differ,
// an axis out of range or given twice, and a zero step.
inline SliceWindow slice_window(const Shape& in, const Shape& starts, const Shape& ends, Shape axes, Shape steps) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (starts.size() != ends.size())
    invalid("starts " + to_string(starts) + " and ends " + to_string(ends) + " differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    invalid("starts, ends, axes and steps must have the same length");
  SliceWindow w{Shape(in.size(), 0), Shape(in.size(), 1), in};
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], r);
    if (seen[a]) invalid("axes " + to_string(axes) + " has duplicates");
    seen[a] = true;
    const int64_t d = in[a], t = steps[i];
    if (t == 0) invalid("steps must not be zero");
    int64_t s = starts[i], e = ends[i], len;
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (t > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > s ? (e - s + t - 1) / t : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = s > e ? (s - e + (-t) - 1) / (-t) : 0;
    }
    w.begin[a] = s;
    w.step[a] = t;
    w.out[a] = len;
  }
  return w;
}

// y = the window w of x (x of strides `st`, y of shape w.out, contiguous), rows split over `threads`.
template <typename T>
void copy_window(const T* x, const Shape& st, const SliceWindow& w, T* y, int threads) {
  const Shape& out = w.out;
  const size_t r = out.size();
  if (r == 0) {
    y[0] = x[0];
    return;
  }
  int64_t base = 0;
  for (size_t a = 0; a < r; ++a) base += w.begin[a] * st[a];
  const int64_t inner = out[r - 1], inner_step = w.step[r - 1] * st[r - 1];
  if (inner == 0) return;
  const int64_t rows = numel(out) / inner;
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      int64_t rem = row, off = base;
      for (size_t a = r - 1; a-- > 0;) {
        off += (rem % out[a]) * w.step[a] * st[a];
        rem /= out[a];
      }
      const T* xr = x + off;
      T* yr = y + row * inner;
      if (inner_step == 1) {
        std::memcpy(yr, xr, sizeof(T) * static_cast<size_t>(inner));
      } else {
        for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i * inner_step];
      }
    }
  });
}

}  // namespace ephost::cpu::math
