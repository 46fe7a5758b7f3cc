// DynamicQuantizeLinear: float -> uint8 with a scale and zero point computed from the data, so that
// the range [min(x, 0), max(x, 0)] maps onto [0, 255] and 0 is exactly representable.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// Saturates a rounded value to [0, 255]; NaN (from a NaN input) becomes 0.
inline uint8_t saturate_u8(float v) { return v >= 255.f ? 255 : v > 0.f ? static_cast<uint8_t>(v) : 0; }

class DynamicQuantizeKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "x");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "x");
    const float* px = x.data<float>();
    const int64_t n = x.size();

    // Min and max in fixed chunks (one partial per chunk), so the result does not depend on timing.
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(threads, n / math::kElementwiseGrain));
    std::vector<float> lo(chunks, 0.f), hi(chunks, 0.f);  // 0 is always part of the range
    math::parallel_for(chunks, threads, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        float l = 0.f, h = 0.f;
        for (int64_t i = n * c / chunks, e = n * (c + 1) / chunks; i < e; ++i) {
          l = std::min(l, px[i]);
          h = std::max(h, px[i]);
        }
        lo[c] = l;
        hi[c] = h;
      }
    });
    const float x_min = *std::min_element(lo.begin(), lo.end()), x_max = *std::max_element(hi.begin(), hi.end());
    if (!std::isfinite(x_min) || !std::isfinite(x_max)) fail("x must be finite to derive a scale");

    // Float arithmetic throughout, rounding half to even, as the ONNX definition computes it.
    const float scale = (x_max - x_min) / 255.f;
    uint8_t zero_point = 0;
    if (scale > 0.f) zero_point = saturate_u8(std::nearbyint((0.f - x_min) / scale));
    *ctx.output<float>(1, {}) = scale;
    *ctx.output<uint8_t>(2, {}) = zero_point;

    uint8_t* y = ctx.output<uint8_t>(0, x.shape());
    const float zp = static_cast<float>(zero_point);
    math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      if (scale == 0.f) {  // all of x is 0
        std::fill(y + i0, y + i1, zero_point);
        return;
      }
      for (int64_t i = i0; i < i1; ++i) y[i] = saturate_u8(std::nearbyint(px[i] / scale) + zp);
    });
  }
};

}  // namespace

void register_dynamic_quantize_kernels(KernelRegistry& r) {
  r.add("DynamicQuantizeLinear", 11, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), make_factory<DynamicQuantizeKernel>());
}

}  // namespace ephost::cpu
