// QuantizeLinear / DequantizeLinear (per-tensor and per-axis; int8, uint8 and, for dequantize, int32): the
// layout of scales over the tensor; the element loops, vectorised per ISA tier, are math/quantize.h's.
#include <algorithm>

#include "kernel_registry.h"
#include "math/parallel.h"
#include "math/quantize.h"

namespace ephost::cpu {

namespace {

class QuantizeKernel : public CpuKernel {
 public:
  QuantizeKernel(const sdk::Node& node, const KernelConfig& c, bool quantize)
      : CpuKernel(node, c), quantize_(quantize), axis_(node.attr_int("axis", 1)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "x"), scale = required(ctx, 1, quantize_ ? "y_scale" : "x_scale");
    const sdk::Tensor zp = ctx.input(2);
    expect_type(scale, {EPHOST_ELEMENT_FLOAT}, "scale");
    const Shape xs = x.shape();
    // Per-tensor (one scale) or per-axis (a 1-D scale along `axis`).
    int64_t outer = 1, n = 1, inner = math::numel(xs);
    if (scale.size() != 1) {
      if (scale.rank() != 1) fail("scale must be a scalar or 1-D, found " + math::to_string(scale.shape()));
      const int64_t axis = math::normalize_axis(axis_, static_cast<int64_t>(xs.size()));
      if (xs[axis] != scale.size())
        fail("scale has " + std::to_string(scale.size()) + " values but axis " + std::to_string(axis) + " of x has " +
             std::to_string(xs[axis]));
      outer = math::numel(xs, 0, axis);
      n = xs[axis];
      inner = math::numel(xs, axis + 1, xs.size());
    }
    if (zp.present() && zp.size() != scale.size()) fail("zero point and scale must have the same number of values");
    const float* s = scale.data<float>();
    const int64_t rows = outer * n;
    // A thread's share: pass_grain_bytes() of the float side plus the quantized side.
    const int64_t element_bytes = static_cast<int64_t>(sizeof(float) + sdk::element_size(quantize_ ? out_type(zp) : x.elem_type()));
    const int64_t grain = math::pass_grain(element_bytes * std::max<int64_t>(inner, 1));
    if (quantize_) {
      expect_type(x, {EPHOST_ELEMENT_FLOAT}, "x");
      const bool ok = dispatch(Types<uint8_t, int8_t>{}, out_type(zp), [&](auto tag) {
        using Q = decltype(tag);
        const Q* z = zp.present() ? zp.data<Q>() : nullptr;
        Q* y = ctx.output<Q>(0, xs);
        const float* px = x.data<float>();
        if (inner == 1 && n > 1) {
          // Quantized along the last axis: one scale per element of each row.
          math::parallel_for(outer, threads, math::pass_grain(element_bytes * n), [&](int64_t o0, int64_t o1) {
            for (int64_t o = o0; o < o1; ++o) math::quantize_linear_each(px + o * n, s, z, y + o * n, n);
          });
          return;
        }
        if (rows == 1) {  // per-tensor: split the elements
          math::parallel_for(inner, threads, math::pass_grain(element_bytes), [&](int64_t i0, int64_t i1) {
            math::quantize_linear(px + i0, s[0], z ? z[0] : Q{0}, y + i0, i1 - i0);
          });
          return;
        }
        math::parallel_for(rows, threads, grain, [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t k = r % n;
            math::quantize_linear(px + r * inner, s[k], z ? z[k] : Q{0}, y + r * inner, inner);
          }
        });
      });
      if (!ok) fail(std::string("unsupported output type ") + type_name(out_type(zp)));
      return;
    }
    if (zp.present() && zp.elem_type() != x.elem_type()) fail("x and x_zero_point must have the same type");
    const bool ok = dispatch(Types<uint8_t, int8_t, int32_t>{}, x.elem_type(), [&](auto tag) {
      using Q = decltype(tag);
      const Q* z = zp.present() ? zp.data<Q>() : nullptr;
      const Q* px = x.data<Q>();
      float* y = ctx.output<float>(0, xs);
      if (inner == 1 && n > 1) {
        math::parallel_for(outer, threads, math::pass_grain(element_bytes * n), [&](int64_t o0, int64_t o1) {
          for (int64_t o = o0; o < o1; ++o) math::dequantize_linear_each(px + o * n, s, z, y + o * n, n);
        });
        return;
      }
      if (rows == 1) {
        math::parallel_for(inner, threads, math::pass_grain(element_bytes), [&](int64_t i0, int64_t i1) {
          math::dequantize_linear(px + i0, s[0], z ? z[0] : Q{0}, y + i0, i1 - i0);
        });
        return;
      }
      math::parallel_for(rows, threads, grain, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t k = r % n;
          math::dequantize_linear(px + r * inner, s[k], z ? z[k] : Q{0}, y + r * inner, inner);
        }
      });
    });
    if (!ok) fail(std::string("unsupported input type ") + type_name(x.elem_type()));
  }

 private:
  // QuantizeLinear's output type: its zero point's, uint8 without one.
  static int32_t out_type(const sdk::Tensor& zp) { return zp.present() ? zp.elem_type() : EPHOST_ELEMENT_UINT8; }

  bool quantize_;
  int64_t axis_;
};

bool quantize_supported(const sdk::Node& n) {
  if (n.attr_int("block_size", 0) != 0) return false;  // opset 21 blocked quantization
  if (!input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT})) return false;
  if (n.op_type() == "QuantizeLinear")
    return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) && input_type_in(n, 2, {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8}) &&
           output_type_in(n, 0, {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8});
  return input_type_in(n, 0, {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_INT32}) &&
         output_type_in(n, 0, {EPHOST_ELEMENT_FLOAT});
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  for (bool q : {true, false})
    r.add(q ? "QuantizeLinear" : "DequantizeLinear", 10, 19, quantize_supported,  // 19: saturate and float8, refused by the check
          [q](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<QuantizeKernel>(n, c, q);
          });
}

}  // namespace ephost::cpu
