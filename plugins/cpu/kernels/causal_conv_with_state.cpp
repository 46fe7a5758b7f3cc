// CausalConvWithState-27: per (batch, channel) row, the input left-padded with past_state (zeros when
// absent) is convolved with the channel's own k taps (valid padding, stride 1), plus the bias, then
// optionally SiLU; present_state is the padded row's last k - 1 values. The padded row is never built:
// the first k - 1 outputs read the carry, the rest read the input directly.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/recurrent_state_kernels.h"
#include "math/parallel.h"
#include "math/vec.h"

namespace ephost::cpu {

namespace {

class CausalConvWithStateKernel : public CpuKernel {
 public:
  CausalConvWithStateKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), activation_(node.attr_string("activation", "none")) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    if (activation_ != "none" && activation_ != "silu" && activation_ != "swish")
      fail("activation must be 'none', 'silu' or 'swish', not '" + activation_ + "'");
    const sdk::Tensor x = required(ctx, 0, "input"), w = required(ctx, 1, "weight");
    const sdk::Tensor bias = ctx.input(2), past = ctx.input(3);
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "input");
    expect_same_type(x, "input", w, "weight");
    const Shape xs = x.shape(), ws = w.shape();
    if (xs.size() != 3) fail("input must be [batch, channels, length], found " + math::to_string(xs));
    const int64_t batch = xs[0], channels = xs[1], length = xs[2];
    if (ws.size() != 3 || ws[0] != channels || ws[1] != 1 || ws[2] < 1)
      fail("weight must be [channels = " + std::to_string(channels) + ", 1, k >= 1], found " + math::to_string(ws));
    const int64_t k = ws[2], carry = k - 1;
    if (bias.present()) {
      expect_same_type(x, "input", bias, "bias");
      if (bias.shape() != Shape{channels})
        fail("bias must be [channels] = [" + std::to_string(channels) + "], found " + math::to_string(bias.shape()));
    }
    if (past.present()) {
      expect_same_type(x, "input", past, "past_state");
      if (past.shape() != Shape{batch, channels, carry})
        fail("past_state must be [batch, channels, k - 1] = " + math::to_string(Shape{batch, channels, carry}) +
             ", found " + math::to_string(past.shape()));
    }
    const float *px = x.data<float>(), *pw = w.data<float>();
    const float* pb = bias.present() ? bias.data<float>() : nullptr;
    const float* pp = past.present() ? past.data<float>() : nullptr;
    float* y = ctx.output<float>(0, xs);
    float* present = output_wanted(1) ? ctx.output<float>(1, {batch, channels, carry}) : nullptr;
    const bool silu = activation_ != "none";
    math::parallel_for(batch * channels, threads, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % channels;
        const float* in = px + r * length;
        const float* taps = pw + c * k;
        const float* state = pp ? pp + r * carry : nullptr;
        // Position p of the padded row: the carry below `carry`, the input from there on.
        auto padded = [&](int64_t p) -> float {
          if (p >= carry) return in[p - carry];
          return state ? state[p] : 0.f;
        };
        float* out = y + r * length;
        const float b = pb ? pb[c] : 0.f;
        const int64_t edge = std::min(length, carry);  // outputs whose window reaches into the carry
        for (int64_t t = 0; t < edge; ++t) {
          float acc = b;
          for (int64_t j = 0; j < k; ++j) acc += taps[j] * padded(t + j);
          out[t] = acc;
        }
        for (int64_t t = edge; t < length; ++t) {
          const float* window = in + (t - carry);
          float acc = b;
          for (int64_t j = 0; j < k; ++j) acc += taps[j] * window[j];
          out[t] = acc;
        }
        if (silu) math::swish_f32(out, out, length);
        if (present)
          for (int64_t j = 0; j < carry; ++j) present[r * carry + j] = padded(length + j);
      }
    });
  }

 private:
  std::string activation_;
};

}  // namespace

void register_causal_conv_with_state_kernels(KernelRegistry& r) {
  r.add("CausalConvWithState", 27, 27, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2, 3}),
        make_factory<CausalConvWithStateKernel>());
}

}  // namespace ephost::cpu
