// BatchNormalization (inference), InstanceNormalization, LayerNormalization, Softmax, LogSoftmax.
#include <algorithm>
#include <cmath>
#include <vector>

#include "constant_lookup.h"
#include "kernel_registry.h"
#include "math/broadcast.h"
#include "math/parallel.h"
#include "math/reduce.h"
#include "math/softmax.h"

namespace ephost::cpu {

namespace {

// y = x * a[c] + b[c] over [N, C, spatial] planes.
void channel_affine(const float* x, float* y, int64_t n, int64_t c, int64_t size, const float* a, const float* b,
                    int threads) {
  math::parallel_for(n * c, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(size, 1)),
                     [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float av = a[p % c], bv = b[p % c];
      const float* xp = x + p * size;
      float* yp = y + p * size;
      for (int64_t i = 0; i < size; ++i) yp[i] = xp[i] * av + bv;
    }
  });
}

class BatchNormKernel : public CpuKernel {
 public:
  BatchNormKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    epsilon_ = node.attr_float("epsilon", 1e-5f);
    // With all four parameters constant, fold them into one scale and shift per channel now.
    bool constant = true;
    for (size_t i = 1; i <= 4; ++i) constant = constant && node.has_input(i) && is_constant(node.input(i));
    if (constant) {
      sdk::Tensor t[4];
      for (size_t i = 0; i < 4; ++i) t[i] = constant_of(node.input(i + 1));
      for (size_t i = 0; i < 4; ++i)
        if (t[i].elem_type() != EPHOST_ELEMENT_FLOAT || t[i].size() != t[0].size())
          fail_node(node, "scale, B, mean and var must be float tensors of one size");
      fold(t[0], t[1], t[2], t[3], &a_, &b_);
      folded_ = true;
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("X must have rank >= 2 (N, C, ...), found " + math::to_string(xs));
    const int64_t C = xs[1];
    std::vector<float> a_local, b_local;
    const std::vector<float>* a = &a_;
    const std::vector<float>* b = &b_;
    if (!folded_) {
      sdk::Tensor t[4];
      const char* names[4] = {"scale", "B", "mean", "var"};
      for (size_t i = 0; i < 4; ++i) {
        t[i] = required(ctx, i + 1, names[i]);
        expect_type(t[i], {EPHOST_ELEMENT_FLOAT}, names[i]);
      }
      for (size_t i = 0; i < 4; ++i)
        if (t[i].size() != C)
          fail(std::string(names[i]) + " must have " + std::to_string(C) + " elements (X's channels), found shape " +
               math::to_string(t[i].shape()));
      fold(t[0], t[1], t[2], t[3], &a_local, &b_local);
      a = &a_local;
      b = &b_local;
    } else if (static_cast<int64_t>(a_.size()) != C) {
      fail("X has " + std::to_string(C) + " channels but the parameters have " + std::to_string(a_.size()));
    }
    float* y = ctx.output<float>(0, xs);
    channel_affine(x.data<float>(), y, xs[0], C, math::numel(xs, 2, xs.size()), a->data(), b->data(), threads);
  }

 private:
  void fold(const sdk::Tensor& scale, const sdk::Tensor& bias, const sdk::Tensor& mean, const sdk::Tensor& var,
            std::vector<float>* a, std::vector<float>* b) const {
    const int64_t n = scale.size();
    a->resize(n);
    b->resize(n);
    for (int64_t i = 0; i < n; ++i) {
      (*a)[i] = scale.data<float>()[i] / std::sqrt(var.data<float>()[i] + epsilon_);
      (*b)[i] = bias.data<float>()[i] - mean.data<float>()[i] * (*a)[i];
    }
  }

  float epsilon_;
  bool folded_ = false;
  std::vector<float> a_, b_;
};

bool batchnorm_supported(const sdk::Node& n) {
  for (size_t i = 0; i < 5; ++i)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT})) return false;
  // Inference only: training mode and its extra outputs are not supported.
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.has_output(i)) return false;
  if (n.attr_int("training_mode", 0) != 0) return false;
  if (n.opset() < 9 && n.attr_int("spatial", 1) != 1) return false;
  return true;
}

class InstanceNormKernel : public CpuKernel {
 public:
  InstanceNormKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), epsilon_(node.attr_float("epsilon", 1e-5f)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input"), s = required(ctx, 1, "scale"), b = required(ctx, 2, "B");
    for (const sdk::Tensor* t : {&x, &s, &b}) expect_type(*t, {EPHOST_ELEMENT_FLOAT}, "inputs");
    const Shape xs = x.shape();
    if (xs.size() < 3) fail("input must have rank >= 3, found " + math::to_string(xs));
    const int64_t C = xs[1], size = math::numel(xs, 2, xs.size());
    if (s.size() != C || b.size() != C) fail("scale and B must have " + std::to_string(C) + " elements");
    const float* px = x.data<float>();
    float* y = ctx.output<float>(0, xs);
    const float* ps = s.data<float>();
    const float* pb = b.data<float>();
    math::parallel_for(xs[0] * C, threads, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float* xp = px + p * size;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < size; ++i) sum += xp[i];
        const double mean = size ? sum / size : 0;
        for (int64_t i = 0; i < size; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
        const double var = size ? sq / size : 0;
        const float a = static_cast<float>(ps[p % C] / std::sqrt(var + epsilon_));
        const float c = static_cast<float>(pb[p % C] - mean * a);
        float* yp = y + p * size;
        for (int64_t i = 0; i < size; ++i) yp[i] = xp[i] * a + c;
      }
    });
  }

 private:
  float epsilon_;
};

class LayerNormKernel : public CpuKernel {
 public:
  LayerNormKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", -1)), epsilon_(node.attr_float("epsilon", 1e-5f)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), s = required(ctx, 1, "Scale"), b = ctx.input(2);
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    expect_type(s, {EPHOST_ELEMENT_FLOAT}, "Scale");
    if (b.present()) expect_type(b, {EPHOST_ELEMENT_FLOAT}, "B");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    const int64_t axis = math::normalize_axis(axis_, r);
    const int64_t outer = math::numel(xs, 0, axis), inner = math::numel(xs, axis, xs.size());
    const Shape norm_shape(xs.begin() + axis, xs.end());
    // Scale and B broadcast over the normalized dims; expand them once when they are smaller.
    auto expand = [&](const sdk::Tensor& t, const char* what, std::vector<float>* buf) -> const float* {
      if (t.size() == inner) return t.data<float>();
      const Shape ts = t.shape();
      if (!math::broadcasts_to(ts, norm_shape))
        fail(std::string(what) + " of shape " + math::to_string(ts) + " does not broadcast to the normalized shape " +
             math::to_string(norm_shape));
      buf->resize(inner);
      math::broadcast_copy(t.data<float>(), ts, buf->data(), norm_shape, sizeof(float), 1);
      return buf->data();
    };
    std::vector<float> sbuf, bbuf;
    const float* ps = expand(s, "Scale", &sbuf);
    const float* pb = b.present() ? expand(b, "B", &bbuf) : nullptr;
    Shape stat_shape = xs;
    for (int64_t i = axis; i < r; ++i) stat_shape[i] = 1;
    float* y = ctx.output<float>(0, xs);
    float* mean_out = output_wanted(1) ? ctx.output<float>(1, stat_shape) : nullptr;
    float* inv_out = output_wanted(2) ? ctx.output<float>(2, stat_shape) : nullptr;
    const float* px = x.data<float>();
    const float eps = epsilon_;
    math::parallel_for(outer, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
                       [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        const float* xr = px + row * inner;
        float* yr = y + row * inner;
        double sum = 0;
        for (int64_t i = 0; i < inner; ++i) sum += xr[i];
        const float mean = static_cast<float>(inner ? sum / inner : 0);
        double sq = 0;
        for (int64_t i = 0; i < inner; ++i) sq += double(xr[i] - mean) * double(xr[i] - mean);
        const float var = static_cast<float>(inner ? sq / inner : 0);
        const float inv = 1.f / std::sqrt(var + eps);
        for (int64_t i = 0; i < inner; ++i) yr[i] = (xr[i] - mean) * inv * ps[i] + (pb ? pb[i] : 0.f);
        if (mean_out) mean_out[row] = mean;
        if (inv_out) inv_out[row] = inv;
      }
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

class SoftmaxKernel : public CpuKernel {
 public:
  SoftmaxKernel(const sdk::Node& node, const KernelConfig& c, bool log)
      : CpuKernel(node, c), log_(log), axis_(node.attr_int("axis", node.opset() < 13 ? 1 : -1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "input");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    float* y = ctx.output<float>(0, xs);
    if (r == 0) {  // a scalar is its own (log-)softmax axis of one element
      y[0] = log_ ? 0.f : 1.f;
      return;
    }
    const int64_t axis = math::normalize_axis(axis_, r);
    int64_t outer = math::numel(xs, 0, axis), n, inner;
    if (opset() < 13) {
      // Before opset 13 the input is coerced to 2-D [outer, rest] and normalized over all of `rest`.
      n = math::numel(xs, axis, xs.size());
      inner = 1;
    } else {
      n = xs[axis];
      inner = math::numel(xs, axis + 1, xs.size());
    }
    math::softmax(x.data<float>(), y, outer, n, inner, log_, threads);
  }

 private:
  bool log_;
  int64_t axis_;
};

class HardmaxKernel : public CpuKernel {
 public:
  HardmaxKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", node.opset() < 13 ? 1 : -1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "input");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    if (r == 0) fail("input must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    const int64_t outer = math::numel(xs, 0, axis);
    const int64_t n = opset() < 13 ? math::numel(xs, axis, xs.size()) : xs[axis];
    const int64_t inner = opset() < 13 ? 1 : math::numel(xs, axis + 1, xs.size());
    const float* px = x.data<float>();
    float* y = ctx.output<float>(0, xs);
    std::fill(y, y + x.size(), 0.f);
    if (n == 0) return;
    math::parallel_for(outer, threads, 1, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const float* base = px + o * n * inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j)
            if (base[j * inner] > base[best * inner]) best = j;
          y[(o * n + best) * inner + i] = 1.f;
        }
    });
  }

 private:
  int64_t axis_;
};

class MeanVarianceNormKernel : public CpuKernel {
 public:
  MeanVarianceNormKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axes_(node.attr_ints("axes", {0, 2, 3})) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    std::vector<int64_t> axes;
    for (int64_t a : axes_) axes.push_back(math::normalize_axis(a, r));
    const math::ReducePlan plan = math::plan_reduce(xs, axes);
    const Shape stat_shape = math::reduce_shape(xs, axes, true);
    std::vector<float> mean(plan.outputs), var(plan.outputs);
    auto sum = [](double a, float v) { return a + v; };
    auto avg = [](double a, int64_t n) { return static_cast<float>(n ? a / n : 0.0); };
    math::reduce(x.data<float>(), plan, mean.data(), 0.0, sum, avg, threads);
    float* y = ctx.output<float>(0, xs);
    math::broadcast_binary(x.data<float>(), xs, mean.data(), stat_shape, y, xs, threads,
                           [](float v, float m) { return v - m; });
    math::reduce(y, plan, var.data(), 0.0, [](double a, float d) { return a + double(d) * d; }, avg, threads);
    // As the ONNX function body: divide by sqrt(variance) + 1e-9.
    for (float& v : var) v = std::sqrt(v) + 1e-9f;
    math::broadcast_binary(y, xs, var.data(), stat_shape, y, xs, threads, [](float d, float s) { return d / s; });
  }

 private:
  std::vector<int64_t> axes_;
};

class LrnKernel : public CpuKernel {
 public:
  LrnKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), size_(node.attr_int("size", 0)), alpha_(node.attr_float("alpha", 1e-4f)),
        beta_(node.attr_float("beta", 0.75f)), bias_(node.attr_float("bias", 1.0f)) {
    if (size_ <= 0) fail_node(node, "size must be positive");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("X must have rank >= 2");
    const int64_t N = xs[0], C = xs[1], S = math::numel(xs, 2, xs.size());
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // channels before / after c
    const float* px = x.data<float>();
    float* y = ctx.output<float>(0, xs);
    const float scale = alpha_ / static_cast<float>(size_);
    math::parallel_for(N * C, threads, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        const int64_t c0 = std::max<int64_t>(0, c - lo), c1 = std::min<int64_t>(C - 1, c + hi);
        for (int64_t s = 0; s < S; ++s) {
          float sq = 0.f;
          for (int64_t k = c0; k <= c1; ++k) {
            const float v = px[(n * C + k) * S + s];
            sq += v * v;
          }
          y[p * S + s] = px[p * S + s] / std::pow(bias_ + scale * sq, beta_);
        }
      }
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

void register_normalization_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", 1, 17, batchnorm_supported, make_factory<BatchNormKernel>());
  r.add("InstanceNormalization", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2}), make_factory<InstanceNormKernel>());
  r.add("LayerNormalization", 17, 17,
        [](const sdk::Node& n) {
          return inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2})(n) && n.attr_int("stash_type", 1) == 1;
        },
        make_factory<LayerNormKernel>());
  r.add("Softmax", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}),
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<SoftmaxKernel>(n, c, false);
        });
  r.add("Hardmax", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), make_factory<HardmaxKernel>());
  r.add("MeanVarianceNormalization", 9, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), make_factory<MeanVarianceNormKernel>());
  r.add("LRN", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), make_factory<LrnKernel>());
  r.add("LogSoftmax", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}),
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<SoftmaxKernel>(n, c, true);
        });
}

}  // namespace ephost::cpu
