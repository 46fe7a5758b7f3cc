// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12/13, float and double).
//
// Both read, for every sample position of an [N, C, d...] tensor of log-probabilities, the entry of
// the target class, negate it and weight it by the class weight (1 without weights). Positions whose
// target equals ignore_index weigh 0. The per-position losses are returned as they are ('none', shape
// [N, d...]), summed ('sum') or divided by the total weight ('mean': the weighted mean, so ignored
// positions count for nothing). SoftmaxCrossEntropyLoss first turns scores into log-probabilities
// along C (returned as the optional second output).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"
#include "math/softmax.h"

namespace ephost::cpu {

namespace {

enum class Reduction { kNone, kSum, kMean };

// Log-softmax along the middle dim of x viewed as [outer, n, inner].
void log_softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, int threads) {
  math::softmax(x, y, outer, n, inner, true, threads);
}

void log_softmax(const double* x, double* y, int64_t outer, int64_t n, int64_t inner, int threads) {
  // All `inner` lanes of one outer block at once, so that reads stay contiguous.
  math::parallel_for(outer, threads, 1, [&](int64_t r0, int64_t r1) {
    std::vector<double> m(inner), s(inner);
    for (int64_t r = r0; r < r1; ++r) {
      const double* xb = x + r * n * inner;
      double* yb = y + r * n * inner;
      std::fill(m.begin(), m.end(), -std::numeric_limits<double>::infinity());
      std::fill(s.begin(), s.end(), 0.0);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) m[i] = std::max(m[i], xb[j * inner + i]);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) s[i] += std::exp(xb[j * inner + i] - m[i]);
      for (int64_t i = 0; i < inner; ++i) m[i] += std::log(s[i]);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) yb[j * inner + i] = xb[j * inner + i] - m[i];
    }
  });
}

class LossKernel : public CpuKernel {
 public:
  LossKernel(const sdk::Node& node, const KernelConfig& c, bool softmax)
      : CpuKernel(node, c), softmax_(softmax), has_ignore_(node.has_attr("ignore_index")),
        ignore_index_(node.attr_int("ignore_index", 0)) {
    const std::string r = node.attr_string("reduction", "mean");
    if (r == "none") reduction_ = Reduction::kNone;
    else if (r == "sum") reduction_ = Reduction::kSum;
    else if (r == "mean") reduction_ = Reduction::kMean;
    else fail_node(node, "reduction must be 'none', 'sum' or 'mean', found '" + r + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, softmax_ ? "scores" : "input");
    const sdk::Tensor target = required(ctx, 1, softmax_ ? "labels" : "target");
    const sdk::Tensor weight = ctx.input(2);
    expect_type(x, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}, "input");
    expect_type(target, {EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64}, "target");
    const Shape xs = x.shape(), ts = target.shape();
    if (xs.size() < 2) fail("input must have shape [N, C, d...], found " + math::to_string(xs));
    Shape want = xs;
    want.erase(want.begin() + 1);
    if (ts != want)
      fail("target must have shape " + math::to_string(want) + " for input " + math::to_string(xs) + ", found " +
           math::to_string(ts));
    if (weight.present()) {
      if (weight.elem_type() != x.elem_type()) fail("weight must have the input's type");
      if (weight.rank() != 1 || weight.dim(0) != xs[1])
        fail("weight must have shape [" + std::to_string(xs[1]) + "], found " + math::to_string(weight.shape()));
    }
    dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      if (target.elem_type() == EPHOST_ELEMENT_INT64) compute<T>(ctx, x, target.data<int64_t>(), weight, threads);
      else compute<T>(ctx, x, target.data<int32_t>(), weight, threads);
    });
  }

 private:
  template <typename T, typename I>
  void compute(sdk::KernelContext& ctx, const sdk::Tensor& x, const I* target, const sdk::Tensor& weight,
               int threads) {
    const Shape xs = x.shape();
    const int64_t N = xs[0], C = xs[1], D = math::numel(xs, 2, xs.size());
    const T* logp = x.data<T>();
    std::vector<T> log_prob;
    if (softmax_) {
      T* lp = nullptr;
      if (output_wanted(1)) {
        lp = ctx.output<T>(1, xs);
      } else {
        log_prob.resize(static_cast<size_t>(math::numel(xs)));
        lp = log_prob.data();
      }
      log_softmax(x.data<T>(), lp, N, C, D, threads);
      logp = lp;
    }
    const T* w = weight.present() ? weight.data<T>() : nullptr;

    // A target outside [0, C) that is not ignore_index is an error; found first, since the loops
    // below run on worker threads that must not throw.
    const int64_t count = N * D;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t t = static_cast<int64_t>(target[i]);
      if ((t < 0 || t >= C) && !(has_ignore_ && t == ignore_index_))
        fail("target value " + std::to_string(t) + " at position " + std::to_string(i) + " is outside [0, " +
             std::to_string(C) + ")" + (has_ignore_ ? " and is not ignore_index" : ""));
    }

    Shape loss_shape = xs;
    loss_shape.erase(loss_shape.begin() + 1);
    std::vector<T> per_position;
    T* loss = nullptr;
    if (reduction_ == Reduction::kNone) {
      loss = ctx.output<T>(0, loss_shape);
    } else {
      per_position.resize(static_cast<size_t>(count));
      loss = per_position.data();
    }
    math::parallel_for(count, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = static_cast<int64_t>(target[i]);
        if (has_ignore_ && t == ignore_index_) {
          loss[i] = T(0);
          continue;
        }
        const int64_t n = i / D, d = i % D;
        const T v = -logp[(n * C + t) * D + d];
        loss[i] = w ? w[t] * v : v;
      }
    });
    if (reduction_ == Reduction::kNone) return;

    // The reduction to one value, accumulated in double.
    double sum = 0, total_weight = 0;
    for (int64_t i = 0; i < count; ++i) {
      sum += static_cast<double>(loss[i]);
      const int64_t t = static_cast<int64_t>(target[i]);
      if (!(has_ignore_ && t == ignore_index_)) total_weight += w ? static_cast<double>(w[t]) : 1.0;
    }
    T* out = ctx.output<T>(0, {});
    // A mean over no weight at all is 0/0: NaN, as the reference computes it.
    out[0] = static_cast<T>(reduction_ == Reduction::kSum ? sum : sum / total_weight);
  }

  bool softmax_;
  bool has_ignore_;
  int64_t ignore_index_;
  Reduction reduction_ = Reduction::kMean;
};

bool loss_supported(const sdk::Node& n) {
  return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}) &&
         input_type_in(n, 1, {EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64}) &&
         input_type_in(n, 2, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE});
}

}  // namespace

void register_loss_kernels(KernelRegistry& r) {
  for (bool softmax : {false, true})
    r.add(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", 12, 17, loss_supported,
          [softmax](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<LossKernel>(n, c, softmax);
          });
}

}  // namespace ephost::cpu
