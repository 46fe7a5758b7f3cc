#include "pool.h"

#include <algorithm>
#include <limits>

#include "parallel.h"

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

// Spatial dims padded to 3 (depth, height, width) so one loop nest serves 1-D to 3-D.
struct Dims3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};

Dims3 dims3(const PoolGeometry& g) {
  Dims3 r;
  const size_t k = g.in_spatial.size(), off = 3 - k;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= off;
    const size_t j = i - off;
    r.in[i] = real ? g.in_spatial[j] : 1;
    r.out[i] = real ? g.out_spatial[j] : 1;
    r.k[i] = real ? g.kernel[j] : 1;
    r.s[i] = real ? g.strides[j] : 1;
    r.d[i] = real ? g.dilations[j] : 1;
    r.pb[i] = real ? g.pad_begin[j] : 0;
    r.pe[i] = real ? g.pad_end[j] : 0;
  }
  return r;
}

// First kernel tap whose position start + t*d is >= lo, and one past the last tap below hi.
inline void tap_range(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi, int64_t* t0, int64_t* t1) {
  int64_t a = start >= lo ? 0 : (lo - start + d - 1) / d;
  int64_t b = start >= hi ? 0 : std::min<int64_t>(k, (hi - start + d - 1) / d);
  *t0 = a;
  *t1 = std::max(a, b);
}

}  // namespace

void max_pool(const float* x, const PoolGeometry& g, float* y, int64_t* indices, bool column_major, int threads) {
  const Dims3 D = dims3(g);
  const int64_t planes = g.batch * g.channels;
  const int64_t in_plane = D.in[0] * D.in[1] * D.in[2];
  const int64_t out_plane = D.out[0] * D.out[1] * D.out[2];
  if (planes * out_plane == 0) return;
  parallel_for(planes * D.out[0] * D.out[1], threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(D.out[2], 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oh = r % D.out[1], od = (r / D.out[1]) % D.out[0], p = r / (D.out[1] * D.out[0]);
      const float* xp = x + p * in_plane;
      float* yp = y + p * out_plane + (od * D.out[1] + oh) * D.out[2];
      int64_t* ip = indices ? indices + p * out_plane + (od * D.out[1] + oh) * D.out[2] : nullptr;
      const int64_t ds = od * D.s[0] - D.pb[0], hs = oh * D.s[1] - D.pb[1];
      int64_t kd0, kd1, kh0, kh1;
      tap_range(ds, D.k[0], D.d[0], 0, D.in[0], &kd0, &kd1);
      tap_range(hs, D.k[1], D.d[1], 0, D.in[1], &kh0, &kh1);
      for (int64_t ow = 0; ow < D.out[2]; ++ow) {
        const int64_t ws = ow * D.s[2] - D.pb[2];
        int64_t kw0, kw1;
        tap_range(ws, D.k[2], D.d[2], 0, D.in[2], &kw0, &kw1);
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_at = -1;
        for (int64_t a = kd0; a < kd1; ++a) {
          const int64_t id = ds + a * D.d[0];
          for (int64_t b = kh0; b < kh1; ++b) {
            const int64_t ih = hs + b * D.d[1];
            const float* row = xp + (id * D.in[1] + ih) * D.in[2];
            for (int64_t c = kw0; c < kw1; ++c) {
              const int64_t iw = ws + c * D.d[2];
              const float v = row[iw];
              if (best_at < 0 || v > best) {  // ties keep the first position, as ONNX Runtime
                best = v;
                best_at = (id * D.in[1] + ih) * D.in[2] + iw;
              }
            }
          }
        }
        yp[ow] = best;
        if (ip) {
          int64_t flat = best_at < 0 ? 0 : best_at;
          if (column_major && best_at >= 0) {
            const int64_t iw = best_at % D.in[2], ih = (best_at / D.in[2]) % D.in[1], id = best_at / (D.in[2] * D.in[1]);
            flat = (iw * D.in[1] + ih) * D.in[0] + id;
          }
          ip[ow] = p * in_plane + flat;
        }
      }
    }
  });
}

void average_pool(const float* x, const PoolGeometry& g, float* y, bool count_include_pad, int threads) {
  const Dims3 D = dims3(g);
  const int64_t planes = g.batch * g.channels;
  const int64_t in_plane = D.in[0] * D.in[1] * D.in[2];
  const int64_t out_plane = D.out[0] * D.out[1] * D.out[2];
  if (planes * out_plane == 0) return;
  parallel_for(planes * D.out[0] * D.out[1], threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(D.out[2], 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oh = r % D.out[1], od = (r / D.out[1]) % D.out[0], p = r / (D.out[1] * D.out[0]);
      const float* xp = x + p * in_plane;
      float* yp = y + p * out_plane + (od * D.out[1] + oh) * D.out[2];
      const int64_t ds = od * D.s[0] - D.pb[0], hs = oh * D.s[1] - D.pb[1];
      int64_t kd0, kd1, kh0, kh1, pd0, pd1, ph0, ph1;
      tap_range(ds, D.k[0], D.d[0], 0, D.in[0], &kd0, &kd1);
      tap_range(hs, D.k[1], D.d[1], 0, D.in[1], &kh0, &kh1);
      // With count_include_pad the divisor counts taps inside the padded extent (not past it, as
      // ceil_mode windows may reach).
      tap_range(ds, D.k[0], D.d[0], -D.pb[0], D.in[0] + D.pe[0], &pd0, &pd1);
      tap_range(hs, D.k[1], D.d[1], -D.pb[1], D.in[1] + D.pe[1], &ph0, &ph1);
      for (int64_t ow = 0; ow < D.out[2]; ++ow) {
        const int64_t ws = ow * D.s[2] - D.pb[2];
        int64_t kw0, kw1, pw0, pw1;
        tap_range(ws, D.k[2], D.d[2], 0, D.in[2], &kw0, &kw1);
        float sum = 0.f;
        for (int64_t a = kd0; a < kd1; ++a) {
          const int64_t id = ds + a * D.d[0];
          for (int64_t b = kh0; b < kh1; ++b) {
            const float* row = xp + (id * D.in[1] + hs + b * D.d[1]) * D.in[2];
            for (int64_t c = kw0; c < kw1; ++c) sum += row[ws + c * D.d[2]];
          }
        }
        int64_t count;
        if (count_include_pad) {
          tap_range(ws, D.k[2], D.d[2], -D.pb[2], D.in[2] + D.pe[2], &pw0, &pw1);
          count = (pd1 - pd0) * (ph1 - ph0) * (pw1 - pw0);
        } else {
          count = (kd1 - kd0) * (kh1 - kh0) * (kw1 - kw0);
        }
        yp[ow] = count > 0 ? sum / static_cast<float>(count) : 0.f;
      }
    }
  });
}

void global_average_pool(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  parallel_for(planes, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(size, 1)),
               [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float* xp = x + p * size;
      double sum = 0;
      float part = 0.f;
      // Float partial sums in blocks keep the loop vectorised; a double total keeps large planes exact.
      for (int64_t i = 0; i < size; i += 4096) {
        part = 0.f;
        const int64_t e = std::min(size, i + 4096);
        for (int64_t j = i; j < e; ++j) part += xp[j];
        sum += part;
      }
      y[p] = size > 0 ? static_cast<float>(sum / static_cast<double>(size)) : 0.f;
    }
  });
}

void global_max_pool(const float* x, int64_t planes, int64_t size, float* y, int threads) {
  parallel_for(planes, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(size, 1)),
               [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float* xp = x + p * size;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < size; ++i) m = std::max(m, xp[i]);
      y[p] = m;
    }
  });
}

}  // namespace ephost::cpu::math
