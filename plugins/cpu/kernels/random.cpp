// Random ops: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli,
// Multinomial, and Dropout (the identity in inference, a random mask in training mode).
// Values come from math/random.h: reproducible given the `seed` attribute, fresh on every run, and
// independent of the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_registry.h"
#include "math/half.h"
#include "math/parallel.h"
#include "math/random.h"

namespace ephost::cpu {

namespace {

// The node's `seed` (a float for most random ops, an int for Dropout) for math::RandomKeys.
math::RandomKeys keys_for(const sdk::Node& node) {
  const EphostAttributeType type = node.attr_type("seed");
  if (type == EPHOST_ATTR_INT) return math::RandomKeys(true, static_cast<uint64_t>(node.attr_int("seed", 0)));
  if (type != EPHOST_ATTR_FLOAT) return math::RandomKeys(false, 0);
  const float seed = node.attr_float("seed", 0.f);
  uint32_t bits;
  std::memcpy(&bits, &seed, sizeof(bits));
  return math::RandomKeys(true, bits);
}

bool float_type(int32_t t) {
  return t == EPHOST_ELEMENT_FLOAT || t == EPHOST_ELEMENT_DOUBLE || t == EPHOST_ELEMENT_FLOAT16;
}

// Writes value(i) (a double) for i < n into `out` as element type `type`; false for a type it does
// not know. value must be callable from several threads at once.
template <typename F>
bool fill_as(int32_t type, void* out, int64_t n, int threads, F value) {
  if (type == EPHOST_ELEMENT_FLOAT16 || type == EPHOST_ELEMENT_BFLOAT16) {
    uint16_t* y = static_cast<uint16_t*>(out);
    const bool half = type == EPHOST_ELEMENT_FLOAT16;
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float f = static_cast<float>(value(i));
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        y[i] = half ? math::float_to_half(f) : static_cast<uint16_t>(bits >> 16);
      }
    });
    return true;
  }
  return dispatch(Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>{},
                  type, [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(out);
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = static_cast<T>(value(i));
    });
  });
}

// Element i of a float, double or float16 tensor as double.
double value_at(const sdk::Tensor& t, int64_t i) {
  switch (t.elem_type()) {
    case EPHOST_ELEMENT_FLOAT: return t.data<float>()[i];
    case EPHOST_ELEMENT_DOUBLE: return t.data<double>()[i];
    default: return math::half_to_float(t.data<uint16_t>()[i]);
  }
}

// ---- RandomUniform / RandomNormal (and their *Like forms) -------------------------------------------

class RandomTensorKernel : public CpuKernel {
 public:
  RandomTensorKernel(const sdk::Node& node, const KernelConfig& c, bool normal, bool like)
      : CpuKernel(node, c), normal_(normal), like_(like), has_dtype_(node.has_attr("dtype")),
        dtype_(static_cast<int32_t>(node.attr_int("dtype", EPHOST_ELEMENT_FLOAT))),
        a_(normal ? node.attr_float("mean", 0.f) : node.attr_float("low", 0.f)),
        b_(normal ? node.attr_float("scale", 1.f) : node.attr_float("high", 1.f)),
        keys_(keys_for(node)) {
    if (!like) {
      shape_ = node.attr_ints("shape");
      if (!node.has_attr("shape")) fail_node(node, "the shape attribute is required");
      for (int64_t d : shape_)
        if (d < 0) fail_node(node, "shape must not have negative dims, found " + math::to_string(shape_));
    }
    if (has_dtype_ && !float_type(dtype_))
      fail_node(node, std::string("dtype must be float, double or float16, found ") + type_name(dtype_));
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    Shape shape = shape_;
    int32_t type = dtype_;
    if (like_) {
      const sdk::Tensor x = required(ctx, 0, "input");
      shape = x.shape();
      if (!has_dtype_) type = x.elem_type();
      if (!float_type(type))
        fail(std::string("the output type must be float, double or float16 (give dtype), found ") + type_name(type));
    }
    void* y = ctx.output_raw(0, type, shape);
    const uint64_t key = keys_.next();
    const double a = a_, b = b_;
    if (normal_) fill_as(type, y, math::numel(shape), threads, [&](int64_t i) { return a + b * math::normal01(key, i); });
    else fill_as(type, y, math::numel(shape), threads, [&](int64_t i) { return a + (b - a) * math::uniform01(key, i); });
  }

 private:
  bool normal_, like_, has_dtype_;
  int32_t dtype_;
  double a_, b_;  // low/high or mean/scale
  Shape shape_;
  math::RandomKeys keys_;
};

// ---- Bernoulli ------------------------------------------------------------------------------------

class BernoulliKernel : public CpuKernel {
 public:
  BernoulliKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), has_dtype_(node.has_attr("dtype")),
        dtype_(static_cast<int32_t>(node.attr_int("dtype", EPHOST_ELEMENT_FLOAT))),
        keys_(keys_for(node)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor p = required(ctx, 0, "input");
    if (!float_type(p.elem_type()))
      fail(std::string("input must be float, double or float16, found ") + type_name(p.elem_type()));
    const int64_t n = p.size();
    for (int64_t i = 0; i < n; ++i) {
      const double v = value_at(p, i);
      if (!(v >= 0.0 && v <= 1.0)) fail("probability " + std::to_string(v) + " at " + std::to_string(i) + " is outside [0, 1]");
    }
    const int32_t type = has_dtype_ ? dtype_ : p.elem_type();
    void* y = ctx.output_raw(0, type, p.shape());
    const uint64_t key = keys_.next();
    if (!fill_as(type, y, n, threads, [&](int64_t i) { return math::uniform01(key, i) < value_at(p, i) ? 1.0 : 0.0; }))
      fail(std::string("unsupported output type ") + type_name(type));
  }

 private:
  bool has_dtype_;
  int32_t dtype_;
  math::RandomKeys keys_;
};

// ---- Multinomial ----------------------------------------------------------------------------------

class MultinomialKernel : public CpuKernel {
 public:
  MultinomialKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), samples_(node.attr_int("sample_size", 1)),
        dtype_(static_cast<int32_t>(node.attr_int("dtype", EPHOST_ELEMENT_INT32))),
        keys_(keys_for(node)) {
    if (samples_ < 1) fail_node(node, "sample_size must be positive");
    if (dtype_ != EPHOST_ELEMENT_INT32 && dtype_ != EPHOST_ELEMENT_INT64)
      fail_node(node, std::string("dtype must be int32 or int64, found ") + type_name(dtype_));
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    if (!float_type(x.elem_type())) fail(std::string("input must be float, double or float16, found ") + type_name(x.elem_type()));
    if (x.rank() != 2) fail("input must have shape [batch_size, class_size], found " + math::to_string(x.shape()));
    const int64_t batch = x.dim(0), classes = x.dim(1);
    if (classes < 1) fail("class_size must be positive");
    // The output first: its allocation refuses a sample_size no tensor holds (2^40) before any work,
    // and the samples go straight into it.
    const Shape ys{batch, samples_};
    int64_t* y64 = dtype_ == EPHOST_ELEMENT_INT64 ? ctx.output<int64_t>(0, ys) : nullptr;
    int32_t* y32 = y64 ? nullptr : ctx.output<int32_t>(0, ys);
    const uint64_t key = keys_.next();
    // Each row's categorical distribution is softmax(row) (the input holds unnormalised log-probabilities):
    // a sample is the first class whose cumulative weight exceeds u * total.
    math::parallel_for(batch, threads, 1, [&](int64_t r0, int64_t r1) {
      std::vector<double> cdf(static_cast<size_t>(classes));
      for (int64_t r = r0; r < r1; ++r) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) m = std::max(m, value_at(x, r * classes + c));
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) cdf[c] = total += std::exp(value_at(x, r * classes + c) - m);
        for (int64_t s = 0; s < samples_; ++s) {
          const double u = math::uniform01(key, static_cast<uint64_t>(r * samples_ + s)) * total;
          const int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
          const int64_t sample = std::min(k, classes - 1);
          if (y64) y64[r * samples_ + s] = sample;
          else y32[r * samples_ + s] = static_cast<int32_t>(sample);
        }
      }
    });
  }

 private:
  int64_t samples_;
  int32_t dtype_;
  math::RandomKeys keys_;
};

// ---- Dropout --------------------------------------------------------------------------------------

// Inference (opsets before 12, or training_mode absent/false, or ratio 0): the identity plus an
// all-ones mask. Training: each element is kept with probability 1 - ratio and scaled by
// 1 / (1 - ratio); the mask says which were kept.
class DropoutKernel : public CpuKernel {
 public:
  DropoutKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), keys_(keys_for(node)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    double ratio = 0;
    bool training = false;
    if (opset() >= 12) {
      const sdk::Tensor t = ctx.input(2);
      if (t.present()) {
        expect_type(t, {EPHOST_ELEMENT_BOOL}, "training_mode");
        if (t.size() != 1) fail("training_mode must be a scalar");
        training = t.data<uint8_t>()[0] != 0;
      }
      const sdk::Tensor r = ctx.input(1);
      ratio = r.present() ? scalar_of_float(r) : 0.5;
    }
    if (training && ratio != 0.0) return train(ctx, x, ratio, threads);

    const Shape s = x.shape();
    void* y = ctx.output_raw(0, x.elem_type(), s);
    const size_t bytes = static_cast<size_t>(x.size()) * sdk::element_size(x.elem_type());
    const char* src = static_cast<const char*>(x.raw());
    math::parallel_for(static_cast<int64_t>(bytes), threads, int64_t{1} << 20, [&](int64_t b0, int64_t b1) {
      std::memcpy(static_cast<char*>(y) + b0, src + b0, static_cast<size_t>(b1 - b0));
    });
    if (!output_wanted(1)) return;
    if (opset() < 10) {  // before opset 10 the mask had the data's type
      if (!fill_as(x.elem_type(), ctx.output_raw(1, x.elem_type(), s), x.size(), threads, [](int64_t) { return 1.0; }))
        fail(std::string("unsupported type ") + type_name(x.elem_type()));
    } else {
      uint8_t* m = ctx.output<uint8_t>(1, s, EPHOST_ELEMENT_BOOL);
      std::fill(m, m + x.size(), uint8_t{1});
    }
  }

 private:
  double scalar_of_float(const sdk::Tensor& r) const {
    if (r.size() != 1 || !float_type(r.elem_type()))
      fail("ratio must be a float, double or float16 scalar, found " + std::string(type_name(r.elem_type())) + " " +
           math::to_string(r.shape()));
    return value_at(r, 0);
  }

  void train(sdk::KernelContext& ctx, const sdk::Tensor& x, double ratio, int threads) {
    if (!(ratio >= 0.0 && ratio < 1.0)) fail("ratio must be in [0, 1), found " + std::to_string(ratio));
    const uint64_t key = keys_.next();
    const int64_t n = x.size();
    const Shape s = x.shape();
    uint8_t* mask = output_wanted(1) ? ctx.output<uint8_t>(1, s, EPHOST_ELEMENT_BOOL) : nullptr;
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, s);
      const T scale = static_cast<T>(1.0 / (1.0 - ratio));
      math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const bool keep = math::uniform01(key, static_cast<uint64_t>(i)) >= ratio;
          y[i] = keep ? px[i] * scale : T(0);
          if (mask) mask[i] = keep;
        }
      });
    });
    if (!ok) fail(std::string("training mode supports float and double data, found ") + type_name(x.elem_type()));
  }

  math::RandomKeys keys_;
};

bool random_dtype_supported(const sdk::Node& n) {
  return !n.has_attr("dtype") || float_type(static_cast<int32_t>(n.attr_int("dtype", 0)));
}

template <bool Normal, bool Like>
std::unique_ptr<sdk::Kernel> make_random(const sdk::Node& n, const KernelConfig& c) {
  return std::make_unique<RandomTensorKernel>(n, c, Normal, Like);
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  r.add("RandomUniform", 1, 17, random_dtype_supported, make_random<false, false>);
  r.add("RandomNormal", 1, 17, random_dtype_supported, make_random<true, false>);
  // The *Like ops read only their input's shape (and type), so any input type works.
  r.add("RandomUniformLike", 1, 17, random_dtype_supported, make_random<false, true>);
  r.add("RandomNormalLike", 1, 17, random_dtype_supported, make_random<true, true>);
  r.add("Bernoulli", 15, 17,
        [](const sdk::Node& n) {
          return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_FLOAT16});
        },
        make_factory<BernoulliKernel>());
  r.add("Multinomial", 7, 17,
        [](const sdk::Node& n) {
          return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_FLOAT16});
        },
        make_factory<MultinomialKernel>());
  r.add("Dropout", 7, 17, any_types(), make_factory<DropoutKernel>());
}

}  // namespace ephost::cpu
