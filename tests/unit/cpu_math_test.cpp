// The CPU plugin's pure math (plugins/cpu/math) against naive reference implementations. No host is
// involved: these are functions over raw pointers and shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "math/broadcast.h"
#include "math/conv.h"
#include "math/half.h"
#include "math/matmul.h"
#include "math/pool.h"
#include "math/reduce.h"
#include "math/resize.h"
#include "math/softmax.h"
#include "math/vec.h"
#include "math/transpose.h"
#include "isa_tiers.h"

namespace m = ephost::cpu::math;
using m::Shape;

namespace {

std::vector<float> random_vec(int64_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << "at flat index " << i;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
  std::vector<double> w(want.begin(), want.end());
  expect_close(got, w, tol);
}

// Multi-index <-> flat helpers for the references.
std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = flat % s[d];
    flat /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

}  // namespace

// ---- broadcasting ---------------------------------------------------------------------------------

TEST(CpuBroadcast, Shapes) {
  EXPECT_EQ(m::broadcast_shapes(Shape{2, 3, 4}, Shape{4}), (Shape{2, 3, 4}));
  EXPECT_EQ(m::broadcast_shapes(Shape{2, 1, 4}, Shape{3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(m::broadcast_shapes(Shape{}, Shape{5}), (Shape{5}));
  EXPECT_EQ(m::broadcast_shapes(Shape{0, 1}, Shape{1, 3}), (Shape{0, 3}));
  EXPECT_THROW(m::broadcast_shapes(Shape{2, 3}, Shape{4}), std::invalid_argument);
  EXPECT_TRUE(m::broadcasts_to(Shape{3, 1}, Shape{2, 3, 4}));
  EXPECT_FALSE(m::broadcasts_to(Shape{2, 3, 4}, Shape{3, 4}));
}

TEST(CpuBroadcast, BinaryMatchesReference) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {}},        {{}, {2, 3}},
      {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{2, 3, 4, 5}, {5}},       {{2, 3, 4, 5}, {4, 1}},
      {{3, 1}, {1, 4}},             {{1, 4, 1, 6}, {3, 1, 5, 1}}, {{7, 1, 2}, {7, 9, 2}},
      {{300, 257}, {257}},          {{64, 1, 33}, {1, 40, 1}}};
  uint32_t seed = 1;
  for (const auto& [as, bs] : cases) {
    const Shape os = m::broadcast_shapes(as, bs);
    const auto a = random_vec(m::numel(as), seed++), b = random_vec(m::numel(bs), seed++);
    for (int threads : {1, 2}) {
      std::vector<float> y(m::numel(os));
      m::broadcast_binary(a.data(), as, b.data(), bs, y.data(), os, threads, [](float x, float z) { return x - 2 * z; });
      std::vector<double> want(y.size());
      for (int64_t i = 0; i < m::numel(os); ++i) {
        const auto idx = unravel(i, os);
        auto pick = [&](const Shape& s) {
          std::vector<int64_t> j(s.size());
          for (size_t d = 0; d < s.size(); ++d) j[d] = s[d] == 1 ? 0 : idx[idx.size() - s.size() + d];
          return ravel(j, s);
        };
        want[i] = double(a[pick(as)]) - 2.0 * b[pick(bs)];
      }
      expect_close(y, want, 1e-6);
    }
  }
}

// The float Add/Sub/Mul/Div path (math/vec.h loops) gives exactly what the generic driver gives.
TEST(CpuBroadcast, ArithF32MatchesGenericBitForBit) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {}},    {{}, {2, 3}},          {{1, 16, 7, 9}, {1, 16, 1, 1}},
      {{1, 16, 1, 1}, {1, 16, 7, 9}}, {{2, 3, 4, 5}, {5}}, {{2, 3, 4, 5}, {4, 1}}, {{3, 1}, {1, 4}},
      {{1, 4, 1, 6}, {3, 1, 5, 1}}, {{300, 257}, {257}},  {{2, 8, 33, 40}, {1, 8, 1, 1}}};
  const m::BinOp ops[] = {m::BinOp::kAdd, m::BinOp::kSub, m::BinOp::kMul, m::BinOp::kDiv};
  uint32_t seed = 7;
  for (const auto& [as, bs] : cases) {
    const Shape os = m::broadcast_shapes(as, bs);
    const auto a = random_vec(m::numel(as), seed++), b = random_vec(m::numel(bs), seed++);
    for (m::BinOp op : ops)
      for (int threads : {1, 2}) {
        std::vector<float> got(m::numel(os)), want(m::numel(os));
        m::broadcast_arith_f32(op, a.data(), as, b.data(), bs, got.data(), os, threads);
        m::broadcast_binary(a.data(), as, b.data(), bs, want.data(), os, 1, [op](float x, float z) {
          switch (op) {
            case m::BinOp::kAdd: return x + z;
            case m::BinOp::kSub: return x - z;
            case m::BinOp::kMul: return x * z;
            default: return x / z;
          }
        });
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << m::to_string(as) << " "
                                                                                       << m::to_string(bs);
      }
  }
}

class CpuVec : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuVec);

TEST_P(CpuVec, UnaryLoopsMatchScalarAndSumIsAccurate) {
  const auto x = random_vec(10007, 3);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(n);
  m::clip_f32(x.data(), -0.25f, 0.5f, y.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], std::min(std::max(x[i], -0.25f), 0.5f));
  m::hard_swish_f32(x.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] * (1.0f / 6.0f) + 0.5f;
    ASSERT_EQ(y[i], x[i] * (v < 0.f ? 0.f : (v > 1.f ? 1.f : v)));
  }
  m::relu_f32(x.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] > 0.f ? x[i] : 0.f);
  for (int64_t len : {0, 1, 15, 16, 17, 4095, 4096, 4097, 10007}) {
    double want = 0;
    for (int64_t i = 0; i < len; ++i) want += x[i];
    EXPECT_NEAR(m::sum_f32(x.data(), len), want, 1e-4 * (1 + std::sqrt(double(len))));
  }
}

TEST(CpuBroadcast, TernaryAndCopy) {
  const Shape cs{2, 1, 4}, xs{3, 1}, ys{4}, os{2, 3, 4};
  std::vector<uint8_t> c(8);
  for (size_t i = 0; i < c.size(); ++i) c[i] = i % 3 == 0;
  const auto x = random_vec(3, 5), yv = random_vec(4, 6);
  std::vector<float> out(24);
  m::broadcast_ternary(c.data(), cs, x.data(), xs, yv.data(), ys, out.data(), os, 2,
                       [](uint8_t k, float a, float b) { return k ? a : b; });
  for (int64_t i = 0; i < 24; ++i) {
    const auto idx = unravel(i, os);
    const bool k = c[idx[0] * 4 + idx[2]];
    EXPECT_EQ(out[i], k ? x[idx[1]] : yv[idx[2]]);
  }
  std::vector<int64_t> src{1, 2, 3}, dst(6);
  m::broadcast_copy(src.data(), Shape{1, 3}, dst.data(), Shape{2, 3}, sizeof(int64_t), 1);
  EXPECT_EQ(dst, (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
}

// ---- convolution ------------------------------------------------------------------------------------

namespace {

// Direct convolution in double over up to 3 spatial dims.
std::vector<double> reference_conv(const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                                   const m::ConvGeometry& g) {
  const size_t k = g.in_spatial.size();
  auto pad3 = [&](const Shape& v, int64_t def) {
    Shape r(3, def);
    for (size_t i = 0; i < k; ++i) r[3 - k + i] = v[i];
    return r;
  };
  const Shape in = pad3(g.in_spatial, 1), out = pad3(g.out_spatial, 1), ker = pad3(g.kernel, 1),
              st = pad3(g.strides, 1), dl = pad3(g.dilations, 1), pb = pad3(g.pad_begin, 0);
  const int64_t G = g.group, ICg = g.in_channels / G, OCg = g.out_channels / G;
  std::vector<double> y(m::numel(g.output_shape()));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      const int64_t grp = oc / OCg;
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double acc = bias ? bias[oc] : 0.0;
            for (int64_t ic = 0; ic < ICg; ++ic)
              for (int64_t kd = 0; kd < ker[0]; ++kd)
                for (int64_t kh = 0; kh < ker[1]; ++kh)
                  for (int64_t kw = 0; kw < ker[2]; ++kw) {
                    const int64_t id = od * st[0] - pb[0] + kd * dl[0], ih = oh * st[1] - pb[1] + kh * dl[1],
                                  iw = ow * st[2] - pb[2] + kw * dl[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const int64_t c = grp * ICg + ic;
                    acc += double(x[(((n * g.in_channels + c) * in[0] + id) * in[1] + ih) * in[2] + iw]) *
                           w[(((oc * ICg + ic) * ker[0] + kd) * ker[1] + kh) * ker[2] + kw];
                  }
            y[(((n * g.out_channels + oc) * out[0] + od) * out[1] + oh) * out[2] + ow] = acc;
          }
    }
  return y;
}

// Transposed convolution by scattering each input into the outputs it reaches.
std::vector<double> reference_conv_transpose(const std::vector<float>& x, const std::vector<float>& w,
                                             const float* bias, const m::ConvGeometry& g) {
  const size_t k = g.in_spatial.size();
  auto pad3 = [&](const Shape& v, int64_t def) {
    Shape r(3, def);
    for (size_t i = 0; i < k; ++i) r[3 - k + i] = v[i];
    return r;
  };
  const Shape in = pad3(g.in_spatial, 1), out = pad3(g.out_spatial, 1), ker = pad3(g.kernel, 1),
              st = pad3(g.strides, 1), dl = pad3(g.dilations, 1), pb = pad3(g.pad_begin, 0);
  const int64_t G = g.group, ICg = g.in_channels / G, OCg = g.out_channels / G;
  std::vector<double> y(m::numel(g.output_shape()));
  const int64_t plane = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < g.batch * g.out_channels; ++p)
    for (int64_t i = 0; i < plane; ++i) y[p * plane + i] = bias ? bias[p % g.out_channels] : 0.0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t grp = c / ICg;
      for (int64_t id = 0; id < in[0]; ++id)
        for (int64_t ih = 0; ih < in[1]; ++ih)
          for (int64_t iw = 0; iw < in[2]; ++iw) {
            const double xv = x[(((n * g.in_channels + c) * in[0] + id) * in[1] + ih) * in[2] + iw];
            for (int64_t oc = 0; oc < OCg; ++oc)
              for (int64_t kd = 0; kd < ker[0]; ++kd)
                for (int64_t kh = 0; kh < ker[1]; ++kh)
                  for (int64_t kw = 0; kw < ker[2]; ++kw) {
                    const int64_t od = id * st[0] + kd * dl[0] - pb[0], oh = ih * st[1] + kh * dl[1] - pb[1],
                                  ow = iw * st[2] + kw * dl[2] - pb[2];
                    if (od < 0 || od >= out[0] || oh < 0 || oh >= out[1] || ow < 0 || ow >= out[2]) continue;
                    const int64_t M = grp * OCg + oc;
                    y[(((n * g.out_channels + M) * out[0] + od) * out[1] + oh) * out[2] + ow] +=
                        xv * w[(((c * OCg + oc) * ker[0] + kd) * ker[1] + kh) * ker[2] + kw];
                  }
          }
    }
  return y;
}

struct ConvCase {
  Shape x, w;
  m::ConvParams p;
  bool bias;
};

void run_conv_case(const ConvCase& c, bool transposed, uint32_t seed) {
  const m::ConvGeometry g =
      transposed ? m::conv_transpose_geometry(c.p, c.x, c.w) : m::conv_geometry(c.p, c.x, c.w);
  const auto x = random_vec(m::numel(c.x), seed), w = random_vec(m::numel(c.w), seed + 1);
  const auto b = random_vec(g.out_channels, seed + 2);
  const float* bias = c.bias ? b.data() : nullptr;
  const auto want = transposed ? reference_conv_transpose(x, w, bias, g) : reference_conv(x, w, bias, g);
  for (auto layout : {m::ConvLayout::kPlain, m::ConvLayout::kBlocked, m::ConvLayout::kAuto})
    for (bool constant : {false, true})
      for (int threads : {1, 2}) {
        m::ConvRunner runner(transposed, layout, constant ? w.data() : nullptr);
        std::vector<float> y(want.size(), -777.f);
        runner.run(g, x.data(), w.data(), bias, y.data(), threads);
        SCOPED_TRACE("x " + m::to_string(c.x) + " w " + m::to_string(c.w) + " layout " +
                     std::to_string(static_cast<int>(layout)) + " constant " + std::to_string(constant) +
                     " threads " + std::to_string(threads));
        expect_close(y, want);
        // A second run reuses the cached primitive.
        std::fill(y.begin(), y.end(), -777.f);
        runner.run(g, x.data(), w.data(), bias, y.data(), threads);
        expect_close(y, want);
      }
}

m::ConvParams params(Shape strides = {}, Shape pads = {}, Shape dilations = {}, int64_t group = 1,
                     std::string auto_pad = "NOTSET") {
  m::ConvParams p;
  p.strides = std::move(strides);
  p.pads = std::move(pads);
  p.dilations = std::move(dilations);
  p.group = group;
  p.auto_pad = std::move(auto_pad);
  return p;
}

}  // namespace

TEST(CpuConv, Geometry) {
  auto g = m::conv_geometry(params({2, 2}, {}, {}, 1, "SAME_UPPER"), {1, 3, 7, 8}, {4, 3, 3, 3});
  EXPECT_EQ(g.out_spatial, (Shape{4, 4}));
  EXPECT_EQ(g.pad_begin, (Shape{1, 0}));
  EXPECT_EQ(g.pad_end, (Shape{1, 1}));
  g = m::conv_geometry(params({2, 2}, {}, {}, 1, "SAME_LOWER"), {1, 3, 7, 8}, {4, 3, 3, 3});
  EXPECT_EQ(g.pad_begin, (Shape{1, 1}));
  EXPECT_EQ(g.pad_end, (Shape{1, 0}));
  g = m::conv_geometry(params({1, 1}, {}, {}, 1, "VALID"), {1, 3, 7, 8}, {4, 3, 3, 3});
  EXPECT_EQ(g.out_spatial, (Shape{5, 6}));
  EXPECT_THROW(m::conv_geometry(params(), {1, 4, 5, 5}, {4, 3, 3, 3}), std::invalid_argument);
  EXPECT_THROW(m::conv_geometry(params(), {1, 3, 2, 2}, {4, 3, 3, 3}), std::invalid_argument);
  EXPECT_THROW(m::conv_geometry(params(), {1, 3, 5}, {4, 3, 3, 3}), std::invalid_argument);
  EXPECT_THROW(m::conv_geometry(params({}, {}, {}, 1, "BOGUS"), {1, 3, 5, 5}, {4, 3, 3, 3}), std::invalid_argument);
}

TEST(CpuConv, MatchesReference) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 9, 10}, {4, 3, 3, 3}, params(), true},
      {{2, 3, 17, 16}, {16, 3, 3, 3}, params({2, 2}, {1, 1, 1, 1}), true},          // PP-OCR stem
      {{1, 16, 12, 12}, {16, 1, 3, 3}, params({1, 1}, {1, 1, 1, 1}, {}, 16), true},  // depthwise
      {{1, 32, 11, 11}, {32, 1, 5, 5}, params({2, 2}, {2, 2, 2, 2}, {}, 32), false}, // depthwise s2
      {{1, 8, 10, 9}, {6, 4, 3, 3}, params({1, 2}, {0, 1, 2, 0}, {}, 2), true},      // grouped, asym pads
      {{1, 4, 13, 13}, {5, 4, 3, 3}, params({1, 1}, {2, 2, 2, 2}, {2, 2}), true},    // dilated
      {{1, 24, 8, 8}, {40, 24, 1, 1}, params(), true},                               // pointwise
      {{2, 5, 20}, {3, 5, 4}, params({3}, {1, 2}), true},                            // 1-D
      {{1, 2, 5, 6, 7}, {3, 2, 3, 2, 3}, params({1, 2, 1}, {1, 0, 1, 1, 1, 0}), true},  // 3-D
      {{1, 3, 7, 8}, {4, 3, 3, 3}, params({2, 2}, {}, {}, 1, "SAME_UPPER"), true},
      {{1, 3, 7, 8}, {4, 3, 3, 3}, params({2, 2}, {}, {}, 1, "SAME_LOWER"), false},
  };
  uint32_t seed = 100;
  for (const auto& c : cases) run_conv_case(c, false, seed += 10);
}

TEST(CpuConvTranspose, Geometry) {
  m::ConvParams p = params({2, 2}, {}, {}, 1, "SAME_UPPER");
  auto g = m::conv_transpose_geometry(p, {1, 1, 3, 3}, {1, 2, 3, 3});
  EXPECT_EQ(g.out_spatial, (Shape{6, 6}));
  EXPECT_EQ(g.pad_begin, (Shape{0, 0}));
  EXPECT_EQ(g.pad_end, (Shape{1, 1}));
  p = params({3, 2}, {1, 2, 1, 2});
  g = m::conv_transpose_geometry(p, {1, 1, 3, 3}, {1, 2, 3, 3});
  EXPECT_EQ(g.out_spatial, (Shape{7, 3}));  // onnx test_convtranspose_pads
  p = params({3, 2});
  p.output_shape = {10, 8};
  g = m::conv_transpose_geometry(p, {1, 1, 3, 3}, {1, 2, 3, 3});
  EXPECT_EQ(g.out_spatial, (Shape{10, 8}));
  EXPECT_EQ(g.pad_begin, (Shape{0, 0}));
  EXPECT_EQ(g.pad_end, (Shape{-1, -1}));
}

TEST(CpuConvTranspose, MatchesReference) {
  auto with = [](m::ConvParams p, Shape output_padding, Shape output_shape = {}) {
    p.output_padding = std::move(output_padding);
    p.output_shape = std::move(output_shape);
    return p;
  };
  const std::vector<ConvCase> cases = {
      {{1, 3, 5, 5}, {3, 2, 3, 3}, params(), true},
      {{1, 8, 6, 7}, {8, 4, 2, 2}, params({2, 2}), true},                               // PP-OCR FPN upsample
      {{2, 4, 5, 4}, {4, 3, 3, 3}, params({2, 2}, {1, 1, 1, 1}), true},
      {{1, 4, 5, 4}, {4, 3, 3, 3}, with(params({2, 2}, {1, 1, 1, 1}), {1, 1}), true},   // output_padding
      {{1, 4, 5, 4}, {4, 3, 3, 3}, with(params({3, 2}, {0, 0, 0, 0}), {2, 1}), false},  // tail beyond pads
      {{1, 6, 4, 5}, {6, 2, 3, 3}, params({2, 1}, {1, 0, 0, 1}, {}, 3), true},         // grouped
      {{1, 4, 4, 4}, {4, 1, 3, 3}, params({2, 2}, {1, 1, 1, 1}, {}, 4), true},         // depthwise
      {{1, 2, 4, 5}, {2, 3, 3, 2}, params({1, 2}, {1, 1, 0, 0}, {2, 2}), true},        // dilated
      {{1, 1, 3, 3}, {1, 2, 3, 3}, with(params({3, 2}), {}, {10, 8}), true},            // output_shape
      {{1, 1, 3, 3}, {1, 2, 3, 3}, params({2, 2}, {}, {}, 1, "SAME_UPPER"), true},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, params({2, 2}, {}, {}, 1, "SAME_LOWER"), false},
      {{2, 3, 7}, {3, 2, 4}, params({2}, {1, 0}), true},                                // 1-D
      {{1, 2, 3, 3, 2}, {2, 2, 2, 3, 2}, params({2, 1, 2}), true},                      // 3-D
  };
  uint32_t seed = 500;
  for (const auto& c : cases) run_conv_case(c, true, seed += 10);
}

TEST(CpuConv, ConcurrentRunsShareOneRunner) {
  const ConvCase c{{1, 16, 20, 20}, {16, 1, 3, 3}, params({1, 1}, {1, 1, 1, 1}, {}, 16), true};
  const m::ConvGeometry g = m::conv_geometry(c.p, c.x, c.w);
  const auto x = random_vec(m::numel(c.x), 7), w = random_vec(m::numel(c.w), 8), b = random_vec(16, 9);
  const auto want = reference_conv(x, w, b.data(), g);
  m::ConvRunner runner(false, m::ConvLayout::kAuto, w.data());
  std::vector<std::thread> pool;
  std::vector<std::vector<float>> ys(4, std::vector<float>(want.size()));
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) runner.run(g, x.data(), w.data(), b.data(), ys[t].data(), 1 + t % 2);
    });
  for (auto& th : pool) th.join();
  for (const auto& y : ys) expect_close(y, want);
}

// ---- matmul / gemm ------------------------------------------------------------------------------------

namespace {

std::vector<double> reference_matmul(const std::vector<float>& a, Shape as, const std::vector<float>& b, Shape bs) {
  const Shape out = m::matmul_output_shape(as, bs);
  if (as.size() == 1) as = {1, as[0]};
  if (bs.size() == 1) bs = {bs[0], 1};
  const size_t r = std::max(as.size(), bs.size());
  as.insert(as.begin(), r - as.size(), 1);
  bs.insert(bs.begin(), r - bs.size(), 1);
  const int64_t M = as[r - 2], K = as[r - 1], N = bs[r - 1];
  Shape batch(r - 2);
  for (size_t i = 0; i + 2 < r; ++i) batch[i] = std::max(as[i], bs[i]);
  std::vector<double> y(m::numel(out));
  for (int64_t bi = 0; bi < m::numel(batch); ++bi) {
    const auto idx = unravel(bi, batch);
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ao = ao * as[d] + (as[d] == 1 ? 0 : idx[d]);
      bo = bo * bs[d] + (bs[d] == 1 ? 0 : idx[d]);
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += double(a[(ao * M + i) * K + k]) * b[(bo * K + k) * N + j];
        y[(bi * M + i) * N + j] = acc;
      }
  }
  return y;
}

}  // namespace

TEST(CpuMatMul, MatchesReference) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4, 5}, {5, 3}},       {{1, 288}, {288, 2}},    {{2, 3, 4, 5}, {2, 3, 5, 6}}, {{2, 1, 4, 5}, {3, 5, 6}},
      {{7}, {7, 3}},          {{2, 4, 7}, {7}},         {{7}, {7}},                   {{3, 4, 5}, {5, 6}},
      {{1, 64, 96}, {96, 96}}};
  uint32_t seed = 900;
  for (const auto& [as, bs] : cases) {
    const auto a = random_vec(m::numel(as), seed++), b = random_vec(m::numel(bs), seed++);
    const auto want = reference_matmul(a, as, b, bs);
    for (bool constant : {false, true})
      for (int threads : {1, 2}) {
        m::MatMulRunner runner(constant ? b.data() : nullptr);
        std::vector<float> y(want.size(), -5.f);
        runner.run(a.data(), as, b.data(), bs, y.data(), threads);
        SCOPED_TRACE(m::to_string(as) + " x " + m::to_string(bs));
        expect_close(y, want);
      }
  }
  EXPECT_EQ(m::matmul_output_shape({2, 1, 4, 5}, {3, 5, 6}), (Shape{2, 3, 4, 6}));
  EXPECT_EQ(m::matmul_output_shape({5}, {5}), Shape{});
  EXPECT_THROW(m::matmul_output_shape({4, 5}, {4, 5}), std::invalid_argument);
}

TEST(CpuGemm, MatchesReference) {
  struct Case {
    bool ta, tb;
    float alpha, beta;
    Shape c;  // empty vector + no_c => no C
    bool has_c;
  };
  const int64_t M = 5, K = 7, N = 6;
  const std::vector<Case> cases = {
      {false, false, 1.f, 1.f, {N}, true},     {true, false, 0.5f, 2.f, {M, N}, true},
      {false, true, 1.f, 1.f, {M, 1}, true},   {true, true, 2.f, 0.25f, {1, 1}, true},
      {false, false, 1.f, 1.f, {}, false},     {false, true, 1.5f, 1.f, {}, true},  // scalar C
      {false, false, 1.f, 0.f, {M, N}, true}};
  uint32_t seed = 1300;
  for (const auto& c : cases) {
    const Shape as = c.ta ? Shape{K, M} : Shape{M, K}, bs = c.tb ? Shape{N, K} : Shape{K, N};
    const auto a = random_vec(M * K, seed++), b = random_vec(K * N, seed++), cv = random_vec(std::max<int64_t>(m::numel(c.c), 1), seed++);
    std::vector<double> want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(c.ta ? a[k * M + i] : a[i * K + k]) * (c.tb ? b[j * K + k] : b[k * N + j]);
        double cterm = 0;
        if (c.has_c) {
          const int64_t ci = c.c.size() == 2 ? (c.c[0] == 1 ? 0 : i) * c.c[1] + (c.c[1] == 1 ? 0 : j)
                                             : (c.c.size() == 1 ? j : 0);
          cterm = cv[ci];
        }
        want[i * N + j] = c.alpha * acc + c.beta * cterm;
      }
    m::GemmParams p{c.ta, c.tb, c.alpha, c.beta};
    for (bool constant : {false, true}) {
      m::GemmRunner runner(p, constant ? b.data() : nullptr);
      std::vector<float> y(M * N, -3.f);
      runner.run(a.data(), as, b.data(), bs, c.has_c ? cv.data() : nullptr, c.c, y.data(), 2);
      expect_close(y, want);
    }
  }
}

// ---- pooling ----------------------------------------------------------------------------------------

namespace {

// 2-D pooling by definition: every window position checked against the (padded) input.
void reference_pool2d(const std::vector<float>& x, const m::PoolGeometry& g, bool is_max, bool include_pad,
                      std::vector<float>* y, std::vector<int64_t>* idx) {
  const int64_t H = g.in_spatial[0], W = g.in_spatial[1], OH = g.out_spatial[0], OW = g.out_spatial[1];
  y->assign(g.batch * g.channels * OH * OW, 0.f);
  idx->assign(y->size(), -1);
  for (int64_t p = 0; p < g.batch * g.channels; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -INFINITY, sum = 0;
        int64_t count = 0, best_at = -1;
        for (int64_t kh = 0; kh < g.kernel[0]; ++kh)
          for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
            const int64_t h = oh * g.strides[0] - g.pad_begin[0] + kh * g.dilations[0];
            const int64_t w = ow * g.strides[1] - g.pad_begin[1] + kw * g.dilations[1];
            const bool inside = h >= 0 && h < H && w >= 0 && w < W;
            const bool in_padded = h >= -g.pad_begin[0] && h < H + g.pad_end[0] && w >= -g.pad_begin[1] &&
                                   w < W + g.pad_end[1];
            if (inside) {
              const float v = x[(p * H + h) * W + w];
              if (v > best) {
                best = v;
                best_at = (p * H + h) * W + w;
              }
              sum += v;
            }
            if (include_pad ? in_padded : inside) ++count;
          }
        const int64_t o = (p * OH + oh) * OW + ow;
        (*y)[o] = is_max ? static_cast<float>(best) : static_cast<float>(count ? sum / count : 0);
        (*idx)[o] = best_at;
      }
}

}  // namespace

TEST(CpuPool, MatchesReference) {
  struct Case {
    Shape x;
    m::PoolParams p;
  };
  auto pp = [](Shape k, Shape s, Shape pads, bool ceil, Shape dil = {}, std::string auto_pad = "NOTSET") {
    m::PoolParams p;
    p.kernel_shape = std::move(k);
    p.strides = std::move(s);
    p.pads = std::move(pads);
    p.ceil_mode = ceil;
    p.dilations = std::move(dil);
    p.auto_pad = std::move(auto_pad);
    return p;
  };
  const std::vector<Case> cases = {
      {{1, 2, 8, 8}, pp({2, 2}, {2, 2}, {}, false)},
      {{2, 3, 9, 7}, pp({3, 3}, {2, 2}, {1, 1, 1, 1}, false)},
      {{1, 2, 10, 9}, pp({3, 3}, {2, 2}, {0, 0, 1, 1}, true)},
      {{1, 1, 4, 4}, pp({3, 3}, {2, 2}, {}, true)},
      {{1, 2, 9, 9}, pp({2, 3}, {1, 2}, {1, 0, 0, 2}, false, {2, 1})},
      {{1, 2, 7, 8}, pp({3, 3}, {2, 2}, {}, false, {}, "SAME_UPPER")},
      {{1, 2, 7, 8}, pp({2, 2}, {2, 2}, {}, false, {}, "SAME_LOWER")},
  };
  uint32_t seed = 1700;
  for (const auto& c : cases) {
    const auto g = m::pool_geometry(c.p, c.x);
    const auto x = random_vec(m::numel(c.x), seed++);
    std::vector<float> want;
    std::vector<int64_t> want_idx;
    reference_pool2d(x, g, true, false, &want, &want_idx);
    std::vector<float> y(want.size());
    std::vector<int64_t> idx(want.size());
    m::max_pool(x.data(), g, y.data(), idx.data(), false, 2);
    expect_close(y, want, 0);
    EXPECT_EQ(idx, want_idx);
    // Bytes, values only (the int8 models' path: rows' maximum first, then along the taps): the same
    // windows' maxima. The float values map to bytes monotonically, so the byte maxima are theirs.
    std::vector<uint8_t> xu(x.size()), yu(want.size());
    std::vector<int8_t> xs(x.size()), ys(want.size());
    auto to_byte = [](float v) { return static_cast<int>(std::lround(std::clamp(v * 40.f, -128.f, 127.f))); };
    for (size_t i = 0; i < x.size(); ++i) {
      xs[i] = static_cast<int8_t>(to_byte(x[i]));
      xu[i] = static_cast<uint8_t>(to_byte(x[i]) + 128);
    }
    m::max_pool(xu.data(), g, yu.data(), nullptr, false, 2);
    m::max_pool(xs.data(), g, ys.data(), nullptr, false, 2);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(ys[i], to_byte(want[i])) << i;
      ASSERT_EQ(yu[i], to_byte(want[i]) + 128) << i;
    }
    for (bool include_pad : {false, true}) {
      reference_pool2d(x, g, false, include_pad, &want, &want_idx);
      m::average_pool(x.data(), g, y.data(), include_pad, 2);
      expect_close(y, want, 1e-5);
    }
  }
  // ceil_mode: 4x4, k3 s2 -> 2x2 (onnx test_maxpool_2d_ceil).
  EXPECT_EQ(m::pool_geometry(pp({3, 3}, {2, 2}, {}, true), {1, 1, 4, 4}).out_spatial, (Shape{2, 2}));
  // A last window that would start inside the end padding is dropped.
  EXPECT_EQ(m::pool_geometry(pp({2}, {2}, {0, 1}, true), {1, 1, 4}).out_spatial, (Shape{2}));
}

// max_pool_nhwc (the int8 convolution chains' pool on channels-last bytes) against max_pool on the
// same bytes in NCHW, on every ISA tier: channel counts around each tier's vector (full blocks and
// tails), the stem's 3x3 stride-2 window with padding, dilation, asymmetric pads, ceil mode.
class CpuMaxPoolNhwc : public IsaTierTest {};
EPHOST_INSTANTIATE_FOR_EVERY_ISA(CpuMaxPoolNhwc);

template <typename T>
void check_max_pool_nhwc(const m::PoolParams& p, int64_t C, uint32_t seed) {
  const Shape x_shape{2, C, 9, 11};
  const m::PoolGeometry g = m::pool_geometry(p, x_shape);
  const int64_t H = 9, W = 11, OH = g.out_spatial[0], OW = g.out_spatial[1];
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<T> nchw(static_cast<size_t>(m::numel(x_shape))), nhwc(nchw.size());
  for (T& v : nchw) v = static_cast<T>(byte(gen));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H * W; ++i) nhwc[(n * H * W + i) * C + c] = nchw[(n * C + c) * H * W + i];
  std::vector<T> want(static_cast<size_t>(2 * C * OH * OW)), got(want.size() + 1, T{42});
  m::max_pool(nchw.data(), g, want.data(), nullptr, false, 1);
  m::max_pool_nhwc(nhwc.data(), g, got.data(), 2);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < OH * OW; ++i)
        ASSERT_EQ(+got[(n * OH * OW + i) * C + c], +want[(n * C + c) * OH * OW + i])
            << "C " << C << " channel " << c << " pixel " << i << " image " << n;
  ASSERT_EQ(got.back(), T{42}) << "wrote past the end, C " << C;
}

TEST_P(CpuMaxPoolNhwc, MatchesTheNchwPoolOnBytes) {
  auto pp = [](Shape k, Shape s, Shape pads, bool ceil, Shape dil = {}) {
    m::PoolParams p;
    p.kernel_shape = std::move(k);
    p.strides = std::move(s);
    p.pads = std::move(pads);
    p.ceil_mode = ceil;
    p.dilations = std::move(dil);
    return p;
  };
  const std::vector<m::PoolParams> pools = {pp({3, 3}, {2, 2}, {1, 1, 1, 1}, false), pp({2, 2}, {2, 2}, {}, true),
                                            pp({2, 3}, {1, 2}, {1, 0, 0, 2}, false, {2, 1}),
                                            pp({3, 3}, {1, 1}, {2, 2, 2, 2}, false)};
  uint32_t seed = 900;
  for (const m::PoolParams& p : pools)
    for (int64_t C : {1, 17, 32, 63, 64, 70, 131}) {
      check_max_pool_nhwc<uint8_t>(p, C, seed++);
      check_max_pool_nhwc<int8_t>(p, C, seed++);
    }
}

TEST(CpuPool, GlobalPools) {
  const auto x = random_vec(2 * 3 * 50, 33);
  std::vector<float> avg(6), mx(6);
  m::global_average_pool(x.data(), 6, 50, avg.data(), 2);
  m::global_max_pool(x.data(), 6, 50, mx.data(), 2);
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    float best = -INFINITY;
    for (int i = 0; i < 50; ++i) {
      s += x[p * 50 + i];
      best = std::max(best, x[p * 50 + i]);
    }
    EXPECT_NEAR(avg[p], s / 50, 1e-6);
    EXPECT_EQ(mx[p], best);
  }
}

// ---- resize ---------------------------------------------------------------------------------------------

namespace {

std::vector<float> run_resize(const std::vector<float>& x, const Shape& in, const std::vector<float>& scales,
                              m::ResizeParams p, Shape out = {}) {
  if (out.empty())
    for (size_t i = 0; i < in.size(); ++i) out.push_back(m::resize_output_size(in[i], scales[i]));
  std::vector<float> y(m::numel(out));
  m::resize(x.data(), in, y.data(), out, scales, p, 2);
  return y;
}

m::ResizeParams rp(m::ResizeMode mode, m::CoordMode coord, m::NearestMode nearest = m::NearestMode::kRoundPreferFloor) {
  m::ResizeParams p;
  p.mode = mode;
  p.coord = coord;
  p.nearest = nearest;
  return p;
}

}  // namespace

// Expected values are those of the ONNX backend node tests of the same names.
TEST(CpuResize, OnnxNodeTestValues) {
  using M = m::ResizeMode;
  using C = m::CoordMode;
  const std::vector<float> x22{1, 2, 3, 4}, x24{1, 2, 3, 4, 5, 6, 7, 8};
  // test_resize_upsample_scales_nearest
  expect_close(run_resize(x22, {1, 1, 2, 2}, {1, 1, 2, 3}, rp(M::kNearest, C::kHalfPixel)),
               std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  // test_resize_downsample_scales_nearest
  expect_close(run_resize(x24, {1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, rp(M::kNearest, C::kHalfPixel)),
               std::vector<float>{1, 3});
  // Resize-10 / Upsample (asymmetric, ceil when downsampling): test_resize_downsample_nearest (opset 10)
  expect_close(run_resize(x24, {1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, rp(M::kNearest, C::kAsymmetric, m::NearestMode::kSimple)),
               std::vector<float>{1, 3});
  // test_resize_upsample_scales_linear
  expect_close(run_resize(x22, {1, 1, 2, 2}, {1, 1, 2, 2}, rp(M::kLinear, C::kHalfPixel)),
               std::vector<float>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  // test_resize_upsample_scales_linear_align_corners
  expect_close(run_resize(x22, {1, 1, 2, 2}, {1, 1, 2, 2}, rp(M::kLinear, C::kAlignCorners)),
               std::vector<float>{1, 1.3333333f, 1.6666667f, 2, 1.6666666f, 2, 2.3333333f, 2.6666667f, 2.3333333f,
                                  2.6666665f, 3, 3.3333333f, 3, 3.3333333f, 3.6666667f, 4});
  // test_resize_downsample_scales_linear
  expect_close(run_resize(x24, {1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, rp(M::kLinear, C::kHalfPixel)),
               std::vector<float>{2.6666665f, 4.3333331f});
  // test_resize_downsample_scales_linear_align_corners
  expect_close(run_resize(x24, {1, 1, 2, 4}, {1, 1, 0.6f, 0.6f}, rp(M::kLinear, C::kAlignCorners)),
               std::vector<float>{1, 3.142857f});
  // test_resize_upsample_scales_cubic (first row)
  std::vector<float> x44(16);
  std::iota(x44.begin(), x44.end(), 1.f);
  const auto cubic = run_resize(x44, {1, 1, 4, 4}, {1, 1, 2, 2}, rp(M::kCubic, C::kHalfPixel));
  expect_close(std::vector<float>(cubic.begin(), cubic.begin() + 8),
               std::vector<float>{0.47265625f, 0.76953125f, 1.24609375f, 1.875f, 2.28125f, 2.91015625f, 3.38671875f,
                                  3.68359375f});
  // test_resize_upsample_sizes_nearest_ceil_half_pixel-like: sizes give scale = out / in.
  const auto sized = run_resize(x22, {1, 1, 2, 2}, {1, 1, 1.5f, 1.5f}, rp(M::kNearest, C::kAsymmetric, m::NearestMode::kFloor),
                                Shape{1, 1, 3, 3});
  expect_close(sized, std::vector<float>{1, 1, 2, 1, 1, 2, 3, 3, 4});
}

TEST(CpuResize, LinearSeparablePathMatchesDirect) {
  // Resizing three axes takes the separable path; compare with trilinear interpolation by formula.
  const Shape in{2, 3, 4, 5};
  const auto x = random_vec(m::numel(in), 77);
  const std::vector<float> scales{1, 1.5f, 0.75f, 2};
  const m::ResizeParams p = rp(m::ResizeMode::kLinear, m::CoordMode::kPytorchHalfPixel);
  const auto y = run_resize(x, in, scales, p);
  const Shape out{2, 4, 3, 10};
  std::vector<double> want(m::numel(out));
  for (int64_t i = 0; i < m::numel(out); ++i) {
    const auto o = unravel(i, out);
    double acc = 0;
    const auto t1 = m::resize_axis_taps(p, in[1], out[1], scales[1]);
    const auto t2 = m::resize_axis_taps(p, in[2], out[2], scales[2]);
    const auto t3 = m::resize_axis_taps(p, in[3], out[3], scales[3]);
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 2; ++c) {
          const double w = double(t1.weight[o[1] * 2 + a]) * t2.weight[o[2] * 2 + b] * t3.weight[o[3] * 2 + c];
          acc += w * x[ravel({o[0], t1.index[o[1] * 2 + a], t2.index[o[2] * 2 + b], t3.index[o[3] * 2 + c]}, in)];
        }
    want[i] = acc;
  }
  expect_close(y, want, 1e-5);
}

TEST(CpuResize, AntialiasLinearHalvingByHand) {
  // Scale 0.5 widens the triangle to 4 taps at distances 0.75, 0.25, 0.25, 0.75 input positions times the
  // scale: weights 1/8, 3/8, 3/8, 1/8, the left one on the edge copy of x[0] (ONNX pads with edge values).
  m::ResizeParams p = rp(m::ResizeMode::kLinear, m::CoordMode::kHalfPixel);
  p.antialias = true;
  expect_close(run_resize({1, 2, 3, 4}, {4}, {0.5f}, p), std::vector<float>{1.625f, 3.375f});
  // Without antialias the same halving reads only the two middle positions of each pair.
  p.antialias = false;
  expect_close(run_resize({1, 2, 3, 4}, {4}, {0.5f}, p), std::vector<float>{1.5f, 3.5f});
}

TEST(CpuResize, AntialiasIgnoredWhenUpscaling) {
  const Shape in{1, 3, 5};
  const auto x = random_vec(m::numel(in), 5);
  for (m::ResizeMode mode : {m::ResizeMode::kLinear, m::ResizeMode::kCubic, m::ResizeMode::kNearest}) {
    m::ResizeParams p = rp(mode, m::CoordMode::kHalfPixel);
    const auto plain = run_resize(x, in, {1, 2, 1.5f}, p);
    p.antialias = true;
    expect_close(run_resize(x, in, {1, 2, 1.5f}, p), std::vector<double>(plain.begin(), plain.end()), 1e-6);
  }
}

TEST(CpuResize, AntialiasTinyScaleMergesEdgeTaps) {
  // At scale 1e-3 the cubic filter spans thousands of positions; the taps that clamp onto the edges merge,
  // so an output reads at most the input's 7 positions, with weights summing to 1.
  for (bool exclude : {false, true}) {
    m::ResizeParams p = rp(m::ResizeMode::kCubic, m::CoordMode::kAsymmetric);
    p.antialias = true;
    p.exclude_outside = exclude;
    const auto t = m::resize_axis_taps(p, 7, 1, 1e-3f);
    EXPECT_LE(t.taps, 7);
    double sum = 0;
    for (int64_t j = 0; j < t.taps; ++j) {
      EXPECT_GE(t.index[j], 0);
      EXPECT_LE(t.index[j], 6);
      sum += t.weight[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(CpuResize, NearestOnBytes) {
  const std::vector<int64_t> x{10, 20, 30, 40};
  std::vector<int64_t> y(16);
  m::resize_nearest(x.data(), {2, 2}, y.data(), {4, 4}, {2, 2}, rp(m::ResizeMode::kNearest, m::CoordMode::kAsymmetric),
                    sizeof(int64_t), 1);
  EXPECT_EQ(y, (std::vector<int64_t>{10, 10, 20, 20, 10, 10, 20, 20, 30, 30, 40, 40, 30, 30, 40, 40}));
}

// ---- softmax, reductions, transpose, half ---------------------------------------------------------

TEST(CpuSoftmax, MatchesReference) {
  for (auto [outer, n, inner] : std::vector<std::array<int64_t, 3>>{{3, 10, 1}, {2, 5, 7}, {1, 1000, 1}, {4, 3, 2}})
    for (bool log : {false, true}) {
      const auto x = random_vec(outer * n * inner, 12, -20.f, 20.f);
      std::vector<float> y(x.size());
      m::softmax(x.data(), y.data(), outer, n, inner, log, 2);
      std::vector<double> want(x.size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double mx = -INFINITY, s = 0;
          for (int64_t j = 0; j < n; ++j) mx = std::max<double>(mx, x[(o * n + j) * inner + i]);
          for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[(o * n + j) * inner + i]) - mx);
          for (int64_t j = 0; j < n; ++j) {
            const double v = double(x[(o * n + j) * inner + i]) - mx;
            want[(o * n + j) * inner + i] = log ? v - std::log(s) : std::exp(v) / s;
          }
        }
      expect_close(y, want, 1e-5);
    }
}

TEST(CpuReduce, SumOverAnyAxes) {
  const Shape in{3, 4, 5, 2};
  const auto x = random_vec(m::numel(in), 55);
  const std::vector<std::vector<int64_t>> axes_list = {{0}, {1}, {3}, {0, 2}, {1, 3}, {0, 1, 2, 3}, {2, 3}, {}};
  for (const auto& axes : axes_list) {
    const auto plan = m::plan_reduce(in, axes);
    const Shape out = m::reduce_shape(in, axes, true);
    std::vector<float> y(m::numel(out));
    m::reduce(x.data(), plan, y.data(), 0.f, [](float a, float v) { return a + v; }, [](float a, int64_t) { return a; }, 2);
    std::vector<double> want(y.size(), 0.0);
    for (int64_t i = 0; i < m::numel(in); ++i) {
      auto idx = unravel(i, in);
      for (int64_t a : axes) idx[a] = 0;
      want[ravel(idx, out)] += x[i];
    }
    expect_close(y, want, 1e-5);
  }
  std::vector<int64_t> am(3 * 5 * 2);
  m::arg_reduce(x.data(), 3, 4, 10, true, false, am.data(), 1);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < 10; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < 4; ++j)
        if (x[(o * 4 + j) * 10 + i] > x[(o * 4 + best) * 10 + i]) best = j;
      EXPECT_EQ(am[o * 10 + i], best);
    }
}

TEST(CpuTranspose, MatchesReference) {
  const Shape in{2, 3, 4, 5};
  std::vector<int32_t> x(m::numel(in));
  std::iota(x.begin(), x.end(), 0);
  std::vector<int64_t> perm{0, 1, 2, 3};
  do {
    std::vector<int64_t> p = perm;
    const Shape out = m::transpose_shape(in, &p);
    std::vector<int32_t> y(x.size());
    m::transpose(x.data(), in, p, y.data(), sizeof(int32_t), 2);
    for (int64_t i = 0; i < m::numel(out); ++i) {
      const auto o = unravel(i, out);
      std::vector<int64_t> src(4);
      for (int d = 0; d < 4; ++d) src[p[d]] = o[d];
      ASSERT_EQ(y[i], x[ravel(src, in)]);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::vector<int64_t> bad{0, 0, 1, 2};
  EXPECT_THROW(m::transpose_shape(in, &bad), std::invalid_argument);
}

// The byte transpose's register tiles and its partial edge tiles, between strided rows (the
// NCHW <-> NHWC conversions of the int8 convolutions), against the element loop; bytes outside the
// transposed block stay untouched.
TEST(CpuTranspose2d, BytesMatchElementLoop) {
  for (int64_t rows : {1, 7, 16, 17, 40, 129})
    for (int64_t cols : {1, 3, 16, 24, 33, 72}) {
      const int64_t ss = cols + 5, ds = rows + 3;
      std::vector<uint8_t> src(static_cast<size_t>(rows * ss));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
      std::vector<uint8_t> got(static_cast<size_t>(cols * ds), 0xEE), want = got;
      m::transpose_2d(src.data(), ss, got.data(), ds, rows, cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) want[c * ds + r] = src[r * ss + c];
      ASSERT_EQ(got, want) << rows << "x" << cols;
    }
}

TEST(CpuHalf, Conversions) {
  EXPECT_EQ(m::float_to_half(1.f), 0x3c00);
  EXPECT_EQ(m::float_to_half(-2.f), 0xc000);
  EXPECT_EQ(m::float_to_half(65504.f), 0x7bff);
  EXPECT_EQ(m::float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(m::float_to_half(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(m::float_to_half(1.f + 1.f / 2048), 0x3c00);  // tie rounds to even
  EXPECT_EQ(m::half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(m::half_to_float(0x0001), 5.9604645e-8f);
  EXPECT_TRUE(std::isnan(m::half_to_float(m::float_to_half(NAN))));
  for (uint32_t h = 0; h < 0x7c00; h += 7) EXPECT_EQ(m::float_to_half(m::half_to_float(h)), h);
}
