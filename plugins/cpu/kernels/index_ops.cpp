// Index-driven data movement: GatherND, ScatterND, ScatterElements (and Scatter), OneHot, NonZero.
#include <algorithm>
#include <cstring>

#include "kernel_registry.h"
#include "math/numeric_cast.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

bool parse_reduction(const std::string& s, Reduction* r) {
  if (s == "none") *r = Reduction::kNone;
  else if (s == "add") *r = Reduction::kAdd;
  else if (s == "mul") *r = Reduction::kMul;
  else if (s == "max") *r = Reduction::kMax;
  else if (s == "min") *r = Reduction::kMin;
  else return false;
  return true;
}

template <typename T>
inline void apply(Reduction r, T* dst, T v) {
  switch (r) {
    case Reduction::kNone: *dst = v; break;
    case Reduction::kAdd: *dst = static_cast<T>(*dst + v); break;
    case Reduction::kMul: *dst = static_cast<T>(*dst * v); break;
    case Reduction::kMax: *dst = *dst < v ? v : *dst; break;
    case Reduction::kMin: *dst = v < *dst ? v : *dst; break;
  }
}

using ScatterTypes = Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

class GatherNDKernel : public CpuKernel {
 public:
  GatherNDKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), batch_dims_(node.attr_int("batch_dims", 0)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data"), idx = required(ctx, 1, "indices");
    const Shape ds = x.shape(), is = idx.shape();
    const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size()), b = batch_dims_;
    if (q < 1 || r < 1) fail("data and indices must have rank >= 1");
    const int64_t m = is.back();
    if (b < 0 || b >= std::min(q, r) || m < 1 || b + m > r)
      fail("indices of shape " + math::to_string(is) + " with batch_dims " + std::to_string(b) +
           " do not fit data of shape " + math::to_string(ds));
    for (int64_t i = 0; i < b; ++i)
      if (ds[i] != is[i]) fail("batch dimensions of data " + math::to_string(ds) + " and indices " + math::to_string(is) + " differ");
    const std::vector<int64_t> ind = ints_of(idx, "indices");
    Shape out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + b + m, ds.end());
    const int64_t es = static_cast<int64_t>(sdk::element_size(x.elem_type()));
    const int64_t slice = math::numel(ds, b + m, ds.size()) * es;
    const int64_t batches = math::numel(ds, 0, b);
    const int64_t per_batch = math::numel(is, b, is.size() - 1);  // index tuples per batch
    const int64_t batch_stride = math::numel(ds, b, ds.size()) * es;
    const Shape st = math::strides_of(Shape(ds.begin() + b, ds.begin() + b + m));
    char* y = static_cast<char*>(ctx.output_raw(0, x.elem_type(), out));
    const char* src = static_cast<const char*>(x.raw());
    for (int64_t t = 0; t < batches * per_batch; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < m; ++j) {
        int64_t v = ind[t * m + j];
        const int64_t d = ds[b + j];
        if (v < -d || v >= d) fail("index " + std::to_string(v) + " is out of range for dimension of size " + std::to_string(d));
        if (v < 0) v += d;
        off += v * st[j];
      }
      if (slice) std::memcpy(y + t * slice, src + (t / per_batch) * batch_stride + off * slice, slice);
    }
    (void)threads;
  }

 private:
  int64_t batch_dims_;
};

class ScatterKernel : public CpuKernel {
 public:
  ScatterKernel(const sdk::Node& node, const KernelConfig& c, bool elements)
      : CpuKernel(node, c), elements_(elements), axis_(node.attr_int("axis", 0)) {
    const std::string red = node.attr_string("reduction", "none");
    if (!parse_reduction(red, &reduction_)) fail_node(node, "unsupported reduction '" + red + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data"), idx = required(ctx, 1, "indices"), u = required(ctx, 2, "updates");
    if (u.elem_type() != x.elem_type()) fail("updates must have the data's type");
    const Shape ds = x.shape(), is = idx.shape(), us = u.shape();
    const std::vector<int64_t> ind = ints_of(idx, "indices");
    void* out = ctx.output_raw(0, x.elem_type(), ds);
    const size_t bytes = static_cast<size_t>(x.size()) * sdk::element_size(x.elem_type());
    if (bytes) std::memcpy(out, x.raw(), bytes);
    const bool ok = dispatch(ScatterTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      T* y = static_cast<T*>(out);
      const T* pu = u.data<T>();
      if (elements_) scatter_elements(y, ds, ind, is, pu, us);
      else scatter_nd(y, ds, ind, is, pu, us);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    (void)threads;
  }

 private:
  template <typename T>
  void scatter_nd(T* y, const Shape& ds, const std::vector<int64_t>& ind, const Shape& is, const T* u, const Shape& us) {
    const int64_t q = static_cast<int64_t>(is.size()), r = static_cast<int64_t>(ds.size());
    if (q < 1) fail("indices must have rank >= 1");
    const int64_t m = is.back();
    if (m > r) fail("indices' last dimension " + std::to_string(m) + " exceeds the data rank " + std::to_string(r));
    Shape want(is.begin(), is.end() - 1);
    want.insert(want.end(), ds.begin() + m, ds.end());
    if (us != want) fail("updates must have shape " + math::to_string(want) + ", found " + math::to_string(us));
    const int64_t slice = math::numel(ds, m, ds.size());
    const Shape st = math::strides_of(Shape(ds.begin(), ds.begin() + m));
    const int64_t tuples = math::numel(is, 0, is.size() - 1);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < m; ++j) {
        int64_t v = ind[t * m + j];
        if (v < -ds[j] || v >= ds[j]) fail("index " + std::to_string(v) + " is out of range for dimension of size " + std::to_string(ds[j]));
        if (v < 0) v += ds[j];
        off += v * st[j];
      }
      for (int64_t k = 0; k < slice; ++k) apply(reduction_, y + off * slice + k, u[t * slice + k]);
    }
  }

  template <typename T>
  void scatter_elements(T* y, const Shape& ds, const std::vector<int64_t>& ind, const Shape& is, const T* u, const Shape& us) {
    const int64_t r = static_cast<int64_t>(ds.size());
    if (static_cast<int64_t>(is.size()) != r || us != is)
      fail("indices and updates must have the same shape and the data's rank, found " + math::to_string(is) + " and " +
           math::to_string(us));
    const int64_t axis = math::normalize_axis(axis_, r);
    const Shape st = math::strides_of(ds);
    const int64_t n = math::numel(is);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = 0;
      for (int64_t a = r; a-- > 0;) {
        int64_t c = rem % is[a];
        rem /= is[a];
        if (a == axis) {
          c = ind[i];
          if (c < -ds[a] || c >= ds[a]) fail("index " + std::to_string(c) + " is out of range for axis size " + std::to_string(ds[a]));
          if (c < 0) c += ds[a];
        }
        off += c * st[a];
      }
      apply(reduction_, y + off, u[i]);
    }
  }

  bool elements_;
  int64_t axis_;
  Reduction reduction_ = Reduction::kNone;
};

class OneHotKernel : public CpuKernel {
 public:
  OneHotKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), axis_(node.attr_int("axis", -1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor idx = required(ctx, 0, "indices"), d = required(ctx, 1, "depth"), v = required(ctx, 2, "values");
    const int64_t depth = int_scalar_of(d, "depth");
    if (depth < 1) fail("depth must be positive, found " + std::to_string(depth));
    if (v.size() != 2) fail("values must have two elements [off, on]");
    std::vector<int64_t> ind(idx.size());
    const bool ok_idx = dispatch(NumericTypes{}, idx.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < idx.size(); ++i) ind[i] = math::numeric_cast<int64_t>(idx.data<T>()[i]);
    });
    if (!ok_idx) fail(std::string("unsupported indices type ") + type_name(idx.elem_type()));
    const Shape is = idx.shape();
    const int64_t r = static_cast<int64_t>(is.size()) + 1;
    const int64_t axis = math::normalize_axis(axis_, r);
    Shape out = is;
    out.insert(out.begin() + axis, depth);
    const int64_t outer = math::numel(is, 0, axis), inner = math::numel(is, axis, is.size());
    void* y = ctx.output_raw(0, v.elem_type(), out);
    const bool ok = dispatch(ScatterTypes{}, v.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T off = v.data<T>()[0], on = v.data<T>()[1];
      T* py = static_cast<T*>(y);
      std::fill(py, py + math::numel(out), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t k = ind[o * inner + i];
          if (k < 0) k += depth;
          if (k >= 0 && k < depth) py[(o * depth + k) * inner + i] = on;
        }
    });
    if (!ok) fail(std::string("unsupported values type ") + type_name(v.elem_type()));
    (void)threads;
  }

 private:
  int64_t axis_;
};

class NonZeroKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    Shape s = x.shape();
    if (s.empty()) s.push_back(1);  // a scalar counts as a one-element vector, as ONNX Runtime does
    const int64_t n = x.size(), r = static_cast<int64_t>(s.size());
    std::vector<int64_t> hits(static_cast<size_t>(n));
    int64_t nnz = 0;
    const bool ok = dispatch(ScatterTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      for (int64_t i = 0; i < n; ++i)
        if (px[i] != T(0)) hits[nnz++] = i;
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    int64_t* y = ctx.output<int64_t>(0, {r, nnz});
    for (int64_t j = 0; j < nnz; ++j) {
      int64_t rem = hits[j];
      for (int64_t a = r; a-- > 0;) {
        y[a * nnz + j] = rem % s[a];
        rem /= s[a];
      }
    }
    (void)threads;
  }
};

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  const SupportCheck any = any_types();
  r.add("GatherND", 11, 17, any, make_factory<GatherNDKernel>());
  auto scatter_ok = [](const sdk::Node& n) {
    Reduction red;
    return all_movable(n) && parse_reduction(n.attr_string("reduction", "none"), &red) &&
           input_type_in(n, 0, ScatterTypes::ids());
  };
  r.add("ScatterND", 11, 18, scatter_ok, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<ScatterKernel>(n, c, false);
  });
  r.add("ScatterElements", 11, 18, scatter_ok,
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<ScatterKernel>(n, c, true);
        });
  // Scatter (opsets 9 and 10) is ScatterElements before it was renamed.
  r.add("Scatter", 9, 10, scatter_ok,
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<ScatterKernel>(n, c, true);
        });
  r.add("OneHot", 9, 17, any, make_factory<OneHotKernel>());
  r.add("NonZero", 9, 17, inputs_of(ScatterTypes::ids()), make_factory<NonZeroKernel>());
}

}  // namespace ephost::cpu
