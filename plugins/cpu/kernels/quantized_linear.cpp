// Integer matrix products and convolutions on quantized (uint8/int8) tensors:
//   MatMulInteger, ConvInteger       -> int32 accumulators;
//   QLinearMatMul, QLinearConv       -> accumulators requantized to the output's scale and zero point.
// Operands have their zero points subtracted into int16 and go through math::gemm_s16_s32 (exact);
// convolutions are lowered to that GEMM by im2col, with padding contributing the zero point (0 after
// subtraction), as the ONNX definitions ask.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_registry.h"
#include "kernels/conv_attributes.h"
#include "math/conv.h"
#include "math/int_gemm.h"
#include "math/parallel.h"
#include "math/spatial3.h"

#include "ephost/sdk/scratch.hpp"

namespace ephost::cpu {

namespace {

bool is_8bit(int32_t t) { return t == EPHOST_ELEMENT_UINT8 || t == EPHOST_ELEMENT_INT8; }

// One value of a quantization parameter (zero point or scale) that is per tensor (one value), per
// row/column of the matrix (`lane_count` values) or per row/column of every batch matrix
// (`batches * lane_count` values, e.g. shape [D1, D2, M, 1]).
class QuantParam {
 public:
  QuantParam(const sdk::Tensor& t, int64_t batches, int64_t lane_count, const std::string& what) : t_(t) {
    if (!t.present()) return;
    n_ = t.size();
    if (n_ != 1 && n_ != lane_count && n_ != batches * lane_count)
      throw std::invalid_argument(what + " has " + std::to_string(n_) + " values: expected 1 (per tensor), " +
                                  std::to_string(lane_count) + " (per row/column) or " +
                                  std::to_string(batches * lane_count) + " (per row/column of each batch)");
    lanes_ = lane_count;
  }
  template <typename T>
  T at(int64_t batch, int64_t lane) const {
    if (!t_.present()) return T(0);
    const T* p = t_.data<T>();
    if (n_ == 1) return p[0];
    return n_ == lanes_ ? p[lane] : p[batch * lanes_ + lane];
  }

 private:
  sdk::Tensor t_;
  int64_t n_ = 0, lanes_ = 1;
};

// out[r * cols + c] = x[r * cols + c] - zero(r, c), for a [rows, cols] matrix of uint8/int8.
template <typename Z>
void widen(const sdk::Tensor& x, int64_t offset, int64_t rows, int64_t cols, Z zero, int16_t* out, int threads) {
  auto body = [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>() + offset;
    math::parallel_for(rows, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(cols, 1)),
                       [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[r * cols + c] = static_cast<int16_t>(static_cast<int32_t>(px[r * cols + c]) - zero(r, c));
    });
  };
  if (x.elem_type() == EPHOST_ELEMENT_UINT8) body(uint8_t{});
  else body(int8_t{});
}

int32_t zero_point_of(const QuantParam& zp, int32_t elem_type, int64_t batch, int64_t lane) {
  return elem_type == EPHOST_ELEMENT_UINT8 ? zp.at<uint8_t>(batch, lane) : zp.at<int8_t>(batch, lane);
}

// The value of a one-element uint8/int8 zero point.
int32_t scalar_zero_point(const sdk::Tensor& t) {
  return t.elem_type() == EPHOST_ELEMENT_UINT8 ? t.data<uint8_t>()[0] : t.data<int8_t>()[0];
}

// Requantizes int32 accumulators: y = saturate(round_half_even(acc * multiplier) + zero_point), with
// the multiplier (input scale * weight scale / output scale) in float, as ONNX Runtime computes it.
template <typename Q>
inline Q requantize(int32_t acc, float multiplier, int32_t zero_point) {
  const float v = std::nearbyint(static_cast<float>(acc) * multiplier) + static_cast<float>(zero_point);
  const float lo = static_cast<float>(std::numeric_limits<Q>::min()), hi = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::min(hi, std::max(lo, v)));
}

// ---- matrix products ------------------------------------------------------------------------------

// numpy.matmul broadcasting of [..., M, K] x [..., K, N] (1-D operands promoted and the promoted dims
// dropped from the result).
struct MatMulShape {
  int64_t M = 0, K = 0, N = 0;
  int64_t a_batches = 1, b_batches = 1;
  Shape out;                                  // result shape
  std::vector<int64_t> a_batch_of, b_batch_of;  // per output batch, the operand batch it reads
};

MatMulShape matmul_shape(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) math::invalid("MatMul operands must have rank >= 1");
  MatMulShape s;
  Shape a = a_in, b = b_in;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  s.M = a[a.size() - 2];
  s.K = a.back();
  s.N = b.back();
  if (b[b.size() - 2] != s.K)
    math::invalid("operand shapes " + math::to_string(a_in) + " and " + math::to_string(b_in) + " do not multiply");
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + ab.size() >= rank ? ab[i + ab.size() - rank] : 1;
    const int64_t db = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      math::invalid("batch dims of " + math::to_string(a_in) + " and " + math::to_string(b_in) + " do not broadcast");
    batch[i] = da == 1 ? db : da;
  }
  s.a_batches = math::numel(ab);
  s.b_batches = math::numel(bb);
  const int64_t out_batches = math::numel(batch);
  s.a_batch_of.resize(out_batches);
  s.b_batch_of.resize(out_batches);
  for (int64_t o = 0; o < out_batches; ++o) {
    int64_t rem = o, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t i = rank; i-- > 0;) {
      const int64_t idx = rem % batch[i];
      rem /= batch[i];
      if (i + ab.size() >= rank) {
        const int64_t d = ab[i + ab.size() - rank];
        ia += (d == 1 ? 0 : idx) * sa;
        sa *= d;
      }
      if (i + bb.size() >= rank) {
        const int64_t d = bb[i + bb.size() - rank];
        ib += (d == 1 ? 0 : idx) * sb;
        sb *= d;
      }
    }
    s.a_batch_of[o] = ia;
    s.b_batch_of[o] = ib;
  }
  s.out = batch;
  if (a_in.size() > 1) s.out.push_back(s.M);
  if (b_in.size() > 1) s.out.push_back(s.N);
  return s;
}

class IntegerMatMulKernel : public CpuKernel {
 public:
  // quantized: QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) rather than
  // MatMulInteger (a, b, a_zp, b_zp).
  IntegerMatMulKernel(const sdk::Node& node, const KernelConfig& c, bool quantized)
      : CpuKernel(node, c), quantized_(quantized) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    // a_zero_point is input 2 of both ops.
    const size_t ib = quantized_ ? 3 : 1, izb = quantized_ ? 5 : 3;
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, ib, "B");
    if (!is_8bit(a.elem_type()) || !is_8bit(b.elem_type()))
      fail(std::string("A and B must be uint8 or int8, found ") + type_name(a.elem_type()) + " and " +
           type_name(b.elem_type()));
    const sdk::Tensor za = ctx.input(2), zb = ctx.input(izb);
    if (za.present() && za.elem_type() != a.elem_type()) fail("a_zero_point must have A's type");
    if (zb.present() && zb.elem_type() != b.elem_type()) fail("b_zero_point must have B's type");
    const MatMulShape s = matmul_shape(a.shape(), b.shape());
    const QuantParam zpa(za, s.a_batches, s.M, "a_zero_point"), zpb(zb, s.b_batches, s.N, "b_zero_point");

    // Every operand batch widened once (broadcast batches are then shared).
    std::vector<int16_t> wa(static_cast<size_t>(s.a_batches * s.M * s.K)), wb(static_cast<size_t>(s.b_batches * s.K * s.N));
    for (int64_t bt = 0; bt < s.a_batches; ++bt)
      widen(a, bt * s.M * s.K, s.M, s.K, [&](int64_t r, int64_t) { return zero_point_of(zpa, a.elem_type(), bt, r); },
            wa.data() + bt * s.M * s.K, threads);
    for (int64_t bt = 0; bt < s.b_batches; ++bt)
      widen(b, bt * s.K * s.N, s.K, s.N, [&](int64_t, int64_t c) { return zero_point_of(zpb, b.elem_type(), bt, c); },
            wb.data() + bt * s.K * s.N, threads);

    const int64_t out_batches = static_cast<int64_t>(s.a_batch_of.size()), mn = s.M * s.N;
    if (!quantized_) {
      int32_t* y = ctx.output<int32_t>(0, s.out);
      for (int64_t o = 0; o < out_batches; ++o)
        math::gemm_s16_s32(s.M, s.N, s.K, wa.data() + s.a_batch_of[o] * s.M * s.K, s.K,
                           wb.data() + s.b_batch_of[o] * s.K * s.N, s.N, y + o * mn, s.N, threads);
      return;
    }

    const sdk::Tensor sa = required(ctx, 1, "a_scale"), sb = required(ctx, 4, "b_scale");
    const sdk::Tensor sy = required(ctx, 6, "y_scale"), zy = required(ctx, 7, "y_zero_point");
    for (const sdk::Tensor* t : {&sa, &sb, &sy}) expect_type(*t, {EPHOST_ELEMENT_FLOAT}, "scales");
    if (sy.size() != 1 || zy.size() != 1) fail("y_scale and y_zero_point must be per tensor (one value)");
    if (!is_8bit(zy.elem_type())) fail(std::string("y_zero_point must be uint8 or int8, found ") + type_name(zy.elem_type()));
    const QuantParam qsa(sa, s.a_batches, s.M, "a_scale"), qsb(sb, s.b_batches, s.N, "b_scale");
    const float y_scale = sy.data<float>()[0];
    std::vector<int32_t> acc(static_cast<size_t>(mn));
    const bool ok = dispatch(Types<uint8_t, int8_t>{}, zy.elem_type(), [&](auto tag) {
      using Q = decltype(tag);
      const int32_t y_zero = scalar_zero_point(zy);
      Q* y = ctx.output<Q>(0, s.out);
      for (int64_t o = 0; o < out_batches; ++o) {
        const int64_t ba = s.a_batch_of[o], bb = s.b_batch_of[o];
        math::gemm_s16_s32(s.M, s.N, s.K, wa.data() + ba * s.M * s.K, s.K, wb.data() + bb * s.K * s.N, s.N, acc.data(),
                           s.N, threads);
        Q* yo = y + o * mn;
        math::parallel_for(s.M, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(s.N, 1)),
                           [&](int64_t m0, int64_t m1) {
          for (int64_t m = m0; m < m1; ++m) {
            const float a_scale = qsa.at<float>(ba, m);
            for (int64_t n = 0; n < s.N; ++n)
              yo[m * s.N + n] = requantize<Q>(acc[m * s.N + n], a_scale * qsb.at<float>(bb, n) / y_scale, y_zero);
          }
        });
      }
    });
    if (!ok) fail("unsupported y_zero_point type");
  }

 private:
  bool quantized_;
};

// ---- convolutions ---------------------------------------------------------------------------------

// col[(c * kvol + kk) * out_vol + o] = x[c, input position of (kk, o)] - zero, 0 where it is padding:
// the [C * kvol, out_vol] matrix whose product with [M, C * kvol] weights is the convolution.
template <typename T>
void im2col(const T* x, int64_t channels, const math::Spatial3& g, int32_t zero, int16_t* col, int threads) {
  const int64_t in_vol = g.in[0] * g.in[1] * g.in[2], out_vol = g.out[0] * g.out[1] * g.out[2];
  const int64_t kvol = g.k[0] * g.k[1] * g.k[2];
  math::parallel_for(channels * kvol, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(out_vol, 1)),
                     [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / kvol, kk = r % kvol;
      const int64_t kd = kk / (g.k[1] * g.k[2]), kh = kk / g.k[2] % g.k[1], kw = kk % g.k[2];
      const T* xc = x + c * in_vol;
      int16_t* out = col + r * out_vol;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
          int16_t* row = out + (od * g.out[1] + oh) * g.out[2];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
            std::fill(row, row + g.out[2], int16_t{0});
            continue;
          }
          const T* xr = xc + (id * g.in[1] + ih) * g.in[2];
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t iw = ow * g.s[2] - g.pb[2] + kw * g.d[2];
            row[ow] = iw < 0 || iw >= g.in[2] ? int16_t{0} : static_cast<int16_t>(static_cast<int32_t>(xr[iw]) - zero);
          }
        }
      }
    }
  });
}

class IntegerConvKernel : public CpuKernel {
 public:
  // quantized: QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) rather than
  // ConvInteger (x, w, x_zp, w_zp).
  IntegerConvKernel(const sdk::Node& node, const KernelConfig& c, bool quantized)
      : CpuKernel(node, c), quantized_(quantized), p_(conv_attributes(node)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    // x_zero_point is input 2 of both ops.
    const size_t iw = quantized_ ? 3 : 1, izw = quantized_ ? 5 : 3;
    const sdk::Tensor x = required(ctx, 0, "x"), w = required(ctx, iw, "w");
    if (!is_8bit(x.elem_type()) || !is_8bit(w.elem_type()))
      fail(std::string("x and w must be uint8 or int8, found ") + type_name(x.elem_type()) + " and " +
           type_name(w.elem_type()));
    const sdk::Tensor zx = ctx.input(2), zw = ctx.input(izw);
    if (zx.present() && zx.elem_type() != x.elem_type()) fail("x_zero_point must have x's type");
    if (zw.present() && zw.elem_type() != w.elem_type()) fail("w_zero_point must have w's type");
    if (zx.present() && zx.size() != 1) fail("x_zero_point must be per tensor (one value)");
    const math::ConvGeometry g = math::conv_geometry(p_, x.shape(), w.shape());
    const math::Spatial3 g3 = math::to_spatial3(g);
    const int64_t M = g.out_channels, G = g.group, Mg = M / G, Cg = g.in_channels / G;
    const int64_t kvol = math::numel(g.kernel), out_vol = math::numel(g.out_spatial);
    const int64_t in_vol = math::numel(g.in_spatial), Kg = Cg * kvol;
    const QuantParam zpw(zw, 1, M, "w_zero_point");
    const int32_t x_zero = zx.present() ? scalar_zero_point(zx) : 0;

    // Requantization parameters (QLinearConv).
    std::vector<float> multiplier;
    const int32_t* bias = nullptr;
    int32_t y_zero = 0;
    int32_t y_type = EPHOST_ELEMENT_INT32;
    if (quantized_) {
      const sdk::Tensor sx = required(ctx, 1, "x_scale"), sw = required(ctx, 4, "w_scale");
      const sdk::Tensor sy = required(ctx, 6, "y_scale"), zy = required(ctx, 7, "y_zero_point"), b = ctx.input(8);
      for (const sdk::Tensor* t : {&sx, &sw, &sy}) expect_type(*t, {EPHOST_ELEMENT_FLOAT}, "scales");
      if (sx.size() != 1 || sy.size() != 1 || zy.size() != 1)
        fail("x_scale, y_scale and y_zero_point must be per tensor (one value)");
      if (!is_8bit(zy.elem_type())) fail(std::string("y_zero_point must be uint8 or int8, found ") + type_name(zy.elem_type()));
      const QuantParam qsw(sw, 1, M, "w_scale");
      multiplier.resize(static_cast<size_t>(M));
      for (int64_t m = 0; m < M; ++m)
        multiplier[m] = sx.data<float>()[0] * qsw.at<float>(0, m) / sy.data<float>()[0];
      if (b.present()) {
        expect_type(b, {EPHOST_ELEMENT_INT32}, "B");
        if (b.size() != M) fail("B must have " + std::to_string(M) + " values, found " + math::to_string(b.shape()));
        bias = b.data<int32_t>();
      }
      y_type = zy.elem_type();
      y_zero = scalar_zero_point(zy);
    }

    // The output before the working buffers: its allocation refuses sizes no tensor holds (pads of 2^40,
    // found by an attribute sweep). An empty output needs no work, however large its spatial volume
    // (0 output channels with pads of 2^40, found by fuzz_model); otherwise the im2col buffer, Kg times
    // that volume, is a scratch buffer under the same limit as the values.
    void* y = ctx.output_raw(0, y_type, g.output_shape());
    if (g.batch == 0 || M == 0 || out_vol == 0) return;
    std::vector<int16_t> col = sdk::scratch_vector<int16_t>({Kg, out_vol}, "ConvInteger's im2col buffer");
    std::vector<int16_t> wk(static_cast<size_t>(M * Kg));
    widen(w, 0, M, Kg, [&](int64_t m, int64_t) { return zero_point_of(zpw, w.elem_type(), 0, m); }, wk.data(), threads);
    std::vector<int32_t> acc(quantized_ ? static_cast<size_t>(Mg * out_vol) : 0);
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t gi = 0; gi < G; ++gi) {
        const int64_t x_offset = (n * g.in_channels + gi * Cg) * in_vol;
        if (x.elem_type() == EPHOST_ELEMENT_UINT8) im2col(x.data<uint8_t>() + x_offset, Cg, g3, x_zero, col.data(), threads);
        else im2col(x.data<int8_t>() + x_offset, Cg, g3, x_zero, col.data(), threads);
        const int64_t y_offset = (n * M + gi * Mg) * out_vol;
        int32_t* dst = quantized_ ? acc.data() : static_cast<int32_t*>(y) + y_offset;
        math::gemm_s16_s32(Mg, out_vol, Kg, wk.data() + gi * Mg * Kg, Kg, col.data(), out_vol, dst, out_vol, threads);
        if (!quantized_) continue;
        dispatch(Types<uint8_t, int8_t>{}, y_type, [&](auto tag) {
          using Q = decltype(tag);
          Q* yq = static_cast<Q*>(y) + y_offset;
          math::parallel_for(Mg, threads, std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(out_vol, 1)),
                             [&](int64_t m0, int64_t m1) {
            for (int64_t m = m0; m < m1; ++m) {
              const int64_t channel = gi * Mg + m;
              const int32_t b = bias ? bias[channel] : 0;
              const float mult = multiplier[channel];
              for (int64_t o = 0; o < out_vol; ++o)
                yq[m * out_vol + o] = requantize<Q>(acc[m * out_vol + o] + b, mult, y_zero);
            }
          });
        });
      }
  }

 private:
  bool quantized_;
  math::ConvParams p_;
};

bool all_8bit(const sdk::Node& n, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_INT8})) return false;
  return true;
}

bool scales_float(const sdk::Node& n, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT})) return false;
  return true;
}

bool conv_rank_supported(const sdk::Node& n) {
  const int64_t r = n.has_input(0) ? n.input(0).rank() : -1;
  return r < 0 || (r >= 3 && r <= 5);
}

}  // namespace

void register_quantized_linear_kernels(KernelRegistry& r) {
  r.add("MatMulInteger", 10, 17, [](const sdk::Node& n) { return all_8bit(n, {0, 1, 2, 3}); },
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<IntegerMatMulKernel>(n, c, false);
        });
  r.add("QLinearMatMul", 10, 17,
        [](const sdk::Node& n) { return all_8bit(n, {0, 2, 3, 5, 7}) && scales_float(n, {1, 4, 6}); },
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<IntegerMatMulKernel>(n, c, true);
        });
  r.add("ConvInteger", 10, 17, [](const sdk::Node& n) { return all_8bit(n, {0, 1, 2, 3}) && conv_rank_supported(n); },
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<IntegerConvKernel>(n, c, false);
        });
  r.add("QLinearConv", 10, 17,
        [](const sdk::Node& n) {
          return all_8bit(n, {0, 2, 3, 5, 7}) && scales_float(n, {1, 4, 6}) &&
                 input_type_in(n, 8, {EPHOST_ELEMENT_INT32}) && conv_rank_supported(n);
        },
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<IntegerConvKernel>(n, c, true);
        });
}

}  // namespace ephost::cpu
