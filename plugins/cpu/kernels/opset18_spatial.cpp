// Operators new or changed in opset 18 that work on spatial windows: Col2Im, LpPool (every version,
// with opset 18's dilations and ceil_mode), CenterCropPad, GroupNormalization.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

int64_t product(const Shape& s, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= s[i];
  return p;
}

// Advances a multi-index over `dims` (last fastest); false after the last.
bool next_index(std::vector<int64_t>& idx, const Shape& dims) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// ---- Col2Im ---------------------------------------------------------------------------------------

class Col2ImKernel : public CpuKernel {
 public:
  Col2ImKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), dilations_(node.attr_ints("dilations")), pads_(node.attr_ints("pads")),
        strides_(node.attr_ints("strides")) {}

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const Shape image = ints_of(required(ctx, 1, "image_shape"), "image_shape");
    const Shape block = ints_of(required(ctx, 2, "block_shape"), "block_shape");
    const Shape xs = x.shape();
    const size_t n = image.size();
    if (n == 0 || block.size() != n)
      fail("image_shape and block_shape must have the same, positive, number of values");
    if (xs.size() != 3) fail("input must have rank 3 [N, C * prod(block_shape), L], found " + math::to_string(xs));
    Shape dil = dilations_.empty() ? Shape(n, 1) : dilations_, str = strides_.empty() ? Shape(n, 1) : strides_;
    Shape pads = pads_.empty() ? Shape(2 * n, 0) : pads_;
    if (dil.size() != n || str.size() != n || pads.size() != 2 * n)
      fail("dilations and strides need one value per image axis and pads two");
    Shape positions(n);
    for (size_t i = 0; i < n; ++i) {
      if (block[i] < 1 || dil[i] < 1 || str[i] < 1 || image[i] < 0 || pads[i] < 0 || pads[i + n] < 0)
        fail("block_shape, dilations and strides must be positive, image_shape and pads not negative");
      const int64_t span = image[i] + pads[i] + pads[i + n] - (dil[i] * (block[i] - 1) + 1);
      if (span < 0) fail("the block does not fit in the padded image on axis " + std::to_string(i));
      positions[i] = span / str[i] + 1;
    }
    const int64_t block_size = product(block), count = product(positions);
    if (xs[1] % block_size != 0)
      fail("input dimension 1 (" + std::to_string(xs[1]) + ") is not a multiple of prod(block_shape) = " +
           std::to_string(block_size));
    if (xs[2] != count)
      fail("input dimension 2 (" + std::to_string(xs[2]) + ") must be the number of block positions, " +
           std::to_string(count));
    const int64_t batch = xs[0], channels = xs[1] / block_size, image_size = product(image);
    Shape ys = {batch, channels};
    ys.insert(ys.end(), image.begin(), image.end());
    const bool ok = dispatch(Types<float, double>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, ys);
      std::fill(y, y + batch * channels * image_size, T(0));
      for (int64_t b = 0; b < batch * channels; ++b) {
        std::vector<int64_t> k(n, 0);
        int64_t kk = 0;
        do {
          std::vector<int64_t> l(n, 0);
          int64_t ll = 0;
          do {
            int64_t at = 0;
            bool inside = true;
            for (size_t i = 0; i < n && inside; ++i) {
              const int64_t pos = l[i] * str[i] - pads[i] + k[i] * dil[i];
              inside = pos >= 0 && pos < image[i];
              at = at * image[i] + pos;
            }
            if (inside) y[b * image_size + at] += px[(b * block_size + kk) * count + ll];
            ++ll;
          } while (next_index(l, positions));
          ++kk;
        } while (next_index(k, block));
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  Shape dilations_, pads_, strides_;
};

// ---- LpPool ---------------------------------------------------------------------------------------

class LpPoolKernel : public CpuKernel {
 public:
  LpPoolKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), kernel_(node.attr_ints("kernel_shape")), strides_(node.attr_ints("strides")),
        pads_(node.attr_ints("pads")), dilations_(node.attr_ints("dilations")),
        auto_pad_(node.attr_string("auto_pad", "NOTSET")), ceil_(node.attr_int("ceil_mode", 0) != 0) {
    // LpPool-1 has a float p; later versions an int.
    p_ = node.opset() < 2 ? node.attr_float("p", 2.f) : static_cast<double>(node.attr_int("p", 2));
    if (!(p_ > 0)) fail_node(node, "p must be positive");
    if (auto_pad_ != "NOTSET" && auto_pad_ != "VALID" && auto_pad_ != "SAME_UPPER" && auto_pad_ != "SAME_LOWER")
      fail_node(node, "unsupported auto_pad '" + auto_pad_ + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const Shape xs = x.shape();
    if (xs.size() < 3) fail("X must have rank 3 or more [N, C, D1, ...], found " + math::to_string(xs));
    const size_t n = xs.size() - 2;
    if (kernel_.size() != n) fail("kernel_shape needs one value per spatial axis (" + std::to_string(n) + ")");
    const Shape str = strides_.empty() ? Shape(n, 1) : strides_, dil = dilations_.empty() ? Shape(n, 1) : dilations_;
    Shape pads = pads_.empty() ? Shape(2 * n, 0) : pads_;
    if (str.size() != n || dil.size() != n || pads.size() != 2 * n)
      fail("strides and dilations need one value per spatial axis and pads two");
    Shape ys = {xs[0], xs[1]}, window(n);
    for (size_t i = 0; i < n; ++i) {
      if (kernel_[i] < 1 || str[i] < 1 || dil[i] < 1) fail("kernel_shape, strides and dilations must be positive");
      window[i] = (kernel_[i] - 1) * dil[i] + 1;
      const int64_t in = xs[i + 2];
      int64_t out;
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        out = (in + str[i] - 1) / str[i];
        const int64_t total = std::max<int64_t>(0, (out - 1) * str[i] + window[i] - in);
        pads[i] = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        pads[i + n] = total - pads[i];
      } else {
        if (auto_pad_ == "VALID") pads[i] = pads[i + n] = 0;
        const int64_t span = in + pads[i] + pads[i + n] - window[i];
        if (span < 0) fail("the window is larger than the padded input on spatial axis " + std::to_string(i));
        out = (ceil_ ? (span + str[i] - 1) / str[i] : span / str[i]) + 1;
        if (ceil_ && (out - 1) * str[i] >= in + pads[i]) --out;
      }
      ys.push_back(out);
    }
    const Shape spatial_in(xs.begin() + 2, xs.end()), spatial_out(ys.begin() + 2, ys.end());
    const int64_t in_size = product(spatial_in), out_size = product(spatial_out);
    const double p = p_;
    const bool ok = dispatch(Types<float, double>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, ys);
      math::parallel_for(xs[0] * xs[1], threads, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          const T* plane = px + c * in_size;
          std::vector<int64_t> o(n, 0);
          int64_t oo = 0;
          if (out_size > 0) do {
              double acc = 0;
              std::vector<int64_t> k(n, 0);
              do {
                int64_t at = 0;
                bool inside = true;
                for (size_t i = 0; i < n && inside; ++i) {
                  const int64_t pos = o[i] * str[i] - pads[i] + k[i] * dil[i];
                  inside = pos >= 0 && pos < spatial_in[i];
                  at = at * spatial_in[i] + pos;
                }
                if (inside) acc += std::pow(std::fabs(static_cast<double>(plane[at])), p);
              } while (next_index(k, kernel_));
              y[c * out_size + oo] = static_cast<T>(std::pow(acc, 1.0 / p));
              ++oo;
            } while (next_index(o, spatial_out));
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  Shape kernel_, strides_, pads_, dilations_;
  std::string auto_pad_;
  bool ceil_;
  double p_ = 2;
};

// ---- CenterCropPad --------------------------------------------------------------------------------

class CenterCropPadKernel : public CpuKernel {
 public:
  CenterCropPadKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), has_axes_(node.has_attr("axes")), axes_(node.attr_ints("axes")) {}

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "input_data");
    const Shape target = ints_of(required(ctx, 1, "shape"), "shape");
    const Shape xs = x.shape();
    const int64_t r = static_cast<int64_t>(xs.size());
    Shape axes = axes_;
    if (!has_axes_)
      for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    if (axes.size() != target.size())
      fail("shape has " + std::to_string(target.size()) + " values but there are " + std::to_string(axes.size()) +
           " axes to crop or pad");
    Shape ys = xs;
    std::vector<bool> seen(r, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = math::normalize_axis(axes[i], r);
      if (seen[a]) fail("axis " + std::to_string(a) + " appears twice in axes");
      seen[a] = true;
      if (target[i] < 0) fail("shape must not be negative, found " + math::to_string(target));
      ys[a] = target[i];
    }
    // Output index o reads input index o + offset (crop: half the excess; pad: minus half the padding).
    Shape offset(r);
    for (int64_t a = 0; a < r; ++a) offset[a] = xs[a] >= ys[a] ? (xs[a] - ys[a]) / 2 : -((ys[a] - xs[a]) / 2);
    const size_t es = sdk::element_size(x.elem_type());
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(ctx.output_raw(0, x.elem_type(), ys));
    const int64_t total = product(ys);
    std::memset(dst, 0, static_cast<size_t>(total) * es);
    if (total == 0 || product(xs) == 0) return;
    std::vector<int64_t> o(r, 0);
    int64_t oo = 0;
    do {
      int64_t at = 0;
      bool inside = true;
      for (int64_t a = 0; a < r && inside; ++a) {
        const int64_t pos = o[a] + offset[a];
        inside = pos >= 0 && pos < xs[a];
        at = at * xs[a] + pos;
      }
      if (inside) std::memcpy(dst + oo * es, src + at * es, es);
      ++oo;
    } while (next_index(o, ys));
  }

 private:
  bool has_axes_;
  Shape axes_;
};

// ---- GroupNormalization (opset 18: scale and bias per group) --------------------------------------

class GroupNorm18Kernel : public CpuKernel {
 public:
  GroupNorm18Kernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), epsilon_(node.attr_float("epsilon", 1e-5f)), groups_(node.attr_int("num_groups", 0)) {
    if (groups_ < 1) fail_node(node, "num_groups must be positive");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), scale = required(ctx, 1, "scale"), bias = required(ctx, 2, "bias");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("X must have rank 2 or more [N, C, ...], found " + math::to_string(xs));
    if (xs[1] % groups_ != 0)
      fail("the channels (" + std::to_string(xs[1]) + ") are not a multiple of num_groups (" +
           std::to_string(groups_) + ")");
    if (scale.size() != groups_ || bias.size() != groups_)
      fail("scale and bias must have num_groups (" + std::to_string(groups_) + ") values");
    const int64_t batch = xs[0], group_size = xs[1] / groups_ * product(xs, 2);
    const bool ok = dispatch(Types<float, double>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      if (scale.elem_type() != x.elem_type() || bias.elem_type() != x.elem_type())
        fail("scale and bias must have X's type");
      const T* px = x.data<T>();
      const T* ps = scale.data<T>();
      const T* pb = bias.data<T>();
      T* y = ctx.output<T>(0, xs);
      const double eps = epsilon_;
      math::parallel_for(batch * groups_, threads, 1, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const T* in = px + g * group_size;
          T* out = y + g * group_size;
          double mean = 0, var = 0;
          for (int64_t i = 0; i < group_size; ++i) mean += in[i];
          mean = group_size ? mean / static_cast<double>(group_size) : 0.0;
          for (int64_t i = 0; i < group_size; ++i) var += (in[i] - mean) * (in[i] - mean);
          var = group_size ? var / static_cast<double>(group_size) : 0.0;
          const double inv = 1.0 / std::sqrt(var + eps), s = ps[g % groups_], b = pb[g % groups_];
          for (int64_t i = 0; i < group_size; ++i) out[i] = static_cast<T>((in[i] - mean) * inv * s + b);
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  float epsilon_;
  int64_t groups_;
};

}  // namespace

void register_opset18_spatial_kernels(KernelRegistry& r) {
  const std::initializer_list<int32_t> real = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE};
  r.add("Col2Im", 18, 18, inputs_of(real), make_factory<Col2ImKernel>());
  r.add("LpPool", 1, 18, inputs_of(real), make_factory<LpPoolKernel>());
  r.add("CenterCropPad", 18, 18, [](const sdk::Node& n) { return all_movable(n); }, make_factory<CenterCropPadKernel>());
  r.add("GroupNormalization", 18, 18, inputs_of(real, {0, 1, 2}), make_factory<GroupNorm18Kernel>());
}

}  // namespace ephost::cpu
