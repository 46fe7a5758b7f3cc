#include "pool.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "parallel.h"
#include "spatial3.h"
#include "vec.h"

namespace ephost::cpu::math {

Shape PoolGeometry::output_shape() const {
  Shape s{batch, channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

PoolGeometry pool_geometry(const PoolParams& p, const Shape& x) {
  if (x.size() < 3 || x.size() > 5)
    invalid("input must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), found shape " + to_string(x));
  const size_t k = x.size() - 2;
  PoolGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  g.in_spatial.assign(x.begin() + 2, x.end());
  if (p.kernel_shape.size() != k)
    invalid("kernel_shape " + to_string(p.kernel_shape) + " must have " + std::to_string(k) + " values");
  g.kernel = p.kernel_shape;
  g.strides = p.strides.empty() ? Shape(k, 1) : p.strides;
  g.dilations = p.dilations.empty() ? Shape(k, 1) : p.dilations;
  const Shape pads = p.pads.empty() ? Shape(2 * k, 0) : p.pads;
  if (g.strides.size() != k || g.dilations.size() != k || pads.size() != 2 * k)
    invalid("strides, dilations and pads must have " + std::to_string(k) + ", " + std::to_string(k) + " and " +
            std::to_string(2 * k) + " values");
  g.pad_begin.assign(k, 0);
  g.pad_end.assign(k, 0);
  g.out_spatial.assign(k, 0);
  for (size_t i = 0; i < k; ++i) {
    if (g.kernel[i] <= 0 || g.strides[i] <= 0 || g.dilations[i] <= 0)
      invalid("kernel_shape, strides and dilations must be positive");
    const int64_t in = g.in_spatial[i], s = g.strides[i];
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (p.auto_pad == "NOTSET" || p.auto_pad.empty()) {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + k];
      if (pads[i] < 0 || pads[i + k] < 0) invalid("pads must not be negative, found " + to_string(pads));
    } else if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      const int64_t small = total / 2, big = total - total / 2;
      g.pad_begin[i] = p.auto_pad == "SAME_UPPER" ? small : big;
      g.pad_end[i] = p.auto_pad == "SAME_UPPER" ? big : small;
      g.out_spatial[i] = out;
      continue;
    } else if (p.auto_pad != "VALID") {
      invalid("unsupported auto_pad '" + p.auto_pad + "'");
    }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - dk;
    if (span < 0)
      invalid("padded input size on spatial axis " + std::to_string(i) + " is smaller than the kernel");
    int64_t out = p.ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    // As PyTorch: a last window starting inside the end padding is dropped.
    if (p.ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
    g.out_spatial[i] = out;
  }
  return g;
}

namespace {

// First kernel tap whose position start + t*d is >= lo, and one past the last tap below hi.
inline void tap_range(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi, int64_t* t0, int64_t* t1) {
  int64_t a = start >= lo ? 0 : (lo - start + d - 1) / d;
  int64_t b = start >= hi ? 0 : std::min<int64_t>(k, (hi - start + d - 1) / d);
  *t0 = a;
  *t1 = std::max(a, b);
}

// Per output position along one axis: where its window starts and which taps land inside the
// input (and inside the padded extent, for count_include_pad). Computed once per call, not per
// output element.
struct AxisWindows {
  std::vector<int64_t> start, t0, t1, p0, p1;
};

AxisWindows axis_windows(int64_t out, int64_t s, int64_t pb, int64_t pe, int64_t k, int64_t d, int64_t in) {
  AxisWindows w;
  w.start.resize(out);
  w.t0.resize(out);
  w.t1.resize(out);
  w.p0.resize(out);
  w.p1.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    w.start[o] = o * s - pb;
    tap_range(w.start[o], k, d, 0, in, &w.t0[o], &w.t1[o]);
    tap_range(w.start[o], k, d, -pb, in + pe, &w.p0[o], &w.p1[o]);
  }
  return w;
}

}  // namespace

template <typename T>
void max_pool(const T* x, const PoolGeometry& g, T* y, int64_t* indices, bool column_major, int threads) {
  const Spatial3 D = to_spatial3(g);
  const int64_t planes = g.batch * g.channels;
  const int64_t in_plane = D.in[0] * D.in[1] * D.in[2];
  const int64_t out_plane = D.out[0] * D.out[1] * D.out[2];
  if (planes * out_plane == 0) return;
  AxisWindows win[3];
  for (int i = 0; i < 3; ++i) win[i] = axis_windows(D.out[i], D.s[i], D.pb[i], D.pe[i], D.k[i], D.d[i], D.in[i]);
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  parallel_for(planes * D.out[0] * D.out[1], threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(D.out[2], 1)),
               [&](int64_t r0, int64_t r1) {
    std::vector<T> colmax(std::is_integral_v<T> && !indices ? static_cast<size_t>(D.in[2]) : 0);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oh = r % D.out[1], od = (r / D.out[1]) % D.out[0], p = r / (D.out[1] * D.out[0]);
      const T* xp = x + p * in_plane;
      T* yp = y + p * out_plane + (od * D.out[1] + oh) * D.out[2];
      int64_t* ip = indices ? indices + p * out_plane + (od * D.out[1] + oh) * D.out[2] : nullptr;
      const int64_t ds = win[0].start[od], hs = win[1].start[oh];
      const int64_t kd0 = win[0].t0[od], kd1 = win[0].t1[od], kh0 = win[1].t0[oh], kh1 = win[1].t1[oh];
      if (!ip && std::is_integral_v<T>) {
        // Integers (int8 models' pools): the maximum over the window's rows first, a whole input row at
        // a time (vectorised), then along each output's strided taps of that one row. Exact in any
        // order; floats keep the order below (which of -0 and +0 a tie returns).
        T* const cm = colmax.data();
        const T* const first = xp + ((ds + kd0 * D.d[0]) * D.in[1] + hs + kh0 * D.d[1]) * D.in[2];
        if (kd0 >= kd1 || kh0 >= kh1) {
          for (int64_t ow = 0; ow < D.out[2]; ++ow) yp[ow] = lowest;
          continue;
        }
        std::copy(first, first + D.in[2], cm);
        for (int64_t a = kd0; a < kd1; ++a)
          for (int64_t b = (a == kd0 ? kh0 + 1 : kh0); b < kh1; ++b) {
            const T* __restrict row = xp + ((ds + a * D.d[0]) * D.in[1] + hs + b * D.d[1]) * D.in[2];
            T* __restrict m = cm;
            for (int64_t iw = 0; iw < D.in[2]; ++iw) m[iw] = row[iw] > m[iw] ? row[iw] : m[iw];
          }
        for (int64_t ow = 0; ow < D.out[2]; ++ow) {
          const int64_t ws = win[2].start[ow];
          T m = lowest;
          for (int64_t c = win[2].t0[ow]; c < win[2].t1[ow]; ++c) {
            const T v = cm[ws + c * D.d[2]];
            m = v > m ? v : m;
          }
          yp[ow] = m;
        }
        continue;
      }
      if (!ip) {
        // Values only: a branch-free max the compiler can keep in registers.
        for (int64_t ow = 0; ow < D.out[2]; ++ow) yp[ow] = lowest;
        for (int64_t a = kd0; a < kd1; ++a)
          for (int64_t b = kh0; b < kh1; ++b) {
            const T* row = xp + ((ds + a * D.d[0]) * D.in[1] + hs + b * D.d[1]) * D.in[2];
            for (int64_t ow = 0; ow < D.out[2]; ++ow) {
              const int64_t ws = win[2].start[ow];
              T m = yp[ow];
              for (int64_t c = win[2].t0[ow]; c < win[2].t1[ow]; ++c) {
                const T v = row[ws + c * D.d[2]];
                m = v > m ? v : m;
              }
              yp[ow] = m;
            }
          }
        continue;
      }
      for (int64_t ow = 0; ow < D.out[2]; ++ow) {
        const int64_t ws = win[2].start[ow];
        T best = lowest;
        int64_t best_at = -1;
        for (int64_t a = kd0; a < kd1; ++a) {
          const int64_t id = ds + a * D.d[0];
          for (int64_t b = kh0; b < kh1; ++b) {
            const int64_t ih = hs + b * D.d[1];
            const T* row = xp + (id * D.in[1] + ih) * D.in[2];
            for (int64_t c = win[2].t0[ow]; c < win[2].t1[ow]; ++c) {
              const int64_t iw = ws + c * D.d[2];
              const T v = row[iw];
              if (best_at < 0 || v > best) {  // ties keep the first position, as ONNX Runtime
                best = v;
                best_at = (id * D.in[1] + ih) * D.in[2] + iw;
              }
            }
          }
        }
        yp[ow] = best;
        int64_t flat = best_at < 0 ? 0 : best_at;
        if (column_major && best_at >= 0) {
          const int64_t iw = best_at % D.in[2], ih = (best_at / D.in[2]) % D.in[1], id = best_at / (D.in[2] * D.in[1]);
          flat = (iw * D.in[1] + ih) * D.in[0] + id;
        }
        ip[ow] = p * in_plane + flat;
      }
    }
  });
}

template void max_pool<float>(const float*, const PoolGeometry&, float*, int64_t*, bool, int);
template void max_pool<int8_t>(const int8_t*, const PoolGeometry&, int8_t*, int64_t*, bool, int);
template void max_pool<uint8_t>(const uint8_t*, const PoolGeometry&, uint8_t*, int64_t*, bool, int);

// max_pool_nhwc: pool_nhwc.cpp.

void average_pool(const float* x, const PoolGeometry& g, float* y, bool count_include_pad, int threads) {
  const Spatial3 D = to_spatial3(g);
  const int64_t planes = g.batch * g.channels;
  const int64_t in_plane = D.in[0] * D.in[1] * D.in[2];
  const int64_t out_plane = D.out[0] * D.out[1] * D.out[2];
  if (planes * out_plane == 0) return;
  AxisWindows win[3];
  for (int i = 0; i < 3; ++i) win[i] = axis_windows(D.out[i], D.s[i], D.pb[i], D.pe[i], D.k[i], D.d[i], D.in[i]);
  // The divisor per output position along W, per (d, h) row below. With count_include_pad it
  // counts taps inside the padded extent (not past it, where ceil_mode windows may reach).
  auto count = [&](int i, int64_t o) {
    return count_include_pad ? win[i].p1[o] - win[i].p0[o] : win[i].t1[o] - win[i].t0[o];
  };
  parallel_for(planes * D.out[0] * D.out[1], threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(D.out[2], 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oh = r % D.out[1], od = (r / D.out[1]) % D.out[0], p = r / (D.out[1] * D.out[0]);
      const float* xp = x + p * in_plane;
      float* yp = y + p * out_plane + (od * D.out[1] + oh) * D.out[2];
      const int64_t ds = win[0].start[od], hs = win[1].start[oh];
      const int64_t kd0 = win[0].t0[od], kd1 = win[0].t1[od], kh0 = win[1].t0[oh], kh1 = win[1].t1[oh];
      const int64_t dh_count = count(0, od) * count(1, oh);
      for (int64_t ow = 0; ow < D.out[2]; ++ow) yp[ow] = 0.f;
      for (int64_t a = kd0; a < kd1; ++a)
        for (int64_t b = kh0; b < kh1; ++b) {
          const float* row = xp + ((ds + a * D.d[0]) * D.in[1] + hs + b * D.d[1]) * D.in[2];
          for (int64_t ow = 0; ow < D.out[2]; ++ow) {
            const int64_t ws = win[2].start[ow];
            float sum = 0.f;
            for (int64_t c = win[2].t0[ow]; c < win[2].t1[ow]; ++c) sum += row[ws + c * D.d[2]];
            yp[ow] += sum;
          }
        }
      for (int64_t ow = 0; ow < D.out[2]; ++ow) {
        const int64_t n = dh_count * count(2, ow);
        yp[ow] = n > 0 ? yp[ow] / static_cast<float>(n) : 0.f;
      }
    }
  });
}

void global_average_pool(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  parallel_for(planes, threads, pass_grain(static_cast<int64_t>(sizeof(float)) * (size + 1)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const double sum = sum_f32(x + p * size, size);
      y[p] = size > 0 ? static_cast<float>(sum / static_cast<double>(size)) : 0.f;
    }
  });
}

void global_max_pool(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  parallel_for(planes, threads, pass_grain(static_cast<int64_t>(sizeof(float)) * (size + 1)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float* xp = x + p * size;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < size; ++i) m = std::max(m, xp[i]);
      y[p] = m;
    }
  });
}

}  // namespace ephost::cpu::math
