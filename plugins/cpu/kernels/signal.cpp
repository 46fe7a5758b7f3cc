// Signal processing (opset 17): DFT, STFT, the Hann/Hamming/Blackman windows and MelWeightMatrix.
// Transforms run through math::FftPlan (O(n log n) for every length) in double precision.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "kernel_registry.h"
#include "math/fft.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

using math::Complex;
constexpr double kPi = 3.14159265358979323846;

// The plan of the most recent length, kept so that repeated runs do not rebuild twiddles.
class PlanCache {
 public:
  std::shared_ptr<const math::FftPlan> get(int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!plan_ || plan_->size() != n) plan_ = std::make_shared<const math::FftPlan>(n);
    return plan_;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const math::FftPlan> plan_;
};

// Lines below this many complex values are batched several to a thread.
constexpr int64_t kFftGrain = 1 << 12;

class DftKernel : public CpuKernel {
 public:
  DftKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c),
        // Opset 20 moved axis to an optional input, whose default is -2 (the axis before the complex one).
        axis_(node.opset() >= 20 ? -2 : node.attr_int("axis", 1)),
        inverse_(node.attr_int("inverse", 0) != 0),
        onesided_(node.attr_int("onesided", 0) != 0) {
    if (inverse_ && onesided_) fail_node(node, "onesided output is only defined for the forward transform");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    expect_type(x, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}, "input");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    if (r < 2 || (xs.back() != 1 && xs.back() != 2))
      fail("input must have rank >= 2 and a last dimension of 1 (real) or 2 (complex), found shape " +
           math::to_string(xs));
    int64_t axis_value = axis_;
    if (opset() >= 20) {
      const sdk::Tensor a = ctx.input(2);
      if (a.present()) {
        if (a.size() != 1) fail("axis must be a scalar, found shape " + math::to_string(a.shape()));
        axis_value = int_scalar_of(a, "axis");
      }
    }
    if (axis_value < -r || axis_value >= r) fail("axis " + std::to_string(axis_value) + " is out of range for rank " + std::to_string(r));
    const int64_t axis = math::normalize_axis(axis_value, r);
    if (axis == r - 1) fail("axis must not be the last (real/imaginary) dimension");
    const int64_t channels = xs.back(), n_in = xs[axis];
    if (onesided_ && channels == 2) fail("onesided output needs a real input");
    int64_t n = n_in;
    const sdk::Tensor len = ctx.input(1);
    if (len.present() && len.size() > 0) {
      n = int_scalar_of(len, "dft_length");
      if (n < 1) fail("dft_length must be positive, found " + std::to_string(n));
    }
    const int64_t n_out = onesided_ ? n / 2 + 1 : n;
    Shape ys = xs;
    ys[axis] = n_out;
    ys.back() = 2;
    const int64_t outer = math::numel(xs, 0, axis), inner = math::numel(xs, axis + 1, r - 1);
    // The output before the plan: its allocation refuses a dft_length no tensor holds, and an empty
    // output needs no plan (whose tables are O(dft_length)).
    void* out = ctx.output_raw(0, x.elem_type(), ys);
    if (math::numel(ys) == 0) return;
    const auto plan = plans_.get(n);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = static_cast<T*>(out);
      const int64_t lines = outer * inner;
      math::parallel_for(lines, threads, std::max<int64_t>(1, kFftGrain / n), [&](int64_t l0, int64_t l1) {
        std::vector<Complex> line(n), scratch;
        for (int64_t l = l0; l < l1; ++l) {
          const int64_t o = l / inner, i = l % inner;
          const int64_t copy = std::min(n, n_in);
          for (int64_t j = 0; j < copy; ++j) {
            const T* v = px + ((o * n_in + j) * inner + i) * channels;
            line[j] = Complex(static_cast<double>(v[0]), channels == 2 ? static_cast<double>(v[1]) : 0.0);
          }
          std::fill(line.begin() + copy, line.end(), Complex(0, 0));  // zero-padding up to dft_length
          plan->run(line.data(), inverse_, scratch);
          for (int64_t k = 0; k < n_out; ++k) {
            T* out = py + ((o * n_out + k) * inner + i) * 2;
            out[0] = static_cast<T>(line[k].real() * scale);
            out[1] = static_cast<T>(line[k].imag() * scale);
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
  bool inverse_, onesided_;
  PlanCache plans_;
};

class StftKernel : public CpuKernel {
 public:
  StftKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), onesided_(node.attr_int("onesided", 1) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "signal"), step_t = required(ctx, 1, "frame_step");
    const sdk::Tensor window = ctx.input(2), length_t = ctx.input(3);
    expect_type(x, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}, "signal");
    const Shape xs = x.shape();
    if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2))
      fail("signal must have shape [batch, length, 1 or 2], found " + math::to_string(xs));
    const int64_t batch = xs[0], length = xs[1], channels = xs[2];
    const int64_t step = int_scalar_of(step_t, "frame_step");
    if (step < 1) fail("frame_step must be positive, found " + std::to_string(step));
    int64_t frame = -1;
    if (window.present()) {
      if (window.elem_type() != x.elem_type()) fail("window must have the signal's type");
      if (window.rank() != 1) fail("window must be 1-D, found shape " + math::to_string(window.shape()));
      frame = window.dim(0);
    }
    if (length_t.present()) {
      const int64_t given = int_scalar_of(length_t, "frame_length");
      if (frame >= 0 && given != frame)
        fail("frame_length " + std::to_string(given) + " differs from the window length " + std::to_string(frame));
      frame = given;
    }
    if (frame < 0) fail("one of window and frame_length must be given");
    if (frame < 1 || frame > length)
      fail("frame length " + std::to_string(frame) + " must be in [1, signal length " + std::to_string(length) + "]");
    if (onesided_ && channels == 2) fail("onesided output needs a real signal");
    const int64_t frames = (length - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const auto plan = plans_.get(frame);
    dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      const T* pw = window.present() ? window.data<T>() : nullptr;
      T* py = ctx.output<T>(0, {batch, frames, bins, 2});
      math::parallel_for(batch * frames, threads, std::max<int64_t>(1, kFftGrain / frame), [&](int64_t l0, int64_t l1) {
        std::vector<Complex> line(frame), scratch;
        for (int64_t l = l0; l < l1; ++l) {
          const int64_t b = l / frames, f = l % frames;
          const T* v = px + (b * length + f * step) * channels;
          for (int64_t j = 0; j < frame; ++j) {
            const double w = pw ? static_cast<double>(pw[j]) : 1.0;
            line[j] = Complex(static_cast<double>(v[j * channels]) * w,
                              channels == 2 ? static_cast<double>(v[j * channels + 1]) * w : 0.0);
          }
          plan->run(line.data(), false, scratch);
          T* out = py + l * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            out[2 * k] = static_cast<T>(line[k].real());
            out[2 * k + 1] = static_cast<T>(line[k].imag());
          }
        }
      });
    });
  }

 private:
  bool onesided_;
  PlanCache plans_;
};

// Element types the window and mel ops may produce (output_datatype).
using GeneratedTypes = NumericTypes;

enum class Window { kHann, kHamming, kBlackman };

// Generalised cosine windows: w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N).
class WindowKernel : public CpuKernel {
 public:
  WindowKernel(const sdk::Node& node, const KernelConfig& c, Window kind)
      : CpuKernel(node, c),
        kind_(kind),
        periodic_(node.attr_int("periodic", 1) != 0),
        out_type_(static_cast<int32_t>(node.attr_int("output_datatype", EPHOST_ELEMENT_FLOAT))) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const int64_t size = int_scalar_of(required(ctx, 0, "size"), "size");
    if (size < 0) fail("size must not be negative, found " + std::to_string(size));
    double a0 = 0.5, a1 = 0.5, a2 = 0.0;
    if (kind_ == Window::kHamming) {
      a0 = 25.0 / 46.0;
      a1 = 21.0 / 46.0;
    } else if (kind_ == Window::kBlackman) {
      a0 = 0.42;
      a2 = 0.08;
    }
    // A symmetric window spans size - 1 intervals; one of length 1 is its peak alone.
    const int64_t denom = periodic_ ? size : size - 1;
    void* out = ctx.output_raw(0, out_type_, {size});
    const bool ok = dispatch(GeneratedTypes{}, out_type_, [&](auto tag) {
      using T = decltype(tag);
      T* y = static_cast<T*>(out);
      for (int64_t k = 0; k < size; ++k) {
        const double t = denom > 0 ? 2.0 * kPi * static_cast<double>(k) / static_cast<double>(denom) : 0.0;
        const double v = denom > 0 ? a0 - a1 * std::cos(t) + a2 * std::cos(2.0 * t) : 1.0;
        y[k] = static_cast<T>(v);
      }
    });
    if (!ok) fail(std::string("unsupported output_datatype ") + type_name(out_type_));
    (void)threads;
  }

 private:
  Window kind_;
  bool periodic_;
  int32_t out_type_;
};

// Triangular filters on the mel scale over the bins of a one-sided spectrum, with the edges rounded
// to bins exactly as the ONNX reference does.
class MelWeightMatrixKernel : public CpuKernel {
 public:
  MelWeightMatrixKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), out_type_(static_cast<int32_t>(node.attr_int("output_datatype", EPHOST_ELEMENT_FLOAT))) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const int64_t mel_bins = int_scalar_of(required(ctx, 0, "num_mel_bins"), "num_mel_bins");
    const int64_t dft_length = int_scalar_of(required(ctx, 1, "dft_length"), "dft_length");
    const int64_t rate = int_scalar_of(required(ctx, 2, "sample_rate"), "sample_rate");
    const double lower = scalar_of(required(ctx, 3, "lower_edge_hertz"), "lower_edge_hertz");
    const double upper = scalar_of(required(ctx, 4, "upper_edge_hertz"), "upper_edge_hertz");
    if (mel_bins < 1 || dft_length < 1 || rate < 1)
      fail("num_mel_bins, dft_length and sample_rate must be positive");
    if (!(lower >= 0 && lower < upper)) fail("lower_edge_hertz must be in [0, upper_edge_hertz)");
    const int64_t spectrum_bins = dft_length / 2 + 1;
    // The output first: its allocation refuses sizes no tensor holds, before mel_bins + 2 could overflow.
    void* out = ctx.output_raw(0, out_type_, {spectrum_bins, mel_bins});
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * mel_step + low_mel) / 2595.0) - 1.0);
      edges[i] = math::clamp_to_int64(std::floor((static_cast<double>(dft_length) + 1.0) * hz / static_cast<double>(rate)), -1,
                                      spectrum_bins);  // an infinite upper edge is beyond the spectrum too
      if (edges[i] < 0 || edges[i] >= spectrum_bins)
        fail("upper_edge_hertz " + std::to_string(upper) + " lies beyond the spectrum's highest bin (sample_rate / 2)");
    }
    std::vector<double> w(static_cast<size_t>(spectrum_bins * mel_bins), 0.0);
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = edges[i], center = edges[i + 1], hi = edges[i + 2];
      if (center == lo) {
        w[center * mel_bins + i] = 1.0;
      } else {
        for (int64_t j = lo; j <= center; ++j)
          w[j * mel_bins + i] = static_cast<double>(j - lo) / static_cast<double>(center - lo);
      }
      for (int64_t j = center; j < hi; ++j)
        w[j * mel_bins + i] = static_cast<double>(hi - j) / static_cast<double>(hi - center);
    }
    const bool ok = dispatch(GeneratedTypes{}, out_type_, [&](auto tag) {
      using T = decltype(tag);
      T* y = static_cast<T*>(out);
      for (size_t k = 0; k < w.size(); ++k) y[k] = static_cast<T>(w[k]);
    });
    if (!ok) fail(std::string("unsupported output_datatype ") + type_name(out_type_));
    (void)threads;
  }

 private:
  int32_t out_type_;
};

bool generated_type_supported(const sdk::Node& n) {
  return type_in(static_cast<int32_t>(n.attr_int("output_datatype", EPHOST_ELEMENT_FLOAT)), GeneratedTypes::ids());
}

}  // namespace

void register_signal_kernels(KernelRegistry& r) {
  const std::initializer_list<int32_t> real = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE};
  // Opset 20 moved DFT's axis to an input (default -2).
  r.add("DFT", 17, 20, [real_input = inputs_of(real)](const sdk::Node& n) {
    return real_input(n) && input_type_in(n, 2, {EPHOST_ELEMENT_INT64});
  }, make_factory<DftKernel>());
  r.add("STFT", 17, 17, inputs_of(real, {0, 2}), make_factory<StftKernel>());
  const std::pair<const char*, Window> windows[] = {
      {"HannWindow", Window::kHann}, {"HammingWindow", Window::kHamming}, {"BlackmanWindow", Window::kBlackman}};
  for (const auto& [op, kind] : windows)
    r.add(op, 17, 17, generated_type_supported,
          [kind = kind](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<WindowKernel>(n, c, kind);
          });
  r.add("MelWeightMatrix", 17, 17, generated_type_supported, make_factory<MelWeightMatrixKernel>());
}

}  // namespace ephost::cpu
