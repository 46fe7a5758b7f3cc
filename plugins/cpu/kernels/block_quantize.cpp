// QuantizeLinear and DequantizeLinear from opset 21 on: per tensor, per axis and blocked (block_size:
// each scale covers block_size consecutive elements along axis), with output_dtype (QuantizeLinear-21,
// DequantizeLinear-24) and precision (QuantizeLinear-23, float only). Separate from quantize.cpp, whose
// per-tensor and per-axis kernels serve opsets 10 to 20 (this kernel takes their float8 models, from
// opset 19). Element types: float x and scales; int8, uint8, int16 and uint16 quantized values (and
// int32 to dequantize), and the narrow types (math/narrow_types.h): int4, uint4, int2, uint2 (rounded
// half to even, plus the zero point, clamped), the float8 family (x / scale with Cast's rounding and
// saturate) and float4e2m1.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernel_registry.h"
#include "math/narrow_types.h"
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
    narrow_.saturate = node.attr_int("saturate", 1) != 0;
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
    if (math::is_narrow_type(out_type)) return quantize_narrow(ctx, x, s, zp, l, out_type, threads);
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
    if (math::is_narrow_type(x.elem_type())) return dequantize_narrow(ctx, x, s, zp, l, threads);
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

  static int64_t scale_count(const ScaleLayout& l) {
    return l.kind == ScaleLayout::kTensor ? 1 : l.kind == ScaleLayout::kAxis ? l.n : l.outer * l.blocks * l.inner;
  }

  // The zero points as doubles (zeros when absent).
  static std::vector<double> zero_points(const sdk::Tensor& zp, int64_t count) {
    std::vector<double> z(static_cast<size_t>(count), 0.0);
    if (zp.present()) math::narrow_decode(zp.elem_type(), zp.raw(), 0, zp.size(), z.data());
    return z;
  }

  void quantize_narrow(sdk::KernelContext& ctx, const sdk::Tensor& x, const float* s, const sdk::Tensor& zp,
                       const ScaleLayout& l, int32_t out_type, int threads) {
    const std::vector<double> z = zero_points(zp, scale_count(l));
    const bool integer = math::is_narrow_integer(out_type);
    const float* px = x.data<float>();
    const int64_t n = x.size();
    if (integer) {
      // In float, then the vector encoder: nearbyint(x / s) + z is exact below 2^24 and clamps the same
      // above, so the codes are those of the double computation below.
      std::vector<float> rounded(static_cast<size_t>(n));
      for_each(l, threads, [&](int64_t at, int64_t k) {
        rounded[static_cast<size_t>(at)] = std::nearbyint(px[at] / s[k]) + static_cast<float>(z[static_cast<size_t>(k)]);
      });
      void* y = ctx.output_raw(0, out_type, x.shape());
      constexpr int64_t kBlock = 4096;
      math::parallel_for((n + kBlock - 1) / kBlock, threads, std::max<int64_t>(1, math::kElementwiseGrain / kBlock),
                         [&](int64_t b0, int64_t b1) {
                           for (int64_t b = b0; b < b1; ++b) {
                             const int64_t begin = b * kBlock;
                             math::narrow_encode_integer_f32(out_type, rounded.data() + begin,
                                                             std::min(kBlock, n - begin), y, begin);
                           }
                         });
      return;
    }
    std::vector<double> values(static_cast<size_t>(n));
    for_each(l, threads, [&](int64_t at, int64_t k) {
      const float q = px[at] / s[k];  // in float, as ONNX's reference divides
      values[static_cast<size_t>(at)] = (integer ? std::nearbyint(q) : q) + z[static_cast<size_t>(k)];
    });
    void* y = ctx.output_raw(0, out_type, x.shape());
    encode_blocks(out_type, values.data(), n, y, threads);
  }

  void dequantize_narrow(sdk::KernelContext& ctx, const sdk::Tensor& x, const float* s, const sdk::Tensor& zp,
                         const ScaleLayout& l, int threads) {
    const std::vector<double> z = zero_points(zp, scale_count(l));
    const int64_t n = x.size();
    std::vector<double> values(static_cast<size_t>(n));
    math::narrow_decode(x.elem_type(), x.raw(), 0, n, values.data());
    float* y = ctx.output<float>(0, x.shape());
    for_each(l, threads, [&](int64_t at, int64_t k) {
      y[at] = static_cast<float>(values[static_cast<size_t>(at)] - z[static_cast<size_t>(k)]) * s[k];
    });
  }

  // Encodes in blocks whose length is a multiple of every packed type's elements per byte, so that no
  // two threads write one byte.
  void encode_blocks(int32_t type, const double* values, int64_t n, void* y, int threads) const {
    constexpr int64_t kBlock = 512;
    math::parallel_for((n + kBlock - 1) / kBlock, threads, std::max<int64_t>(1, math::kElementwiseGrain / kBlock),
                       [&](int64_t b0, int64_t b1) {
                         for (int64_t b = b0; b < b1; ++b) {
                           const int64_t begin = b * kBlock;
                           math::narrow_encode(type, values + begin, std::min(kBlock, n - begin), y, begin, narrow_);
                         }
                       });
  }

  bool quantize_;
  int64_t axis_, block_;
  int32_t output_dtype_;
  math::NarrowEncoding narrow_;  // saturate, for the float8 outputs
};

const std::initializer_list<int32_t> kQuantized = {
    EPHOST_ELEMENT_UINT8,        EPHOST_ELEMENT_INT8,           EPHOST_ELEMENT_UINT16,     EPHOST_ELEMENT_INT16,
    EPHOST_ELEMENT_UINT4,        EPHOST_ELEMENT_INT4,           EPHOST_ELEMENT_UINT2,      EPHOST_ELEMENT_INT2,
    EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2, EPHOST_ELEMENT_FLOAT8E5M2FNUZ,
    EPHOST_ELEMENT_FLOAT4E2M1};

bool quantize_supported(const sdk::Node& n) {
  const int64_t precision = n.attr_int("precision", 0);
  const int64_t out = n.attr_int("output_dtype", 0);
  return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) && input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT}) &&
         input_type_in(n, 2, kQuantized) && output_type_in(n, 0, kQuantized) &&
         (precision == 0 || precision == EPHOST_ELEMENT_FLOAT) && (out == 0 || type_in(static_cast<int32_t>(out), kQuantized));
}

bool dequantize_supported(const sdk::Node& n) {
  const std::initializer_list<int32_t> in = {
      EPHOST_ELEMENT_UINT8,          EPHOST_ELEMENT_INT8,       EPHOST_ELEMENT_UINT16,         EPHOST_ELEMENT_INT16,
      EPHOST_ELEMENT_INT32,          EPHOST_ELEMENT_UINT4,      EPHOST_ELEMENT_INT4,           EPHOST_ELEMENT_UINT2,
      EPHOST_ELEMENT_INT2,           EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2,
      EPHOST_ELEMENT_FLOAT8E5M2FNUZ, EPHOST_ELEMENT_FLOAT4E2M1};
  const int64_t out = n.attr_int("output_dtype", 0);
  return input_type_in(n, 0, in) && input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT}) && input_type_in(n, 2, in) &&
         output_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) && (out == 0 || out == EPHOST_ELEMENT_FLOAT);
}

// Opsets 19 and 20: the float8 models (input `i`, x or the zero point, is float8), which quantize.cpp's
// kernel of opsets 10 to 20 leaves.
bool float8_input(const sdk::Node& n, size_t i) {
  if (!n.has_input(i)) return false;
  const int32_t t = n.input(i).elem_type();
  return t >= EPHOST_ELEMENT_FLOAT8E4M3FN && t <= EPHOST_ELEMENT_FLOAT8E5M2FNUZ;
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
  r.add("QuantizeLinear", 19, 19, [](const sdk::Node& n) { return float8_input(n, 2) && quantize_supported(n); },
        factory(true));
  r.add("DequantizeLinear", 19, 19, [](const sdk::Node& n) { return float8_input(n, 0) && dequantize_supported(n); },
        factory(false));
  r.add("QuantizeLinear", 21, 21, quantize_supported, factory(true));
  r.add("QuantizeLinear", 23, 23, quantize_supported, factory(true));
  r.add("DequantizeLinear", 21, 21, dequantize_supported, factory(false));
  r.add("DequantizeLinear", 24, 24, dequantize_supported, factory(false));
}

}  // namespace ephost::cpu
