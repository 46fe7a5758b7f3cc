// Data movement: Concat, Split, Slice, Transpose, Gather, GatherElements, Tile, Pad, TopK.
// Element types are handled by size (1/2/4/8 bytes) wherever values are only copied.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "kernel_registry.h"
#include "math/narrow_types.h"
#include "math/parallel.h"
#include "math/slice.h"
#include "math/transpose.h"

namespace ephost::cpu {

namespace {

// Calls f(T{}) with an unsigned integer type of the element's size.
template <typename F>
bool by_size(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

class ConcatKernel : public CpuKernel {
 public:
  ConcatKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), axis_(node.attr_int("axis", 1)) {
    if (node.opset() >= 4 && !node.has_attr("axis")) fail_node(node, "attribute axis is required");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const size_t n = ctx.num_inputs();
    std::vector<sdk::Tensor> in;
    for (size_t i = 0; i < n; ++i) in.push_back(required(ctx, i, "inputs"));
    if (in.empty()) fail("needs at least one input");
    const Shape first = in[0].shape();
    const int64_t r = static_cast<int64_t>(first.size());
    if (r == 0) fail("inputs must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    Shape out = first;
    out[axis] = 0;
    for (const auto& t : in) {
      if (t.elem_type() != in[0].elem_type()) fail("all inputs must have the same type");
      const Shape s = t.shape();
      if (static_cast<int64_t>(s.size()) != r)
        fail("all inputs must have rank " + std::to_string(r) + ", found shape " + math::to_string(s));
      for (int64_t d = 0; d < r; ++d)
        if (d != axis && s[d] != first[d])
          fail("input shapes " + math::to_string(first) + " and " + math::to_string(s) +
               " differ outside the concatenation axis " + std::to_string(axis));
      out[axis] += s[axis];
    }
    const size_t es = sdk::element_size(in[0].elem_type());
    char* y = static_cast<char*>(ctx.output_raw(0, in[0].elem_type(), out));
    const int64_t outer = math::numel(first, 0, axis);
    const int64_t inner_bytes = math::numel(first, axis + 1, first.size()) * static_cast<int64_t>(es);
    const int64_t out_row = out[axis] * inner_bytes;
    math::parallel_for(outer, threads, std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(out_row, 1)),
                       [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        char* dst = y + o * out_row;
        for (const auto& t : in) {
          const int64_t chunk = t.dim(axis) * inner_bytes;
          if (chunk) std::memcpy(dst, static_cast<const char*>(t.raw()) + o * chunk, chunk);
          dst += chunk;
        }
      }
    });
  }

 private:
  int64_t axis_;
};

class SplitKernel : public CpuKernel {
 public:
  SplitKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", 0)), num_outputs_attr_(node.attr_int("num_outputs", 0)) {
    if (node.opset() < 13) attr_split_ = node.attr_ints("split");
    outputs_ = node.num_outputs();
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    const int64_t axis = math::normalize_axis(axis_, r);
    const int64_t dim = in[axis];
    const int64_t n = static_cast<int64_t>(outputs_);
    Shape split = attr_split_;
    const sdk::Tensor s = ctx.input(1);
    if ((opset() >= 13 || opset() == 1) && s.present() && s.size() > 0) split = ints_of(s, "split");
    if (split.empty()) {
      if (opset() >= 18 && num_outputs_attr_ > 0) {
        // Opset 18: ceil-sized chunks, the last one smaller.
        const int64_t chunk = (dim + num_outputs_attr_ - 1) / num_outputs_attr_;
        for (int64_t i = 0; i < n; ++i) split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
      } else {
        if (n == 0 || dim % n != 0)
          fail("axis " + std::to_string(axis) + " of size " + std::to_string(dim) + " cannot be split evenly into " +
               std::to_string(n) + " outputs");
        split.assign(n, dim / n);
      }
    }
    if (static_cast<int64_t>(split.size()) != n)
      fail("split " + math::to_string(split) + " must have one entry per output (" + std::to_string(n) + ")");
    int64_t total = 0;
    for (int64_t v : split) {
      if (v < 0) fail("split " + math::to_string(split) + " has a negative entry");
      total += v;
    }
    if (total != dim)
      fail("split " + math::to_string(split) + " sums to " + std::to_string(total) + " but the axis has size " +
           std::to_string(dim));
    const size_t es = sdk::element_size(x.elem_type());
    const int64_t outer = math::numel(in, 0, axis);
    const int64_t inner_bytes = math::numel(in, axis + 1, in.size()) * static_cast<int64_t>(es);
    const char* src = static_cast<const char*>(x.raw());
    int64_t offset = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t chunk = split[i] * inner_bytes;
      if (output_wanted(i)) {
        Shape os = in;
        os[axis] = split[i];
        char* y = static_cast<char*>(ctx.output_raw(i, x.elem_type(), os));
        math::parallel_for(outer, threads, std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(chunk, 1)),
                           [&](int64_t o0, int64_t o1) {
          for (int64_t o = o0; o < o1; ++o)
            if (chunk) std::memcpy(y + o * chunk, src + o * dim * inner_bytes + offset, chunk);
        });
      }
      offset += chunk;
    }
  }

 private:
  int64_t axis_, num_outputs_attr_;
  Shape attr_split_;
  size_t outputs_;
};

class SliceKernel : public CpuKernel {
 public:
  SliceKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    if (node.opset() < 10) {
      attr_starts_ = node.attr_ints("starts");
      attr_ends_ = node.attr_ints("ends");
      attr_axes_ = node.attr_ints("axes");
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    Shape starts = attr_starts_, ends = attr_ends_, axes = attr_axes_, steps;
    if (opset() >= 10) {
      starts = ints_of(required(ctx, 1, "starts"), "starts");
      ends = ints_of(required(ctx, 2, "ends"), "ends");
      const sdk::Tensor a = ctx.input(3), s = ctx.input(4);
      if (a.present()) axes = ints_of(a, "axes");
      if (s.present()) steps = ints_of(s, "steps");
    }
    const math::SliceWindow w = math::slice_window(in, starts, ends, axes, steps);
    void* y = ctx.output_raw(0, x.elem_type(), w.out);
    if (math::numel(w.out) == 0) return;
    const Shape st = math::strides_of(in);
    const bool ok = by_size(sdk::element_size(x.elem_type()), [&](auto tag) {
      using T = decltype(tag);
      math::copy_window(x.data<T>(), st, w, static_cast<T*>(y), threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  Shape attr_starts_, attr_ends_, attr_axes_;
};

class TransposeKernel : public CpuKernel {
 public:
  TransposeKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), perm_(node.attr_ints("perm")) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    std::vector<int64_t> perm = perm_;
    const Shape out = math::transpose_shape(in, &perm);
    void* y = ctx.output_raw(0, x.elem_type(), out);
    const int32_t type = x.elem_type();
    if (sdk::element_size(type) == 0 && math::is_narrow_type(type)) {
      // Packed (int4, uint4, int2, uint2, float4e2m1): moved as one code per byte, then packed again.
      const int64_t n = math::numel(in);
      std::vector<uint8_t> codes(static_cast<size_t>(n)), moved(static_cast<size_t>(n));
      math::narrow_unpack_codes(type, x.raw(), n, codes.data());
      math::transpose(codes.data(), in, perm, moved.data(), 1, threads);
      math::narrow_pack_codes(type, moved.data(), n, y);
      return;
    }
    math::transpose(x.raw(), in, perm, y, sdk::element_size(type), threads);
  }

 private:
  std::vector<int64_t> perm_;
};

class GatherKernel : public CpuKernel {
 public:
  GatherKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), axis_(node.attr_int("axis", 0)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data"), idx = required(ctx, 1, "indices");
    const Shape in = x.shape(), is = idx.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) fail("data must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    const std::vector<int64_t> ind = ints_of(idx, "indices");
    const int64_t dim = in[axis];
    for (int64_t v : ind)
      if (v < -dim || v >= dim)
        fail("index " + std::to_string(v) + " is out of range for axis " + std::to_string(axis) + " of size " +
             std::to_string(dim));
    Shape out(in.begin(), in.begin() + axis);
    out.insert(out.end(), is.begin(), is.end());
    out.insert(out.end(), in.begin() + axis + 1, in.end());
    char* y = static_cast<char*>(ctx.output_raw(0, x.elem_type(), out));
    const int64_t es = static_cast<int64_t>(sdk::element_size(x.elem_type()));
    const int64_t outer = math::numel(in, 0, axis), inner = math::numel(in, axis + 1, in.size()) * es;
    const int64_t n = static_cast<int64_t>(ind.size());
    const char* src = static_cast<const char*>(x.raw());
    math::parallel_for(outer * n, threads, std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(inner, 1)),
                       [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t o = j / n, k = j % n;
        const int64_t v = ind[k] < 0 ? ind[k] + dim : ind[k];
        if (inner) std::memcpy(y + j * inner, src + (o * dim + v) * inner, inner);
      }
    });
  }

 private:
  int64_t axis_;
};

class GatherElementsKernel : public CpuKernel {
 public:
  GatherElementsKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), axis_(node.attr_int("axis", 0)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data"), idx = required(ctx, 1, "indices");
    const Shape in = x.shape(), is = idx.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0 || static_cast<int64_t>(is.size()) != r)
      fail("data and indices must have the same rank >= 1, found " + math::to_string(in) + " and " + math::to_string(is));
    const int64_t axis = math::normalize_axis(axis_, r);
    const std::vector<int64_t> ind = ints_of(idx, "indices");
    const int64_t dim = in[axis];
    for (int64_t v : ind)
      if (v < -dim || v >= dim) fail("index " + std::to_string(v) + " is out of range for axis size " + std::to_string(dim));
    const Shape st = math::strides_of(in);
    void* y = ctx.output_raw(0, x.elem_type(), is);
    const bool ok = by_size(sdk::element_size(x.elem_type()), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = static_cast<T*>(y);
      const int64_t n = math::numel(is);
      for (int64_t i = 0; i < n; ++i) {
        int64_t rem = i, off = 0;
        for (int64_t a = r; a-- > 0;) {
          int64_t c = rem % is[a];
          rem /= is[a];
          if (a == axis) c = ind[i] < 0 ? ind[i] + dim : ind[i];
          off += c * st[a];
        }
        py[i] = px[off];
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  int64_t axis_;
};

class TileKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape in = x.shape();
    const Shape reps = ints_of(required(ctx, 1, "repeats"), "repeats");
    if (reps.size() != in.size())
      fail("repeats " + math::to_string(reps) + " must have one entry per input axis (rank " + std::to_string(in.size()) + ")");
    Shape out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (reps[i] < 0) fail("repeats must not be negative");
      if (reps[i] > 0 && in[i] > std::numeric_limits<int64_t>::max() / reps[i])
        fail("repeats " + math::to_string(reps) + " make axis " + std::to_string(i) + " of " + std::to_string(in[i]) +
             " longer than int64 counts");
      out[i] = in[i] * reps[i];
    }
    void* y = ctx.output_raw(0, x.elem_type(), out);
    if (math::numel(out) == 0) return;
    const Shape st = math::strides_of(in);
    const bool ok = by_size(sdk::element_size(x.elem_type()), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = static_cast<T*>(y);
      const size_t r = in.size();
      if (r == 0) {
        py[0] = px[0];
        return;
      }
      const int64_t inner = out[r - 1], w = in[r - 1];
      const int64_t rows = math::numel(out) / inner;
      math::parallel_for(rows, threads, std::max<int64_t>(1, math::kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
        for (int64_t row = r0; row < r1; ++row) {
          int64_t rem = row, off = 0;
          for (size_t a = r - 1; a-- > 0;) {
            off += ((rem % out[a]) % in[a]) * st[a];
            rem /= out[a];
          }
          T* yr = py + row * inner;
          for (int64_t k = 0; k < inner; k += w) std::memcpy(yr + k, px + off, sizeof(T) * w);
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }
};

class PadKernel : public CpuKernel {
 public:
  PadKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), mode_(node.attr_string("mode", "constant")) {
    if (mode_ != "constant" && mode_ != "reflect" && mode_ != "edge" && mode_ != "wrap")
      fail_node(node, "unsupported mode '" + mode_ + "'");
    if (node.opset() < 11) {
      attr_pads_ = node.attr_ints(node.opset() < 2 ? "paddings" : "pads");
      attr_value_ = node.attr_float("value", 0.f);
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    Shape pads = attr_pads_;
    sdk::Tensor value;
    if (opset() >= 11) {
      pads = ints_of(required(ctx, 1, "pads"), "pads");
      value = ctx.input(2);
      if (value.present() && value.size() == 0) value = sdk::Tensor();
      if (value.present() && value.elem_type() != x.elem_type()) fail("constant_value must have the data's type");
      const sdk::Tensor axes_t = ctx.input(3);
      if (axes_t.present()) {
        // Opset 18: pads only for the listed axes.
        const Shape axes = ints_of(axes_t, "axes");
        if (pads.size() != 2 * axes.size()) fail("pads must have two entries per listed axis");
        Shape full(2 * r, 0);
        for (size_t i = 0; i < axes.size(); ++i) {
          const int64_t a = math::normalize_axis(axes[i], r);
          full[a] = pads[i];
          full[a + r] = pads[i + axes.size()];
        }
        pads = full;
      }
    }
    if (static_cast<int64_t>(pads.size()) != 2 * r)
      fail("pads " + math::to_string(pads) + " must have 2 * rank = " + std::to_string(2 * r) + " entries");
    Shape out(r);
    for (int64_t a = 0; a < r; ++a) {
      const int64_t d = in[a], pb = pads[a], pe = pads[a + r];
      if (__builtin_add_overflow(d, pb, &out[a]) || __builtin_add_overflow(out[a], pe, &out[a]))
        fail("pads " + math::to_string(pads) + " make axis " + std::to_string(a) + " larger than can be counted");
      if (out[a] < 0) fail("pads " + math::to_string(pads) + " remove more than the input has on axis " + std::to_string(a));
      if (mode_ != "constant" && d == 0 && out[a] > 0) fail("cannot pad an empty axis in mode " + mode_);
    }
    // The output first: the host refuses a size it cannot hold before anything of that size is made here.
    void* y = ctx.output_raw(0, x.elem_type(), out);
    if (math::numel(out) == 0) return;
    // Per axis: output position -> input position, or -1 for the constant.
    std::vector<std::vector<int64_t>> maps(r);
    for (int64_t a = 0; a < r; ++a) {
      const int64_t d = in[a], pb = pads[a];
      maps[a].resize(out[a]);
      for (int64_t o = 0; o < out[a]; ++o) {
        int64_t j = o - pb;
        if (j < 0 || j >= d) {
          if (mode_ == "constant") {
            j = -1;
          } else if (mode_ == "edge") {
            j = std::clamp<int64_t>(j, 0, d - 1);
          } else if (mode_ == "wrap") {
            j = ((j % d) + d) % d;
          } else if (d == 1) {
            j = 0;  // a one-element axis reflects onto itself
          } else {
            const int64_t period = 2 * (d - 1);
            j = ((j % period) + period) % period;
            if (j >= d) j = period - j;
          }
        }
        maps[a][o] = j;
      }
    }
    const Shape st = math::strides_of(in);
    if (math::is_narrow_type(x.elem_type())) return pad_codes(x, value, out, maps, st, y, threads);
    bool ok = false;
    dispatch(NumericTypes{}, x.elem_type(), [&](auto tag) {
      ok = true;
      using T = decltype(tag);
      T v = value.present() ? value.data<T>()[0] : static_cast<T>(attr_value_);
      fill(x.data<T>(), out, maps, st, v, static_cast<T*>(y), threads);
    });
    if (!ok && x.elem_type() == EPHOST_ELEMENT_BOOL) {
      ok = true;
      const uint8_t v = value.present() ? value.data<uint8_t>()[0] : uint8_t(attr_value_ != 0.f);
      fill(x.data<uint8_t>(), out, maps, st, v, static_cast<uint8_t*>(y), threads);
    }
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  // The float8 family, float4e2m1 and the packed integers: padded as one code per byte, then packed
  // again; the constant is constant_value's code, or the code of the attribute's value (opset < 11, 0).
  void pad_codes(const sdk::Tensor& x, const sdk::Tensor& value, const Shape& out,
                 const std::vector<std::vector<int64_t>>& maps, const Shape& st, void* y, int threads) const {
    const int32_t type = x.elem_type();
    const int64_t n = math::numel(x.shape()), m = math::numel(out);
    std::vector<uint8_t> codes(static_cast<size_t>(std::max<int64_t>(n, 1))), padded(static_cast<size_t>(m));
    math::narrow_unpack_codes(type, x.raw(), n, codes.data());
    uint8_t v = 0;
    if (value.present())
      math::narrow_unpack_codes(type, value.raw(), 1, &v);
    else
      v = math::narrow_encode_one(type, attr_value_, math::NarrowEncoding{});
    fill(codes.data(), out, maps, st, v, padded.data(), threads);
    math::narrow_pack_codes(type, padded.data(), m, y);
  }

  template <typename T>
  static void fill(const T* x, const Shape& out, const std::vector<std::vector<int64_t>>& maps, const Shape& st, T v,
                   T* y, int threads) {
    const size_t r = out.size();
    if (r == 0) {
      y[0] = x[0];
      return;
    }
    const int64_t inner = out[r - 1];
    const int64_t rows = math::numel(out) / inner;
    const std::vector<int64_t>& last = maps[r - 1];
    math::parallel_for(rows, threads, std::max<int64_t>(1, math::kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        int64_t rem = row, off = 0;
        bool pad_row = false;
        for (size_t a = r - 1; a-- > 0;) {
          const int64_t j = maps[a][rem % out[a]];
          rem /= out[a];
          if (j < 0) pad_row = true;
          else off += j * st[a];
        }
        T* yr = y + row * inner;
        if (pad_row) {
          std::fill(yr, yr + inner, v);
          continue;
        }
        const T* xr = x + off;
        for (int64_t i = 0; i < inner; ++i) yr[i] = last[i] < 0 ? v : xr[last[i]];
      }
    });
  }

  std::string mode_;
  Shape attr_pads_;
  float attr_value_ = 0.f;
};

class TopKKernel : public CpuKernel {
 public:
  TopKKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", -1)), largest_(node.attr_int("largest", 1) != 0),
        attr_k_(node.attr_int("k", -1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) fail("X must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    int64_t k = attr_k_;
    if (opset() >= 10) {
      const std::vector<int64_t> kv = ints_of(required(ctx, 1, "K"), "K");
      if (kv.size() != 1) fail("K must have exactly one element");
      k = kv[0];
    }
    const int64_t n = in[axis];
    if (k < 0 || k > n) fail("k = " + std::to_string(k) + " is out of range for axis size " + std::to_string(n));
    Shape out = in;
    out[axis] = k;
    const int64_t outer = math::numel(in, 0, axis), inner = math::numel(in, axis + 1, in.size());
    const bool ok = dispatch(Types<float, double, int32_t, int64_t, int8_t, uint8_t>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* vals = ctx.output<T>(0, out);
      int64_t* idx = output_wanted(1) ? ctx.output<int64_t>(1, out) : nullptr;
      const bool largest = largest_;
      math::parallel_for(outer * inner, threads, 64, [&](int64_t l0, int64_t l1) {
        std::vector<int64_t> order(n);
        for (int64_t l = l0; l < l1; ++l) {
          const int64_t o = l / inner, i = l % inner;
          const T* base = px + o * n * inner + i;
          std::iota(order.begin(), order.end(), 0);
          // Ties keep the lower index first, as ONNX Runtime does.
          auto better = [&](int64_t a, int64_t b) {
            const T va = base[a * inner], vb = base[b * inner];
            if (va != vb) return largest ? va > vb : va < vb;
            return a < b;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = (o * k + j) * inner + i;
            vals[at] = base[order[j] * inner];
            if (idx) idx[at] = order[j];
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t attr_k_;
};

class TriluKernel : public CpuKernel {
 public:
  TriluKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), upper_(node.attr_int("upper", 1) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape s = x.shape();
    if (s.size() < 2) fail("input must have rank >= 2, found " + math::to_string(s));
    const sdk::Tensor kt = ctx.input(1);
    const int64_t k = kt.present() ? int_scalar_of(kt, "k") : 0;
    const int64_t N = s[s.size() - 2], M = s.back(), mats = math::numel(s, 0, s.size() - 2);
    void* y = ctx.output_raw(0, x.elem_type(), s);
    const bool upper = upper_;
    const bool ok = by_size(sdk::element_size(x.elem_type()), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* py = static_cast<T*>(y);
      math::parallel_for(mats * N, threads, 256, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t i = r % N;
          for (int64_t j = 0; j < M; ++j) {
            const bool keep = upper ? j - i >= k : j - i <= k;
            py[r * M + j] = keep ? px[r * M + j] : T(0);
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  bool upper_;
};

// DepthToSpace and SpaceToDepth are a reshape, a 6-D transpose and a reshape.
class DepthSpaceKernel : public CpuKernel {
 public:
  DepthSpaceKernel(const sdk::Node& node, const KernelConfig& c, bool to_space)
      : CpuKernel(node, c), to_space_(to_space), block_(node.attr_int("blocksize", 0)),
        crd_(node.attr_string("mode", "DCR") == "CRD") {
    if (block_ <= 0) fail_node(node, "blocksize must be positive");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape s = x.shape();
    if (s.size() != 4) fail("input must have rank 4, found " + math::to_string(s));
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3], b = block_;
    Shape view, out;
    std::vector<int64_t> perm;
    if (to_space_) {
      if (C % (b * b) != 0) fail("channels " + std::to_string(C) + " are not divisible by blocksize^2");
      const int64_t c = C / (b * b);
      if (crd_) {
        view = {N, c, b, b, H, W};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        view = {N, b, b, c, H, W};
        perm = {0, 3, 4, 1, 5, 2};
      }
      out = {N, c, H * b, W * b};
    } else {
      if (H % b != 0 || W % b != 0) fail("spatial dims " + math::to_string(s) + " are not divisible by the blocksize");
      view = {N, C, H / b, b, W / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      out = {N, C * b * b, H / b, W / b};
    }
    void* y = ctx.output_raw(0, x.elem_type(), out);
    math::transpose(x.raw(), view, perm, y, sdk::element_size(x.elem_type()), threads);
  }

 private:
  bool to_space_;
  int64_t block_;
  bool crd_;
};

class EyeLikeKernel : public CpuKernel {
 public:
  EyeLikeKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), k_(node.attr_int("k", 0)), dtype_(static_cast<int32_t>(node.attr_int("dtype", 0))) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape s = x.shape();
    if (s.size() != 2) fail("input must have rank 2, found " + math::to_string(s));
    const int32_t type = dtype_ ? dtype_ : x.elem_type();
    void* y = ctx.output_raw(0, type, s);
    const bool ok = dispatch(Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>{},
                             type, [&](auto tag) {
      using T = decltype(tag);
      T* py = static_cast<T*>(y);
      std::fill(py, py + math::numel(s), T(0));
      for (int64_t i = 0; i < s[0]; ++i) {
        const int64_t j = i + k_;
        if (j >= 0 && j < s[1]) py[i * s[1] + j] = T(1);
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(type));
    (void)threads;
  }

 private:
  int64_t k_;
  int32_t dtype_;
};

}  // namespace

void register_tensor_kernels(KernelRegistry& r) {
  const SupportCheck any = any_types();
  r.add("Concat", 1, 17, any, make_factory<ConcatKernel>());
  r.add("Split", 1, 18, any, make_factory<SplitKernel>());
  r.add("Slice", 1, 17, any, make_factory<SliceKernel>());
  // Transpose-21 on takes the packed types too (int4 and uint4 at 21, float4e2m1 at 23, int2 and uint2 at 25).
  r.add("Transpose", 1, 17, movable_or_narrow(), make_factory<TransposeKernel>());
  r.add("Gather", 1, 17, any, make_factory<GatherKernel>());
  r.add("GatherElements", 11, 17, any, make_factory<GatherElementsKernel>());
  r.add("Tile", 6, 17, any, make_factory<TileKernel>());
  r.add("Pad", 1, 19,
        [](const sdk::Node& n) {
          const std::string mode = n.attr_string("mode", "constant");
          if (mode != "constant" && mode != "reflect" && mode != "edge" && !(mode == "wrap" && n.opset() >= 19)) return false;
          // The narrow types from opset 21 on (int4, uint4; float8 and float4e2m1 at 23; int2, uint2 at 25).
          return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT8,
                                      EPHOST_ELEMENT_INT16, EPHOST_ELEMENT_UINT16, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_UINT32,
                                      EPHOST_ELEMENT_INT64, EPHOST_ELEMENT_UINT64, EPHOST_ELEMENT_BOOL,
                                      EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2,
                                      EPHOST_ELEMENT_FLOAT8E5M2FNUZ, EPHOST_ELEMENT_UINT4, EPHOST_ELEMENT_INT4,
                                      EPHOST_ELEMENT_FLOAT4E2M1, EPHOST_ELEMENT_FLOAT8E8M0, EPHOST_ELEMENT_UINT2,
                                      EPHOST_ELEMENT_INT2});
        },
        make_factory<PadKernel>());
  r.add("Trilu", 14, 17, any, make_factory<TriluKernel>());
  r.add("DepthToSpace", 1, 17, any, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<DepthSpaceKernel>(n, c, true);
  });
  r.add("SpaceToDepth", 1, 17, any, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<DepthSpaceKernel>(n, c, false);
  });
  r.add("EyeLike", 9, 17, any, make_factory<EyeLikeKernel>());
  r.add("TopK", 1, 17,
        inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64, EPHOST_ELEMENT_INT8,
                   EPHOST_ELEMENT_UINT8}),
        make_factory<TopKKernel>());
}

}  // namespace ephost::cpu
