// BatchNormalization in training mode (opset 14+, training_mode = 1): normalise with the batch's own
// per-channel mean and (population) variance, and return the running statistics updated with them:
//   running = input * momentum + current * (1 - momentum).
// Inference mode is the BatchNormKernel of normalization.cpp.
#include <cmath>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

class BatchNormTrainingKernel : public CpuKernel {
 public:
  BatchNormTrainingKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), epsilon_(node.attr_float("epsilon", 1e-5f)), momentum_(node.attr_float("momentum", 0.9f)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}, "X");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("X must have rank >= 2 (N, C, ...), found " + math::to_string(xs));
    const int64_t C = xs[1];
    sdk::Tensor p[4];
    const char* names[4] = {"scale", "B", "input_mean", "input_var"};
    for (size_t i = 0; i < 4; ++i) {
      p[i] = required(ctx, i + 1, names[i]);
      if (p[i].elem_type() != x.elem_type()) fail(std::string(names[i]) + " must have X's type");
      if (p[i].rank() != 1 || p[i].dim(0) != C)
        fail(std::string(names[i]) + " must have shape [" + std::to_string(C) + "], found " + math::to_string(p[i].shape()));
    }
    dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      compute<T>(ctx, x, p[0].data<T>(), p[1].data<T>(), p[2].data<T>(), p[3].data<T>(), threads);
    });
  }

 private:
  template <typename T>
  void compute(sdk::KernelContext& ctx, const sdk::Tensor& x, const T* scale, const T* bias, const T* in_mean,
               const T* in_var, int threads) {
    const Shape xs = x.shape();
    const int64_t N = xs[0], C = xs[1], size = math::numel(xs, 2, xs.size());
    const T* px = x.data<T>();
    // Per-channel mean, then variance around it (two passes, in double: no cancellation).
    std::vector<double> mean(C), var(C);
    math::parallel_for(C, threads, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double s = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T* plane = px + (n * C + c) * size;
          for (int64_t i = 0; i < size; ++i) s += plane[i];
        }
        const double count = static_cast<double>(N * size);
        const double m = count > 0 ? s / count : 0.0;
        double q = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T* plane = px + (n * C + c) * size;
          for (int64_t i = 0; i < size; ++i) q += (plane[i] - m) * (plane[i] - m);
        }
        mean[c] = m;
        var[c] = count > 0 ? q / count : 0.0;
      }
    });

    // y = x * a[c] + b[c] with a = scale / sqrt(var + epsilon), b = bias - mean * a.
    std::vector<T> a(C), b(C);
    for (int64_t c = 0; c < C; ++c) {
      const double inv_std = 1.0 / std::sqrt(var[c] + static_cast<double>(epsilon_));
      a[c] = static_cast<T>(scale[c] * inv_std);
      b[c] = static_cast<T>(bias[c] - mean[c] * scale[c] * inv_std);
    }
    T* y = ctx.output<T>(0, xs);
    math::parallel_for(N * C, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(size, 1)),
                       [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T av = a[p % C], bv = b[p % C];
        const T* xp = px + p * size;
        T* yp = y + p * size;
        for (int64_t i = 0; i < size; ++i) yp[i] = xp[i] * av + bv;
      }
    });

    const double mo = momentum_;
    if (output_wanted(1)) {
      T* running_mean = ctx.output<T>(1, {C});
      for (int64_t c = 0; c < C; ++c) running_mean[c] = static_cast<T>(in_mean[c] * mo + mean[c] * (1.0 - mo));
    }
    if (output_wanted(2)) {
      T* running_var = ctx.output<T>(2, {C});
      for (int64_t c = 0; c < C; ++c) running_var[c] = static_cast<T>(in_var[c] * mo + var[c] * (1.0 - mo));
    }
  }

  float epsilon_, momentum_;
};

bool training_supported(const sdk::Node& n) {
  if (n.attr_int("training_mode", 0) == 0) return false;
  for (size_t i = 0; i < 5; ++i)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE})) return false;
  return true;
}

}  // namespace

void register_batchnorm_training_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", 14, 17, training_supported, make_factory<BatchNormTrainingKernel>());
}

}  // namespace ephost::cpu
