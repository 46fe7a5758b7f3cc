// Ops that sample an image at fractional coordinates: GridSample (opset 16 on 4-D inputs, opset 20 on
// any number of spatial axes) and RoiAlign.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// ---- GridSample -------------------------------------------------------------------------------
// Follows PyTorch's grid_sample, which the ONNX op was specified from (and its test values come from).

enum class GridMode { kBilinear, kNearest, kBicubic };
enum class GridPadding { kZeros, kBorder, kReflection };

// Opset 20 renamed bilinear and bicubic to linear and cubic.
bool parse_grid_mode(const std::string& s, int64_t opset, GridMode* m) {
  if (s == (opset >= 20 ? "linear" : "bilinear")) *m = GridMode::kBilinear;
  else if (s == "nearest") *m = GridMode::kNearest;
  else if (s == (opset >= 20 ? "cubic" : "bicubic")) *m = GridMode::kBicubic;
  else return false;
  return true;
}

bool parse_grid_padding(const std::string& s, GridPadding* p) {
  if (s == "zeros") *p = GridPadding::kZeros;
  else if (s == "border") *p = GridPadding::kBorder;
  else if (s == "reflection") *p = GridPadding::kReflection;
  else return false;
  return true;
}

// Reflects x into [twice_low / 2, twice_high / 2] (bounds doubled so that they stay integral).
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  // The parity of the number of flips, in floating point: the count itself may exceed int64.
  const bool even = std::fmod(std::floor(x / span), 2.0) == 0.0;
  return even ? extra + lo : span - extra + lo;
}

class GridSampler {
 public:
  GridSampler(GridMode mode, GridPadding padding, bool align_corners)
      : mode_(mode), padding_(padding), align_(align_corners) {}

  // Normalised [-1, 1] grid coordinate -> pixel coordinate along an axis of `size` pixels.
  double unnormalize(double g, int64_t size) const {
    return align_ ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }

  // Border and reflection padding move the coordinate into the image; zeros padding leaves it.
  double pad(double x, int64_t size) const {
    const double last = static_cast<double>(size - 1);
    if (padding_ == GridPadding::kBorder) return std::clamp(x, 0.0, last);
    if (padding_ == GridPadding::kReflection) {
      x = align_ ? reflect(x, 0, 2 * last) : reflect(x, -1, 2 * static_cast<double>(size) - 1);
      return std::clamp(x, 0.0, last);
    }
    return x;
  }

  // Collects the taps (flat pixel offset, weight) of one sample point; taps outside the image
  // (zeros padding) are left out.
  void taps(double gx, double gy, int64_t H, int64_t W, std::vector<std::pair<int64_t, double>>& out) const {
    out.clear();
    double x = unnormalize(gx, W), y = unnormalize(gy, H);
    if (!std::isfinite(x) || !std::isfinite(y)) return;  // a NaN or infinite grid value samples nothing: 0
    if (padding_ == GridPadding::kZeros) {
      // Far outside, every tap is outside: clamping there changes no result and keeps the casts defined.
      x = std::clamp(x, -8.0, static_cast<double>(W) + 8.0);
      y = std::clamp(y, -8.0, static_cast<double>(H) + 8.0);
    }
    auto add = [&](int64_t iy, int64_t ix, double w) {
      if (iy >= 0 && iy < H && ix >= 0 && ix < W && w != 0.0) out.emplace_back(iy * W + ix, w);
    };
    if (mode_ == GridMode::kBicubic) {
      // Bicubic pads each of the 4 x 4 taps, not the sample point.
      const double x0 = std::floor(x), y0 = std::floor(y);
      double cx[4], cy[4];
      cubic(x - x0, cx);
      cubic(y - y0, cy);
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i) {
          const int64_t ty = static_cast<int64_t>(pad(y0 - 1 + j, H)), tx = static_cast<int64_t>(pad(x0 - 1 + i, W));
          add(ty, tx, cy[j] * cx[i]);
        }
      return;
    }
    x = pad(x, W);
    y = pad(y, H);
    if (mode_ == GridMode::kNearest) {
      add(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)), 1.0);
      return;
    }
    const double x0 = std::floor(x), y0 = std::floor(y), lx = x - x0, ly = y - y0;
    const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
    add(iy, ix, (1 - ly) * (1 - lx));
    add(iy, ix + 1, (1 - ly) * lx);
    add(iy + 1, ix, ly * (1 - lx));
    add(iy + 1, ix + 1, ly * lx);
  }

  // The taps of one sample point of an N-d image (opset 20): g holds one coordinate per spatial axis,
  // the last axis' first (x, y, z, ...), dims the spatial sizes (D1, ..., Dr). Each axis contributes 1
  // (nearest), 2 (linear) or 4 (cubic, each tap padded) positions; taps outside are left out.
  void taps_nd(const double* g, const int64_t* dims, size_t r, std::vector<std::pair<int64_t, double>>& out) const {
    out.clear();
    std::vector<std::array<std::pair<int64_t, double>, 4>> axis(r);
    std::vector<int> count(r);
    for (size_t a = 0; a < r; ++a) {
      const int64_t size = dims[a];
      double x = unnormalize(g[r - 1 - a], size);
      if (!std::isfinite(x)) return;
      if (padding_ == GridPadding::kZeros) x = std::clamp(x, -8.0, static_cast<double>(size) + 8.0);
      auto& taps_a = axis[a];
      if (mode_ == GridMode::kBicubic) {
        const double x0 = std::floor(x);
        double c[4];
        cubic(x - x0, c);
        for (int i = 0; i < 4; ++i) taps_a[i] = {static_cast<int64_t>(pad(x0 - 1 + i, size)), c[i]};
        count[a] = 4;
        continue;
      }
      x = pad(x, size);
      if (mode_ == GridMode::kNearest) {
        taps_a[0] = {static_cast<int64_t>(std::nearbyint(x)), 1.0};
        count[a] = 1;
        continue;
      }
      const double x0 = std::floor(x), l = x - x0;
      taps_a[0] = {static_cast<int64_t>(x0), 1 - l};
      taps_a[1] = {static_cast<int64_t>(x0) + 1, l};
      count[a] = 2;
    }
    std::vector<int> at(r, 0);
    while (true) {
      double w = 1;
      int64_t offset = 0;
      bool inside = true;
      for (size_t a = 0; a < r; ++a) {
        const auto& [i, wi] = axis[a][at[a]];
        if (i < 0 || i >= dims[a]) inside = false;
        w *= wi;
        offset = offset * dims[a] + i;
      }
      if (inside && w != 0.0) out.emplace_back(offset, w);
      size_t a = r;
      while (a-- > 0) {
        if (++at[a] < count[a]) break;
        at[a] = 0;
      }
      if (a == static_cast<size_t>(-1)) break;
    }
  }

 private:
  // Keys' cubic convolution weights with A = -0.75 for the taps at -1, 0, 1, 2 around t in [0, 1).
  static void cubic(double t, double c[4]) {
    constexpr double A = -0.75;
    auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    c[0] = far(t + 1);
    c[1] = near(t);
    c[2] = near(1 - t);
    c[3] = far(2 - t);
  }

  GridMode mode_;
  GridPadding padding_;
  bool align_;
};

class GridSampleKernel : public CpuKernel {
 public:
  GridSampleKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), sampler_(parse(node)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), grid = required(ctx, 1, "grid");
    if (grid.elem_type() != x.elem_type()) fail("grid must have X's type");
    const Shape xs = x.shape(), gs = grid.shape();
    if (opset() >= 20 && xs.size() != 4) return run_nd(ctx, x, grid, threads);
    if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
      fail("X must be [N, C, H, W] and grid [N, H_out, W_out, 2], found " + math::to_string(xs) + " and " +
           math::to_string(gs));
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], HO = gs[1], WO = gs[2];
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      const T* pg = grid.data<T>();
      T* y = ctx.output<T>(0, {N, C, HO, WO});
      math::parallel_for(N * HO, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(WO * C, 1)),
                         [&](int64_t r0, int64_t r1) {
        std::vector<std::pair<int64_t, double>> taps;
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t n = r / HO, ho = r % HO;
          for (int64_t wo = 0; wo < WO; ++wo) {
            const T* g = pg + ((n * HO + ho) * WO + wo) * 2;
            sampler_.taps(static_cast<double>(g[0]), static_cast<double>(g[1]), H, W, taps);
            for (int64_t c = 0; c < C; ++c) {
              const T* plane = px + (n * C + c) * H * W;
              double acc = 0;
              for (const auto& [off, w] : taps) acc += w * static_cast<double>(plane[off]);
              y[((n * C + c) * HO + ho) * WO + wo] = static_cast<T>(acc);
            }
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  // Opset 20's N-d form: X [N, C, D1, ..., Dr], grid [N, D1_out, ..., Dr_out, r].
  void run_nd(sdk::KernelContext& ctx, const sdk::Tensor& x, const sdk::Tensor& grid, int threads) {
    const Shape xs = x.shape(), gs = grid.shape();
    const size_t rank = xs.size();
    if (rank < 3 || gs.size() != rank || gs[0] != xs[0] || gs.back() != static_cast<int64_t>(rank - 2))
      fail("X must be [N, C, D1, ..., Dr] and grid [N, D1_out, ..., Dr_out, r] of X's rank, found " +
           math::to_string(xs) + " and " + math::to_string(gs));
    const size_t r = rank - 2;
    const int64_t N = xs[0], C = xs[1];
    const Shape dims(xs.begin() + 2, xs.end());
    int64_t in_points = 1, out_points = 1;
    for (int64_t d : dims) in_points *= d;
    for (size_t i = 1; i + 1 < gs.size(); ++i) out_points *= gs[i];
    Shape ys = {N, C};
    ys.insert(ys.end(), gs.begin() + 1, gs.end() - 1);
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      const T* pg = grid.data<T>();
      T* y = ctx.output<T>(0, ys);
      math::parallel_for(N * out_points, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(C, 1)),
                         [&](int64_t p0, int64_t p1) {
        std::vector<std::pair<int64_t, double>> taps;
        std::vector<double> g(r);
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t n = p / out_points, o = p % out_points;
          for (size_t a = 0; a < r; ++a) g[a] = static_cast<double>(pg[p * static_cast<int64_t>(r) + static_cast<int64_t>(a)]);
          sampler_.taps_nd(g.data(), dims.data(), r, taps);
          for (int64_t c = 0; c < C; ++c) {
            const T* volume = px + (n * C + c) * in_points;
            double acc = 0;
            for (const auto& [off, w] : taps) acc += w * static_cast<double>(volume[off]);
            y[(n * C + c) * out_points + o] = static_cast<T>(acc);
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

  static GridSampler parse(const sdk::Node& node) {
    GridMode mode;
    GridPadding padding;
    const std::string m = node.attr_string("mode", node.opset() >= 20 ? "linear" : "bilinear"),
                      p = node.attr_string("padding_mode", "zeros");
    if (!parse_grid_mode(m, node.opset(), &mode)) fail_node(node, "unsupported mode '" + m + "'");
    if (!parse_grid_padding(p, &padding)) fail_node(node, "unsupported padding_mode '" + p + "'");
    return GridSampler(mode, padding, node.attr_int("align_corners", 0) != 0);
  }

  GridSampler sampler_;
};

bool grid_sample_supported(const sdk::Node& n) {
  GridMode m;
  GridPadding p;
  // Opset 20 allows any number of spatial axes (at least one).
  if (n.opset() >= 20 && n.has_input(0) && n.input(0).rank() >= 0 && n.input(0).rank() < 3) return false;
  return parse_grid_mode(n.attr_string("mode", n.opset() >= 20 ? "linear" : "bilinear"), n.opset(), &m) &&
         parse_grid_padding(n.attr_string("padding_mode", "zeros"), &p) &&
         input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE});
}

// ---- RoiAlign ---------------------------------------------------------------------------------
// As ONNX Runtime computes it (the reference the op's tests follow): each output bin averages (or
// takes the max of) a grid of bilinear samples.

class RoiAlignKernel : public CpuKernel {
 public:
  RoiAlignKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c),
        out_h_(node.attr_int("output_height", 1)),
        out_w_(node.attr_int("output_width", 1)),
        sampling_ratio_(node.attr_int("sampling_ratio", 0)),
        spatial_scale_(node.attr_float("spatial_scale", 1.f)) {
    if (out_h_ < 1 || out_w_ < 1 || sampling_ratio_ < 0)
      fail_node(node, "output_height and output_width must be positive and sampling_ratio not negative, found " +
                          std::to_string(out_h_) + ", " + std::to_string(out_w_) + " and " + std::to_string(sampling_ratio_));
    const std::string mode = node.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") fail_node(node, "mode must be avg or max, found '" + mode + "'");
    max_ = mode == "max";
    // Opset 10 had no attribute and behaved as output_half_pixel.
    const std::string coord =
        node.attr_string("coordinate_transformation_mode", node.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
      fail_node(node, "unsupported coordinate_transformation_mode '" + coord + "'");
    half_pixel_ = coord == "half_pixel";
    if (out_h_ < 1 || out_w_ < 1 || sampling_ratio_ < 0)
      fail_node(node, "output_height and output_width must be positive and sampling_ratio non-negative");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), rois = required(ctx, 1, "rois"), bi = required(ctx, 2, "batch_indices");
    if (rois.elem_type() != x.elem_type()) fail("rois must have X's type");
    const Shape xs = x.shape(), rs = rois.shape();
    if (xs.size() != 4) fail("X must be [N, C, H, W], found " + math::to_string(xs));
    if (rs.size() != 2 || rs[1] != 4) fail("rois must be [num_rois, 4], found " + math::to_string(rs));
    const std::vector<int64_t> batch = ints_of(bi, "batch_indices");
    const int64_t R = rs[0], C = xs[1], H = xs[2], W = xs[3];
    if (static_cast<int64_t>(batch.size()) != R)
      fail("batch_indices has " + std::to_string(batch.size()) + " values for " + std::to_string(R) + " rois");
    for (int64_t b : batch)
      if (b < 0 || b >= xs[0]) fail("batch index " + std::to_string(b) + " is out of range for N = " + std::to_string(xs[0]));
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      const T* pr = rois.data<T>();
      T* y = ctx.output<T>(0, {R, C, out_h_, out_w_});
      math::parallel_for(R, threads, 1, [&](int64_t r0, int64_t r1) {
        std::vector<Sample> samples;
        for (int64_t r = r0; r < r1; ++r) {
          int64_t grid_h = 0, grid_w = 0;
          plan_samples(pr + r * 4, H, W, samples, &grid_h, &grid_w);
          const int64_t per_bin = grid_h * grid_w;
          const double count = static_cast<double>(std::max<int64_t>(per_bin, 1));
          for (int64_t c = 0; c < C; ++c) {
            const T* plane = px + (batch[r] * C + c) * H * W;
            T* out = y + (r * C + c) * out_h_ * out_w_;
            for (int64_t bin = 0; bin < out_h_ * out_w_; ++bin) {
              double acc = 0;
              bool first = true;
              for (int64_t s = 0; s < per_bin; ++s) {
                const Sample& p = samples[bin * per_bin + s];
                if (max_) {
                  // The max of the four weighted taps, as ONNX Runtime defines max mode.
                  double m = p.w[0] * static_cast<double>(plane[p.at[0]]);
                  for (int k = 1; k < 4; ++k) m = std::max(m, p.w[k] * static_cast<double>(plane[p.at[k]]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                } else {
                  for (int k = 0; k < 4; ++k) acc += p.w[k] * static_cast<double>(plane[p.at[k]]);
                }
              }
              out[bin] = static_cast<T>(max_ ? acc : acc / count);
            }
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  struct Sample {
    int64_t at[4];
    double w[4];
  };

  // The bilinear samples of every bin of one roi, bin-major; shared by all channels.
  template <typename T>
  void plan_samples(const T* roi, int64_t H, int64_t W, std::vector<Sample>& samples, int64_t* grid_h,
                    int64_t* grid_w) const {
    const double offset = half_pixel_ ? 0.5 : 0.0, scale = spatial_scale_;
    const double x0 = static_cast<double>(roi[0]) * scale - offset, y0 = static_cast<double>(roi[1]) * scale - offset;
    double rw = static_cast<double>(roi[2]) * scale - offset - x0, rh = static_cast<double>(roi[3]) * scale - offset - y0;
    if (!half_pixel_) {  // output_half_pixel forces malformed rois to at least 1 x 1
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bin_h = rh / static_cast<double>(out_h_), bin_w = rw / static_cast<double>(out_w_);
    constexpr int64_t kMaxSamplesPerBin = int64_t{1} << 20;
    *grid_h = sampling_ratio_ > 0 ? sampling_ratio_
                                  : math::clamp_to_int64(std::ceil(rh / static_cast<double>(out_h_)), 0, kMaxSamplesPerBin + 1);
    *grid_w = sampling_ratio_ > 0 ? sampling_ratio_
                                  : math::clamp_to_int64(std::ceil(rw / static_cast<double>(out_w_)), 0, kMaxSamplesPerBin + 1);
    // Samples are planned per roi (64 bytes each); bound them before a roi asks for terabytes or years.
    constexpr int64_t kMaxSamplesPerRoi = int64_t{1} << 22;
    const int64_t per_bin_limit =
        out_h_ > kMaxSamplesPerRoi / out_w_ ? 0 : std::min(kMaxSamplesPerBin, kMaxSamplesPerRoi / (out_h_ * out_w_));
    if (*grid_h > per_bin_limit / std::max<int64_t>(*grid_w, 1))
      fail("a roi of " + std::to_string(rw) + " x " + std::to_string(rh) + " pixels takes a sampling grid of " +
           std::to_string(*grid_w) + " x " + std::to_string(*grid_h) + " in each of " + std::to_string(out_h_) + " x " +
           std::to_string(out_w_) + " bins, more than the " + std::to_string(kMaxSamplesPerRoi) + " samples a roi may take; " +
           (sampling_ratio_ > 0 ? "lower sampling_ratio" : "set sampling_ratio"));
    samples.clear();
    for (int64_t ph = 0; ph < out_h_; ++ph)
      for (int64_t pw = 0; pw < out_w_; ++pw)
        for (int64_t iy = 0; iy < *grid_h; ++iy) {
          const double yy = y0 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(*grid_h);
          for (int64_t ix = 0; ix < *grid_w; ++ix) {
            const double xx = x0 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(*grid_w);
            samples.push_back(bilinear(yy, xx, H, W));
          }
        }
  }

  static Sample bilinear(double y, double x, int64_t H, int64_t W) {
    Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (!(y >= -1.0 && y <= static_cast<double>(H) && x >= -1.0 && x <= static_cast<double>(W)))
      return s;  // outside, or NaN: contributes 0
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
    if (y_lo >= H - 1) {
      y_lo = y_hi = H - 1;
      y = static_cast<double>(y_lo);
    } else {
      y_hi = y_lo + 1;
    }
    if (x_lo >= W - 1) {
      x_lo = x_hi = W - 1;
      x = static_cast<double>(x_lo);
    } else {
      x_hi = x_lo + 1;
    }
    const double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo), hy = 1 - ly, hx = 1 - lx;
    s.at[0] = y_lo * W + x_lo;
    s.at[1] = y_lo * W + x_hi;
    s.at[2] = y_hi * W + x_lo;
    s.at[3] = y_hi * W + x_hi;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
  }

  int64_t out_h_, out_w_, sampling_ratio_;
  double spatial_scale_;
  bool max_ = false, half_pixel_ = true;
};

bool roi_align_supported(const sdk::Node& n) {
  const std::string mode = n.attr_string("mode", "avg");
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  return (mode == "avg" || mode == "max") && (coord == "half_pixel" || coord == "output_half_pixel") &&
         input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE});
}

}  // namespace

void register_sampling_kernels(KernelRegistry& r) {
  // Opset 20 generalised GridSample to N-d and renamed its modes.
  r.add("GridSample", 16, 20, grid_sample_supported, make_factory<GridSampleKernel>());
  r.add("RoiAlign", 10, 17, roi_align_supported, make_factory<RoiAlignKernel>());
}

}  // namespace ephost::cpu
