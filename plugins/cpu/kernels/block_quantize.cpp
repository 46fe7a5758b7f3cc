// QuantizeLinear and DequantizeLinear from opset 21 on: per tensor, per axis and blocked (block_size:
// each scale covers block_size consecutive elements along axis), with output_dtype (QuantizeLinear-21,
// DequantizeLinear-24) and precision (QuantizeLinear-23, float only). Separate from quantize.cpp, whose
// per-tensor and per-axis kernels serve opsets 10 to 20. Element types: float x and scales; int8, uint8,
// int16 and uint16 quantized values (and int32 to dequantize). int4, uint4, int2, uint2 and the float8
// and float4 types wait for the host to know them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// Where each element of x finds its scale: x is [outer, n, inner] around axis; the scale is one value,
// n values (per axis) or [outer, ceil(n / block), inner] (blocked).
struct ScaleLayout {
  int64_t outer = 1, n = 1, inner = 1, block = 0, blocks = 1;
  enum { kTensor, kAxis, kBlocked } kind = kTensor;
  int64_t index(int64_t o, int64_t a, int64_t i) const {
    switch (kind) {
      case kTensor:
        return 0;
      case kAxis:
        return a;
      default:
        return (o * blocks + a / block) * inner + i;
    }
  }
};

class BlockQuantizeKernel : public CpuKernel {
 public:
  BlockQuantizeKernel(const sdk::Node& node, const KernelConfig& c, bool quantize)
      : CpuKernel(node, c), quantize_(quantize), axis_(node.attr_int("axis", 1)), block_(node.attr_int("block_size", 0)),
        output_dtype_(static_cast<int32_t>(node.attr_int("output_dtype", 0))) {
    if (block_ < 0) fail_node(node, "block_size must not be negative");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "x"), scale = required(ctx, 1, quantize_ ? "y_scale" : "x_scale");
    const sdk::Tensor zp = ctx.input(2);
    expect_type(scale, {EPHOST_ELEMENT_FLOAT}, "scale");
    const ScaleLayout layout = layout_of(x.shape(), scale.shape());
    if (zp.present() && zp.shape() != scale.shape())
      fail("the zero point must have the scale's shape " + math::to_string(scale.shape()) + ", found " +
           math::to_string(zp.shape()));
    if (quantize_)
      quantize(ctx, x, scale.data<float>(), zp, layout, threads);
    else
      dequantize(ctx, x, scale.data<float>(), zp, layout, threads);
  }

 private:
  ScaleLayout layout_of(const Shape& xs, const Shape& ss) const {
    ScaleLayout l;
    l.inner = math::numel(xs);
    if (math::numel(ss) == 1 && block_ == 0 && ss.size() <= 1) return l;
    const int64_t rank = static_cast<int64_t>(xs.size());
    const int64_t axis = math::normalize_axis(axis_, rank);
    l.outer = math::numel(xs, 0, axis);
    l.n = xs[axis];
    l.inner = math::numel(xs, axis + 1, xs.size());
    if (block_ == 0) {
      if (ss.size() != 1 || ss[0] != l.n)
        fail("a per-axis scale must be 1-D with axis " + std::to_string(axis) + "'s " + std::to_string(l.n) +
             " values, found " + math::to_string(ss) + " (blocked scales need block_size)");
      l.kind = ScaleLayout::kAxis;
      return l;
    }
    l.kind = ScaleLayout::kBlocked;
    l.block = block_;
    l.blocks = (l.n + block_ - 1) / block_;
    Shape expect = xs;
    expect[axis] = l.blocks;
    if (ss != expect)
      fail("a blocked scale must be x's shape with axis " + std::to_string(axis) + " divided into blocks of " +
           std::to_string(block_) + ": " + math::to_string(expect) + ", found " + math::to_string(ss));
    return l;
  }

  template <typename F>
  static void for_each(const ScaleLayout& l, int threads, F&& f) {
    math::parallel_for(l.outer * l.n, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(l.inner, 1)),
                       [&](int64_t r0, int64_t r1) {
                         for (int64_t r = r0; r < r1; ++r) {
                           const int64_t o = r / l.n, a = r % l.n;
                           for (int64_t i = 0; i < l.inner; ++i) f(r * l.inner + i, l.index(o, a, i));
                         }
                       });
  }

  void quantize(sdk::KernelContext& ctx, const sdk::Tensor& x, const float* s, const sdk::Tensor& zp,
                const ScaleLayout& l, int threads) {
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "x");
    int32_t out_type = zp.present() ? zp.elem_type() : (output_dtype_ ? output_dtype_ : EPHOST_ELEMENT_UINT8);
    if (zp.present() && output_dtype_ && output_dtype_ != out_type)
      fail("output_dtype and y_zero_point's type differ; give one of them, or the same type in both");
    const bool ok = dispatch(Types<uint8_t, int8_t, uint16_t, int16_t>{}, out_type, [&](auto tag) {
      using Q = decltype(tag);
      const Q* z = zp.present() ? zp.data<Q>() : nullptr;
      const float* px = x.data<float>();
      Q* y = ctx.output<Q>(0, x.shape());
      const float lo = static_cast<float>(std::numeric_limits<Q>::min());
      const float hi = static_cast<float>(std::numeric_limits<Q>::max());
      for_each(l, threads, [&](int64_t at, int64_t k) {
        // Round half to even, then add the zero point and saturate.
        const float v = std::nearbyint(px[at] / s[k]) + (z ? static_cast<float>(z[k]) : 0.f);
        y[at] = static_cast<Q>(std::min(hi, std::max(lo, v)));
      });
    });
    if (!ok) fail(std::string("unsupported output type ") + type_name(out_type));
  }

  void dequantize(sdk::KernelContext& ctx, const sdk::Tensor& x, const float* s, const sdk::Tensor& zp,
                  const ScaleLayout& l, int threads) {
    if (output_dtype_ != 0 && output_dtype_ != EPHOST_ELEMENT_FLOAT)
      fail(std::string("output_dtype ") + type_name(output_dtype_) + " is not supported (float is)");
    if (zp.present()) expect_same_type(x, "x", zp, "x_zero_point");
    const bool ok = dispatch(Types<uint8_t, int8_t, uint16_t, int16_t, int32_t>{}, x.elem_type(), [&](auto tag) {
      using Q = decltype(tag);
      const Q* z = zp.present() ? zp.data<Q>() : nullptr;
      const Q* px = x.data<Q>();
      float* y = ctx.output<float>(0, x.shape());
      for_each(l, threads, [&](int64_t at, int64_t k) {
        y[at] = static_cast<float>(static_cast<int64_t>(px[at]) - (z ? static_cast<int64_t>(z[k]) : 0)) * s[k];
      });
    });
    if (!ok) fail(std::string("unsupported input type ") + type_name(x.elem_type()));
  }

  bool quantize_;
  int64_t axis_, block_;
  int32_t output_dtype_;
};

const std::initializer_list<int32_t> kQuantized = {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT16,
                                                   EPHOST_ELEMENT_INT16};

bool quantize_supported(const sdk::Node& n) {
  const int64_t precision = n.attr_int("precision", 0);
  const int64_t out = n.attr_int("output_dtype", 0);
  return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) && input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT}) &&
         input_type_in(n, 2, kQuantized) && output_type_in(n, 0, kQuantized) &&
         (precision == 0 || precision == EPHOST_ELEMENT_FLOAT) && (out == 0 || type_in(static_cast<int32_t>(out), kQuantized));
}

bool dequantize_supported(const sdk::Node& n) {
  const std::initializer_list<int32_t> in = {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT16,
                                             EPHOST_ELEMENT_INT16, EPHOST_ELEMENT_INT32};
  const int64_t out = n.attr_int("output_dtype", 0);
  return input_type_in(n, 0, in) && input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT}) && input_type_in(n, 2, in) &&
         output_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) && (out == 0 || out == EPHOST_ELEMENT_FLOAT);
}

KernelFactory factory(bool quantize) {
  return [quantize](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<BlockQuantizeKernel>(n, c, quantize);
  };
}

}  // namespace

void register_block_quantize_kernels(KernelRegistry& r) {
  // Each version the kernel implements: QuantizeLinear 21 (block_size, output_dtype) and 23 (precision);
  // DequantizeLinear 21 (block_size) and 24 (output_dtype). Later types-only versions extend them.
  r.add("QuantizeLinear", 21, 21, quantize_supported, factory(true));
  r.add("QuantizeLinear", 23, 23, quantize_supported, factory(true));
  r.add("DequantizeLinear", 21, 21, dequantize_supported, factory(false));
  r.add("DequantizeLinear", 24, 24, dequantize_supported, factory(false));
}

}  // namespace ephost::cpu
