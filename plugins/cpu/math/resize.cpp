#include "resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "parallel.h"

namespace ephost::cpu::math {

float resize_source_coordinate(CoordMode mode, int64_t o, int64_t in, int64_t out, float scale, float roi_start,
                               float roi_end) {
  const float x = static_cast<float>(o);
  // As the ONNX reference implementation, the resized length here is in * scale before flooring
  // (it equals the output size when the node gave sizes, as scale is then out / in).
  const float len = static_cast<float>(in) * scale;
  switch (mode) {
    case CoordMode::kHalfPixel: return (x + 0.5f) / scale - 0.5f;
    case CoordMode::kHalfPixelSymmetric: {
      // The offset centres the output: (in / 2) * (1 - out / (in * scale)).
      const float adjustment = static_cast<float>(out) / len;
      const float offset = static_cast<float>(in) / 2.f * (1.f - adjustment);
      return offset + (x + 0.5f) / scale - 0.5f;
    }
    case CoordMode::kPytorchHalfPixel: return len > 1.f ? (x + 0.5f) / scale - 0.5f : 0.f;
    case CoordMode::kAlignCorners:
      return len == 1.f ? 0.f : x * static_cast<float>(in - 1) / (len - 1.f);
    case CoordMode::kAsymmetric: return x / scale;
    case CoordMode::kTfHalfPixelForNN: return (x + 0.5f) / scale;
    case CoordMode::kTfCropAndResize: {
      // The crop [roi_start, roi_end] of the axis, spread over the output (its centre when out is 1).
      const float span = static_cast<float>(in - 1);
      const float rel = out == 1 ? (roi_end - roi_start) * span / 2.f
                                 : x * (roi_end - roi_start) * span / static_cast<float>(out - 1);
      return rel + roi_start * span;
    }
  }
  return x;
}

int64_t resize_output_size(int64_t in, float scale) {
  const double size = std::floor(static_cast<double>(in) * static_cast<double>(scale));
  if (!(size < 9.2e18))  // NaN, infinite, or no int64
    invalid("scale " + std::to_string(scale) + " on a dimension of " + std::to_string(in) +
            " gives an output size no tensor holds");
  return static_cast<int64_t>(size);
}

namespace {

// The nearest source position, before clamping (a float: tf_crop_and_resize's roi makes x anything).
float nearest_position(NearestMode m, float x, float scale) {
  switch (m) {
    case NearestMode::kRoundPreferFloor: return x == std::floor(x) + 0.5f ? std::floor(x) : std::round(x);
    case NearestMode::kRoundPreferCeil: return x == std::floor(x) + 0.5f ? std::ceil(x) : std::round(x);
    case NearestMode::kFloor: return std::floor(x);
    case NearestMode::kCeil: return std::ceil(x);
    case NearestMode::kSimple: return scale < 1.f ? std::ceil(x) : std::trunc(x);
  }
  return 0.f;
}

void cubic_coefficients(float r, float A, float c[4]) {
  const float r1 = r + 1.f, q = 1.f - r, q1 = q + 1.f;
  c[0] = ((A * r1 - 5.f * A) * r1 + 8.f * A) * r1 - 4.f * A;
  c[1] = ((A + 2.f) * r - (A + 3.f)) * r * r + 1.f;
  c[2] = ((A + 2.f) * q - (A + 3.f)) * q * q + 1.f;
  c[3] = ((A * q1 - 5.f * A) * q1 + 8.f * A) * q1 - 4.f * A;
}

// ONNX's filters as functions of the distance from the sampled position (in input positions times the
// scale): the triangle for linear, Keys' cubic with coefficient A.
float linear_filter(float d) { return std::max(0.f, 1.f - std::fabs(d)); }

float cubic_filter(float d, float A) {
  d = std::fabs(d);
  if (d <= 1.f) return ((A + 2.f) * d - (A + 3.f)) * d * d + 1.f;
  if (d < 2.f) return ((A * d - 5.f * A) * d + 8.f * A) * d - 4.f * A;
  return 0.f;
}

// Antialiased taps of an axis that shrinks by `scale` (< 1), as ONNX's reference computes them: the
// filter's half-width grows from 1 (linear) or 2 (cubic) to radius / scale, so output o reads the
// n = 2 * (1 - start) input positions around its source coordinate x, start = floor(-radius / scale) + 1,
// from x's left neighbour (x itself counts as the right end of the cell before it) onwards; positions
// past the edges read the edge value (or, with exclude_outside, drop out), and the weights are
// normalised to sum to 1. Taps that clamp onto the same edge position are merged, so an output reads at
// most `in` distinct positions however small the scale.
void antialias_taps(const ResizeParams& p, int64_t in, int64_t out, float scale, float roi_start, float roi_end,
                    AxisTaps* t) {
  const float radius = p.mode == ResizeMode::kLinear ? 1.f : 2.f;
  const double start_d = std::floor(-static_cast<double>(radius) / scale) + 1.0;
  const double n_d = 2.0 - 2.0 * start_d;
  const int64_t last = std::max<int64_t>(in - 1, 0);
  // n_d can exceed any integer for a tiny scale; the merged taps never exceed the input's length.
  t->taps = n_d >= static_cast<double>(in) ? std::max<int64_t>(in, 1) : static_cast<int64_t>(n_d);
  t->index.assign(out * t->taps, 0);
  t->weight.assign(out * t->taps, 0.f);
  std::vector<float> w;
  for (int64_t o = 0; o < out; ++o) {
    float x = resize_source_coordinate(p.coord, o, in, out, scale, roi_start, roi_end);
    if (p.coord == CoordMode::kTfCropAndResize && (x < 0.f || x > static_cast<float>(last))) {
      t->outside.resize(out, 0);
      t->outside[o] = 1;
    }
    if (!std::isfinite(x)) x = 0.f;
    double left = std::floor(static_cast<double>(x));
    float ratio = x - static_cast<float>(left);
    if (ratio == 0.f) {  // x on an input position: the cell to its left
      ratio = 1.f;
      left -= 1.0;
    }
    // ONNX pads the axis by n / 2 edge copies on each side; a window that would leave the padding slides
    // back into it (only positions far outside the input, which tf_crop_and_resize extrapolates anyway).
    const double half = n_d / 2.0;
    const double first = std::clamp(left + start_d, -half, static_cast<double>(in) - half);
    // Distinct input positions the window reads: [lo, hi] after clamping into the axis.
    const int64_t lo = clamp_to_int64(first, 0, last);
    const int64_t hi = clamp_to_int64(first + n_d - 1.0, 0, last);
    w.assign(static_cast<size_t>(hi - lo + 1), 0.f);
    float sum = 0.f;
    // Only the window's positions within the filter's support, |k + start - ratio| * scale < radius,
    // carry weight; the others are skipped without visiting them (there may be very many).
    const double k_lo = std::max(0.0, std::floor((static_cast<double>(ratio) - radius / scale) - start_d));
    const double k_hi = std::min(n_d - 1.0, std::ceil((static_cast<double>(ratio) + radius / scale) - start_d));
    for (double k = k_lo; k <= k_hi; k += 1.0) {
      const float d = static_cast<float>((start_d + k - ratio) * scale);
      float wk = p.mode == ResizeMode::kLinear ? linear_filter(d) : cubic_filter(d, p.cubic_a);
      const double pos = first + k;
      if (p.exclude_outside && (pos < 0.0 || pos > static_cast<double>(last))) wk = 0.f;
      w[static_cast<size_t>(clamp_to_int64(pos, 0, last) - lo)] += wk;
      sum += wk;
    }
    int64_t* idx = &t->index[o * t->taps];
    float* wt = &t->weight[o * t->taps];
    for (int64_t j = 0; j < t->taps; ++j) {
      const int64_t i = std::min<int64_t>(lo + j, hi);  // unused taps repeat hi with weight 0
      idx[j] = i;
      wt[j] = lo + j <= hi && sum != 0.f ? w[static_cast<size_t>(j)] / sum : 0.f;
    }
  }
}

}  // namespace

AxisTaps resize_axis_taps(const ResizeParams& p, int64_t in, int64_t out, float scale, float roi_start,
                          float roi_end) {
  AxisTaps t;
  if (p.antialias && p.mode != ResizeMode::kNearest && scale < 1.f) {
    antialias_taps(p, in, out, scale, roi_start, roi_end, &t);
    t.identity = false;
    return t;
  }
  t.taps = p.mode == ResizeMode::kNearest ? 1 : p.mode == ResizeMode::kLinear ? 2 : 4;
  t.index.resize(out * t.taps);
  t.weight.resize(out * t.taps);
  const int64_t last = std::max<int64_t>(in - 1, 0);
  for (int64_t o = 0; o < out; ++o) {
    const float x = resize_source_coordinate(p.coord, o, in, out, scale, roi_start, roi_end);
    if (p.coord == CoordMode::kTfCropAndResize && (x < 0.f || x > static_cast<float>(last))) {
      t.outside.resize(out, 0);
      t.outside[o] = 1;
    }
    int64_t* idx = &t.index[o * t.taps];
    float* w = &t.weight[o * t.taps];
    if (p.mode == ResizeMode::kNearest) {
      idx[0] = clamp_to_int64(nearest_position(p.nearest, x, scale), 0, last);
      w[0] = 1.f;
    } else if (p.mode == ResizeMode::kLinear) {
      const float xc = std::isnan(x) ? 0.f : std::clamp(x, 0.f, static_cast<float>(last));
      const int64_t i0 = clamp_to_int64(xc, 0, last);
      idx[0] = i0;
      idx[1] = std::min(i0 + 1, last);
      w[1] = xc - static_cast<float>(i0);
      w[0] = 1.f - w[1];
    } else {
      const float f = std::floor(x);
      // Far outside the axis every tap is outside too: -5 and last + 5 keep it so without overflow.
      const int64_t i0 = clamp_to_int64(f, -5, last + 5);
      cubic_coefficients(x - f, p.cubic_a, w);
      float sum = 0.f;
      for (int j = 0; j < 4; ++j) {
        const int64_t i = i0 - 1 + j;
        if (p.exclude_outside && (i < 0 || i > last)) w[j] = 0.f;
        sum += w[j];
        idx[j] = std::clamp<int64_t>(i, 0, last);
      }
      if (p.exclude_outside && sum != 0.f)
        for (int j = 0; j < 4; ++j) w[j] /= sum;
    }
  }
  t.identity = in == out && t.outside.empty();
  for (int64_t o = 0; o < out && t.identity; ++o)
    for (int64_t j = 0; j < t.taps && t.identity; ++j) {
      const float w = t.weight[o * t.taps + j];
      t.identity = w == 0.f || (w == 1.f && t.index[o * t.taps + j] == o);
    }
  return t;
}

namespace {

std::vector<AxisTaps> all_taps(const Shape& in, const Shape& out, const std::vector<float>& scales,
                               const ResizeParams& p) {
  if (in.size() != out.size() || scales.size() != in.size())
    invalid("resize needs one scale and one output size per input axis (rank " + std::to_string(in.size()) + ")");
  const bool crop = p.coord == CoordMode::kTfCropAndResize;
  if (crop && p.roi.size() != 2 * in.size())
    invalid("tf_crop_and_resize needs roi with 2 * rank = " + std::to_string(2 * in.size()) + " values, found " +
            std::to_string(p.roi.size()));
  std::vector<AxisTaps> taps;
  for (size_t a = 0; a < in.size(); ++a) {
    if (out[a] < 0) invalid("negative output size " + to_string(out));
    if (in[a] == 0 && out[a] > 0) invalid("cannot resize an empty axis to " + std::to_string(out[a]));
    taps.push_back(crop ? resize_axis_taps(p, in[a], out[a], scales[a], p.roi[a], p.roi[a + in.size()])
                        : resize_axis_taps(p, in[a], out[a], scales[a]));
  }
  return taps;
}

bool any_outside(const std::vector<AxisTaps>& taps) {
  for (const AxisTaps& t : taps)
    if (!t.outside.empty()) return true;
  return false;
}

// Sets every output whose position lies outside the input on some axis to `value`.
void fill_outside(float* y, const Shape& out, const std::vector<AxisTaps>& taps, float value, int threads) {
  const size_t r = out.size();
  const int64_t inner = out[r - 1];
  const int64_t rows = numel(out) / std::max<int64_t>(inner, 1);
  const std::vector<uint8_t>& last = taps[r - 1].outside;
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      bool row_outside = false;
      int64_t rem = row;
      for (size_t a = r - 1; a-- > 0;) {
        const int64_t o = rem % out[a];
        rem /= out[a];
        if (!taps[a].outside.empty() && taps[a].outside[o]) row_outside = true;
      }
      float* yr = y + row * inner;
      for (int64_t o = 0; o < inner; ++o)
        if (row_outside || (!last.empty() && last[o])) yr[o] = value;
    }
  });
}

template <typename T>
void nearest_typed(const T* x, const Shape& in, T* y, const Shape& out, const std::vector<AxisTaps>& taps,
                   int threads) {
  const size_t r = in.size();
  const Shape in_strides = strides_of(in);
  const int64_t inner = r ? out[r - 1] : 1;
  const int64_t rows = numel(out) / std::max<int64_t>(inner, 1);
  if (numel(out) == 0) return;
  // Column offsets of the last axis, precomputed once.
  std::vector<int64_t> col(inner);
  for (int64_t o = 0; o < inner; ++o) col[o] = r ? taps[r - 1].index[o] : 0;
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      int64_t rem = row, src = 0;
      for (size_t a = r - 1; a-- > 0;) {
        const int64_t o = rem % out[a];
        rem /= out[a];
        src += taps[a].index[o] * in_strides[a];
      }
      const T* xr = x + src;
      T* yr = y + row * inner;
      for (int64_t o = 0; o < inner; ++o) yr[o] = xr[col[o]];
    }
  });
}

// Resamples axis `axis` of x (shape `in`) into y with out length `len`.
void resample_axis(const float* x, const Shape& in, int64_t axis, const AxisTaps& t, int64_t len, float* y,
                   int threads) {
  const int64_t outer = numel(in, 0, axis), inner = numel(in, axis + 1, in.size()), n_in = in[axis];
  parallel_for(outer * len, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1)),
               [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r % len, b = r / len;
      float* yr = y + r * inner;
      const float* xb = x + b * n_in * inner;
      const int64_t* idx = &t.index[o * t.taps];
      const float* w = &t.weight[o * t.taps];
      for (int64_t i = 0; i < inner; ++i) yr[i] = 0.f;
      for (int64_t j = 0; j < t.taps; ++j) {
        const float* xr = xb + idx[j] * inner;
        const float wj = w[j];
        for (int64_t i = 0; i < inner; ++i) yr[i] += wj * xr[i];
      }
    }
  });
}

// The common image case: only the last two axes change. Each output row first blends its input
// rows (a contiguous, vectorisable pass over W), then samples that blended row along W.
void resample_last2(const float* x, const Shape& in, const AxisTaps& th, const AxisTaps& tw, int64_t oh_len,
                    int64_t ow_len, float* y, int threads) {
  const size_t r = in.size();
  const int64_t H = in[r - 2], W = in[r - 1];
  const int64_t planes = numel(in, 0, r - 2);
  parallel_for(planes * oh_len, threads, std::max<int64_t>(1, 8192 / std::max<int64_t>(ow_len, 1)),
               [&](int64_t r0, int64_t r1) {
    std::vector<float> blend(W);
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t oh = row % oh_len, p = row / oh_len;
      const float* xp = x + p * H * W;
      float* yr = y + row * ow_len;
      const int64_t* hi = &th.index[oh * th.taps];
      const float* hw = &th.weight[oh * th.taps];
      const float* src = xp + hi[0] * W;
      if (th.taps > 1 || hw[0] != 1.f) {
        for (int64_t w = 0; w < W; ++w) blend[w] = hw[0] * src[w];
        for (int64_t a = 1; a < th.taps; ++a) {
          const float* xr = xp + hi[a] * W;
          const float wa = hw[a];
          for (int64_t w = 0; w < W; ++w) blend[w] += wa * xr[w];
        }
        src = blend.data();
      }
      const int64_t* wi = tw.index.data();
      const float* ww = tw.weight.data();
      if (tw.taps == 2) {
        for (int64_t ow = 0; ow < ow_len; ++ow)
          yr[ow] = ww[2 * ow] * src[wi[2 * ow]] + ww[2 * ow + 1] * src[wi[2 * ow + 1]];
      } else {
        for (int64_t ow = 0; ow < ow_len; ++ow) {
          float acc = 0.f;
          for (int64_t b = 0; b < tw.taps; ++b) acc += ww[ow * tw.taps + b] * src[wi[ow * tw.taps + b]];
          yr[ow] = acc;
        }
      }
    }
  });
}

// Samples x through the taps (none outside the input).
void resample(const float* x, const Shape& in, float* y, const Shape& out, const std::vector<AxisTaps>& taps,
              ResizeMode mode, int threads) {
  if (mode == ResizeMode::kNearest) {
    if (in.empty()) *y = *x;
    else nearest_typed(x, in, y, out, taps, threads);
    return;
  }
  const size_t r = in.size();
  std::vector<size_t> changed;
  for (size_t a = 0; a < r; ++a)
    if (!taps[a].identity) changed.push_back(a);
  if (changed.empty()) {
    std::memcpy(y, x, sizeof(float) * numel(in));
    return;
  }
  if (r >= 2 && changed.front() >= r - 2) {
    // An untouched axis gets one-tap identity sampling, so one pass also serves one-axis changes.
    auto identity = [](int64_t n) {
      AxisTaps t;
      t.taps = 1;
      t.index.resize(n);
      for (int64_t i = 0; i < n; ++i) t.index[i] = i;
      t.weight.assign(n, 1.f);
      t.identity = true;
      return t;
    };
    const AxisTaps th = taps[r - 2].identity ? identity(in[r - 2]) : taps[r - 2];
    const AxisTaps tw = taps[r - 1].identity ? identity(in[r - 1]) : taps[r - 1];
    resample_last2(x, in, th, tw, out[r - 2], out[r - 1], y, threads);
    return;
  }
  // Separable passes, innermost axis first, ping-ponging between two temporaries.
  std::vector<float> buf[2];
  Shape cur = in;
  const float* src = x;
  for (size_t i = changed.size(); i-- > 0;) {
    const size_t a = changed[i];
    Shape next = cur;
    next[a] = out[a];
    float* dst = i == 0 ? y : (buf[i % 2].resize(numel(next)), buf[i % 2].data());
    resample_axis(src, cur, static_cast<int64_t>(a), taps[a], out[a], dst, threads);
    src = dst;
    cur = next;
  }
}

}  // namespace

void resize_nearest(const void* x, const Shape& in, void* y, const Shape& out, const std::vector<float>& scales,
                    const ResizeParams& p, size_t elem_size, int threads) {
  ResizeParams q = p;
  q.mode = ResizeMode::kNearest;
  const auto taps = all_taps(in, out, scales, q);
  if (any_outside(taps)) invalid("tf_crop_and_resize outside the input needs float data for extrapolation_value");
  if (in.empty()) {
    std::memcpy(y, x, elem_size);
    return;
  }
  switch (elem_size) {
    case 1: return nearest_typed(static_cast<const uint8_t*>(x), in, static_cast<uint8_t*>(y), out, taps, threads);
    case 2: return nearest_typed(static_cast<const uint16_t*>(x), in, static_cast<uint16_t*>(y), out, taps, threads);
    case 4: return nearest_typed(static_cast<const uint32_t*>(x), in, static_cast<uint32_t*>(y), out, taps, threads);
    case 8: return nearest_typed(static_cast<const uint64_t*>(x), in, static_cast<uint64_t*>(y), out, taps, threads);
    default: invalid("unsupported element size " + std::to_string(elem_size));
  }
}

void resize(const float* x, const Shape& in, float* y, const Shape& out, const std::vector<float>& scales,
            const ResizeParams& p, int threads) {
  const auto taps = all_taps(in, out, scales, p);
  if (numel(out) == 0) return;
  if (any_outside(taps)) {
    // Sample with the taps clamped into the input, then overwrite the outside positions.
    std::vector<AxisTaps> inside = taps;
    for (AxisTaps& t : inside) t.outside.clear();
    resample(x, in, y, out, inside, p.mode, threads);
    fill_outside(y, out, taps, p.extrapolation_value, threads);
    return;
  }
  resample(x, in, y, out, taps, p.mode, threads);
}

}  // namespace ephost::cpu::math
