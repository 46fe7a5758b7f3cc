// Ops that only reinterpret shapes or make small tensors: Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Shape, Size, Constant, ConstantOfShape, Range, Expand.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_registry.h"
#include "math/broadcast.h"
#include "math/parallel.h"
#include "math/wrapping.h"

namespace ephost::cpu {

namespace {

// Copies x into output `i` with a new shape (the host gives every output its own buffer).
void copy_to_output(sdk::KernelContext& ctx, size_t i, const sdk::Tensor& x, const Shape& shape, int threads) {
  void* y = ctx.output_raw(i, x.elem_type(), shape);
  const size_t bytes = EphostTensorDataSize(x.elem_type(), static_cast<size_t>(x.size()));  // packed types too
  if (bytes == 0) return;
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(y);
  // Large copies split across threads: one core rarely saturates memory bandwidth.
  math::parallel_for(static_cast<int64_t>(bytes), threads, int64_t{1} << 20, [&](int64_t b0, int64_t b1) {
    std::memcpy(dst + b0, src + b0, static_cast<size_t>(b1 - b0));
  });
}

class ReshapeKernel : public CpuKernel {
 public:
  ReshapeKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), allowzero_(node.attr_int("allowzero", 0) != 0) {
    if (node.opset() < 5) attr_shape_ = node.attr_ints("shape");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    Shape want = opset() < 5 ? attr_shape_ : ints_of(required(ctx, 1, "shape"), "shape");
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] == -1) {
        if (infer >= 0) fail("shape " + math::to_string(want) + " has more than one -1");
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (want[i] == 0 && !allowzero_) {
        if (i >= in.size())
          fail("shape " + math::to_string(want) + " copies dimension " + std::to_string(i) + " (0) but the input " +
               math::to_string(in) + " has no such dimension");
        want[i] = in[i];
      }
      if (want[i] < 0) fail("shape " + math::to_string(want) + " has a negative dimension");
      if (__builtin_mul_overflow(known, want[i], &known))
        fail("shape " + math::to_string(want) + " has more elements than can be counted");
    }
    const int64_t n = x.size();
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        fail("cannot infer the -1 dimension of " + math::to_string(want) + " for an input of shape " +
             math::to_string(in));
      want[infer] = n / known;
    } else if (known != n) {
      fail("shape " + math::to_string(want) + " has " + std::to_string(known) + " elements but the input " +
           math::to_string(in) + " has " + std::to_string(n));
    }
    copy_to_output(ctx, 0, x, want, threads);
  }

 private:
  bool allowzero_;
  Shape attr_shape_;
};

class FlattenKernel : public CpuKernel {
 public:
  FlattenKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), axis_(node.attr_int("axis", 1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis > r) fail("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
    copy_to_output(ctx, 0, x, {math::numel(in, 0, axis), math::numel(in, axis, in.size())}, threads);
  }

 private:
  int64_t axis_;
};

// Squeeze and Unsqueeze: axes from the attribute before opset 13, from input 1 after.
class SqueezeKernel : public CpuKernel {
 public:
  SqueezeKernel(const sdk::Node& node, const KernelConfig& c, bool unsqueeze) : CpuKernel(node, c), unsqueeze_(unsqueeze) {
    if (node.opset() < 13) attr_axes_ = node.attr_ints("axes");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    Shape axes = attr_axes_;
    if (opset() >= 13) {
      const sdk::Tensor a = ctx.input(1);
      if (a.present()) axes = ints_of(a, "axes");
      else if (unsqueeze_) fail("required input 1 (axes) is missing");
    }
    Shape out;
    if (unsqueeze_) {
      const int64_t r = static_cast<int64_t>(in.size() + axes.size());
      std::vector<bool> inserted(r, false);
      for (int64_t a : axes) {
        const int64_t k = math::normalize_axis(a, r);
        if (inserted[k]) fail("axes " + math::to_string(axes) + " has duplicates");
        inserted[k] = true;
      }
      size_t j = 0;
      for (int64_t i = 0; i < r; ++i) out.push_back(inserted[i] ? 1 : in[j++]);
    } else {
      const int64_t r = static_cast<int64_t>(in.size());
      std::vector<bool> drop(r, false);
      if (axes.empty()) {
        for (int64_t i = 0; i < r; ++i) drop[i] = in[i] == 1;
      } else {
        for (int64_t a : axes) {
          const int64_t k = math::normalize_axis(a, r);
          if (in[k] != 1)
            fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[k]) + " (input shape " +
                 math::to_string(in) + ")");
          drop[k] = true;
        }
      }
      for (int64_t i = 0; i < r; ++i)
        if (!drop[i]) out.push_back(in[i]);
    }
    copy_to_output(ctx, 0, x, out, threads);
  }

 private:
  bool unsqueeze_;
  Shape attr_axes_;
};

class IdentityKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    copy_to_output(ctx, 0, x, x.shape(), threads);
  }
};

class ShapeKernel : public CpuKernel {
 public:
  ShapeKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), start_(node.attr_int("start", 0)), end_(node.attr_int("end", INT64_MAX)),
        has_end_(node.has_attr("end")) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    int64_t s = start_, e = has_end_ ? end_ : r;
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = std::clamp<int64_t>(s, 0, r);
    e = std::clamp<int64_t>(e, 0, r);
    const int64_t n = std::max<int64_t>(e - s, 0);
    int64_t* y = ctx.output<int64_t>(0, {n});
    for (int64_t i = 0; i < n; ++i) y[i] = in[s + i];
  }

 private:
  int64_t start_, end_;
  bool has_end_;
};

class SizeKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    *ctx.output<int64_t>(0, {}) = x.size();
  }
};

// Constant: the value is fixed at kernel creation (attribute tensors live as long as the graph).
class ConstantKernel : public CpuKernel {
 public:
  ConstantKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    if (node.has_attr("value")) {
      const sdk::Tensor t = node.attr_tensor("value");
      if (!is_movable_type(t.elem_type()))
        fail_node(node, std::string("unsupported value type ") + type_name(t.elem_type()));
      shape_ = t.shape();
      type_ = t.elem_type();
      data_ = t.raw();
      bytes_ = static_cast<size_t>(t.size()) * sdk::element_size(t.elem_type());
      return;
    }
    if (node.has_attr("value_float")) {
      own_.resize(sizeof(float));
      type_ = EPHOST_ELEMENT_FLOAT;
      const float v = node.attr_float("value_float", 0.f);
      std::memcpy(own_.data(), &v, sizeof(v));
    } else if (node.has_attr("value_floats")) {
      const auto v = node.attr_floats("value_floats");
      type_ = EPHOST_ELEMENT_FLOAT;
      own_.resize(v.size() * sizeof(float));
      if (!v.empty()) std::memcpy(own_.data(), v.data(), own_.size());
      shape_ = {static_cast<int64_t>(v.size())};
    } else if (node.has_attr("value_int")) {
      own_.resize(sizeof(int64_t));
      type_ = EPHOST_ELEMENT_INT64;
      const int64_t v = node.attr_int("value_int", 0);
      std::memcpy(own_.data(), &v, sizeof(v));
    } else if (node.has_attr("value_ints")) {
      const auto v = node.attr_ints("value_ints");
      type_ = EPHOST_ELEMENT_INT64;
      own_.resize(v.size() * sizeof(int64_t));
      if (!v.empty()) std::memcpy(own_.data(), v.data(), own_.size());
      shape_ = {static_cast<int64_t>(v.size())};
    } else {
      fail_node(node, "has none of the supported attributes value, value_float(s), value_int(s)");
    }
    data_ = own_.data();
    bytes_ = own_.size();
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    void* y = ctx.output_raw(0, type_, shape_);
    if (bytes_) std::memcpy(y, data_, bytes_);
  }

 private:
  Shape shape_;
  int32_t type_ = EPHOST_ELEMENT_UNDEFINED;
  const void* data_ = nullptr;
  size_t bytes_ = 0;
  std::vector<char> own_;
};

bool constant_supported(const sdk::Node& n) {
  if (n.has_attr("value")) return n.attr_type("value") == EPHOST_ATTR_TENSOR && is_movable_type(n.attr_tensor("value").elem_type());
  return n.has_attr("value_float") || n.has_attr("value_floats") || n.has_attr("value_int") || n.has_attr("value_ints");
}

class ConstantOfShapeKernel : public CpuKernel {
 public:
  ConstantOfShapeKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), value_(4, 0) {
    if (node.has_attr("value")) {
      const sdk::Tensor t = node.attr_tensor("value");
      type_ = t.elem_type();
      if (t.size() != 1) fail_node(node, "value must have exactly one element");
      if (!is_movable_type(t.elem_type())) fail_node(node, std::string("unsupported value type ") + type_name(t.elem_type()));
      value_.assign(static_cast<const char*>(t.raw()), static_cast<const char*>(t.raw()) + sdk::element_size(t.elem_type()));
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const Shape shape = ints_of(required(ctx, 0, "input"), "input");
    for (int64_t d : shape)
      if (d < 0) fail("shape " + math::to_string(shape) + " has a negative dimension");
    void* y = ctx.output_raw(0, type_, shape);
    const int64_t n = math::numel(shape);
    auto fill = [&](auto tag) {
      using T = decltype(tag);
      T v;
      std::memcpy(&v, value_.data(), sizeof(T));
      T* p = static_cast<T*>(y);
      std::fill(p, p + n, v);
    };
    switch (value_.size()) {
      case 1: fill(uint8_t{}); break;
      case 2: fill(uint16_t{}); break;
      case 4: fill(uint32_t{}); break;
      case 8: fill(uint64_t{}); break;
      default: fail("unsupported value element size");
    }
  }

 private:
  std::vector<char> value_;  // default: float 0
  int32_t type_ = EPHOST_ELEMENT_FLOAT;
};

class RangeKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor s = required(ctx, 0, "start"), l = required(ctx, 1, "limit"), d = required(ctx, 2, "delta");
    if (s.elem_type() != l.elem_type() || s.elem_type() != d.elem_type()) fail("start, limit and delta must share a type");
    for (const sdk::Tensor* t : {&s, &l, &d})
      if (t->size() != 1) fail("start, limit and delta must be scalars");
    const bool ok = dispatch(Types<float, double, int16_t, int32_t, int64_t>{}, s.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
      if (delta == T(0)) fail("delta must not be zero");
      if constexpr (std::is_integral_v<T>) {
        // Exact, in wrapping 64-bit arithmetic (math/wrapping.h): a double count is off by one near
        // 2^63 and the last element would then overflow T. Every element lies between start and limit.
        const bool up = delta > 0;
        if (up ? limit <= start : limit >= start) {
          ctx.output<T>(0, {0});
          return;
        }
        const int64_t s64 = start, l64 = limit, d64 = delta;
        const uint64_t span = static_cast<uint64_t>(up ? math::wrapping_sub(l64, s64) : math::wrapping_sub(s64, l64));
        const uint64_t step = static_cast<uint64_t>(up ? d64 : math::wrapping_neg(d64));
        const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
        if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail("start " + std::to_string(start) + ", limit " + std::to_string(limit) + " and delta " + std::to_string(delta) +
               " give " + std::to_string(count) + " elements, more than a tensor can hold");
        const int64_t n = static_cast<int64_t>(count);
        T* y = ctx.output<T>(0, {n});
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(math::wrapping_add(s64, math::wrapping_mul(i, d64)));
      } else {
        const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
        // NaN or infinite bounds, or more elements than an int64 counts: a cast would be undefined.
        if (!(count < 9.2e18))
          fail("start " + std::to_string(start) + ", limit " + std::to_string(limit) + " and delta " + std::to_string(delta) +
               " give no finite element count a tensor can hold");
        const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
        T* y = ctx.output<T>(0, {n});
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(s.elem_type()));
  }
};

class ExpandKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape want = ints_of(required(ctx, 1, "shape"), "shape");
    const Shape in = x.shape();
    const Shape out = math::broadcast_shapes(in, want);
    void* y = ctx.output_raw(0, x.elem_type(), out);
    math::broadcast_copy(x.raw(), in, y, out, sdk::element_size(x.elem_type()), threads);
  }
};

}  // namespace

// The kernels that copy a whole tensor unchanged (copy_to_output) take the packed types (int4, uint4,
// float4e2m1, int2, uint2) too: their bytes move as they are.
static bool whole_copy_types(const sdk::Node& node) {
  auto ok = [](int32_t t) {
    return t == EPHOST_ELEMENT_UNDEFINED || is_movable_type(t) || (EphostElementBits(t) != 0 && t != EPHOST_ELEMENT_STRING);
  };
  for (size_t i = 0; i < node.num_inputs(); ++i)
    if (node.has_input(i) && !ok(node.input(i).elem_type())) return false;
  for (size_t i = 0; i < node.num_outputs(); ++i)
    if (node.has_output(i) && !ok(node.output(i).elem_type())) return false;
  return true;
}

void register_shape_kernels(KernelRegistry& r) {
  const SupportCheck any = any_types();
  r.add("Reshape", 1, 17, whole_copy_types, make_factory<ReshapeKernel>());
  r.add("Flatten", 1, 17, whole_copy_types, make_factory<FlattenKernel>());
  r.add("Squeeze", 1, 17, whole_copy_types, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<SqueezeKernel>(n, c, false);
  });
  r.add("Unsqueeze", 1, 17, whole_copy_types, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<SqueezeKernel>(n, c, true);
  });
  r.add("Identity", 1, 17, whole_copy_types, make_factory<IdentityKernel>());
  // Shape and Size only read the shape, so any input type (strings included) works.
  r.add("Shape", 1, 17, nullptr, make_factory<ShapeKernel>());
  r.add("Size", 1, 17, nullptr, make_factory<SizeKernel>());
  r.add("Constant", 1, 17, constant_supported, make_factory<ConstantKernel>());
  r.add("ConstantOfShape", 9, 17, any, make_factory<ConstantOfShapeKernel>());
  r.add("Range", 11, 17, inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT16, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64}),
        make_factory<RangeKernel>());
  r.add("Expand", 8, 17, any, make_factory<ExpandKernel>());
}

}  // namespace ephost::cpu
