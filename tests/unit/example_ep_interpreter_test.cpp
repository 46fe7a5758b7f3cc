// The example EP's interpreter (samples/example_ep/interpreter) against plain reference loops: the
// blocked GEMM across block edges, Conv (im2col, 1x1 direct, grouped, depthwise), MaxPool, broadcasting
// arithmetic, Softmax (both opset semantics) and the shape ops, each run as a one-op program.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interpreter/gemm.h"
#include "interpreter/runner.h"

namespace {

using namespace example_ep;

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1.0f + std::fabs(want[i]))) << "at " << i;
}

// A program of one op over one input tensor and the given weights.
struct OneOp {
  Program program;
  OneOp(OpKind kind, std::vector<Weight> weights, std::vector<int64_t> ints = {}, std::vector<float> floats = {},
        size_t runtime_inputs = 1) {
    for (size_t i = 0; i < runtime_inputs; ++i) program.input_names.push_back("x" + std::to_string(i));
    program.weights = std::move(weights);
    Op op{kind, "op", {}, std::move(ints), std::move(floats)};
    for (uint32_t s = 0; s < program.first_op_slot(); ++s) op.inputs.push_back(s);
    program.ops.push_back(op);
    program.outputs = {program.first_op_slot()};
    program.output_names = {"y"};
    validate(program);
  }
  // Runs on `inputs`; returns the output and its shape.
  std::vector<float> run(const std::vector<ConstTensor>& inputs, Shape* shape = nullptr) const {
    std::vector<float> out;
    Runner(program).run(inputs, [&](size_t, const Shape& s) {
      if (shape) *shape = s;
      out.resize(static_cast<size_t>(numel(s)));
      return out.data();
    });
    return out;
  }
};

TEST(ExampleEpGemm, MatchesReferenceAcrossBlockEdges) {
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 13, 5}, {100, 1030, 300}, {97, 17, 513}}) {
    const int64_t lda = K + 3, ldb = N + 5, ldc = N + 2;
    std::vector<float> a = random_values(static_cast<size_t>(M * lda), 1), b = random_values(static_cast<size_t>(K * ldb), 2);
    for (bool accumulate : {false, true}) {
      std::vector<float> c = random_values(static_cast<size_t>(M * ldc), 3), want = c;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = accumulate ? want[i * ldc + j] : 0.0;
          for (int64_t k = 0; k < K; ++k) s += static_cast<double>(a[i * lda + k]) * b[k * ldb + j];
          want[i * ldc + j] = static_cast<float>(s);
        }
      gemm(M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
      expect_close(c, want);
    }
  }
}

struct ConvCase {
  int64_t N, C, H, W, M, kh, kw, group;
  int64_t pt, pl, pb, pr, sh, sw, dh, dw;
  bool bias;
};

std::vector<float> reference_conv(const ConvCase& p, const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& b, int64_t Ho, int64_t Wo) {
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  std::vector<float> y(static_cast<size_t>(p.N * p.M * Ho * Wo));
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          double s = p.bias ? b[m] : 0.0;
          const int64_t g = m / Mg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                const int64_t ih = oh * p.sh - p.pt + i * p.dh, iw = ow * p.sw - p.pl + j * p.dw;
                if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
                s += static_cast<double>(x[((n * p.C + g * Cg + c) * p.H + ih) * p.W + iw]) *
                     w[((m * Cg + c) * p.kh + i) * p.kw + j];
              }
          y[((n * p.M + m) * Ho + oh) * Wo + ow] = static_cast<float>(s);
        }
  return y;
}

TEST(ExampleEpConv, MatchesReference) {
  const std::vector<ConvCase> cases = {
      {2, 3, 7, 9, 4, 3, 2, 1, 1, 0, 2, 1, 2, 1, 1, 2, true},    // im2col: pads, strides, dilations
      {1, 4, 6, 6, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, false},   // grouped
      {1, 5, 9, 37, 5, 3, 3, 5, 1, 1, 1, 1, 2, 1, 1, 1, true},   // depthwise, vector path
      {2, 3, 8, 11, 3, 5, 5, 3, 2, 2, 2, 2, 1, 2, 1, 1, false},  // depthwise, strided columns
      {1, 3, 4, 4, 3, 3, 3, 3, 2, 2, 0, 0, 1, 1, 2, 2, true},    // depthwise, dilated, padding > data
      {2, 8, 5, 7, 16, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, true},   // 1x1: x is its own im2col
      {1, 16, 3, 3, 2, 1, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1, false},  // 1x1 strided
  };
  uint32_t seed = 10;
  for (const ConvCase& p : cases) {
    SCOPED_TRACE("case with C=" + std::to_string(p.C) + " M=" + std::to_string(p.M) + " group=" + std::to_string(p.group));
    std::vector<float> x = random_values(static_cast<size_t>(p.N * p.C * p.H * p.W), seed++);
    std::vector<Weight> weights = {Weight{{p.M, p.C / p.group, p.kh, p.kw},
                                          random_values(static_cast<size_t>(p.M * p.C / p.group * p.kh * p.kw), seed++)}};
    if (p.bias) weights.push_back(Weight{{p.M}, random_values(static_cast<size_t>(p.M), seed++)});
    OneOp conv(OpKind::kConv, weights, {p.group, p.pt, p.pl, p.pb, p.pr, p.sh, p.sw, p.dh, p.dw});
    Shape shape;
    std::vector<float> y = conv.run({ConstTensor{x.data(), {p.N, p.C, p.H, p.W}}}, &shape);
    const int64_t Ho = (p.H + p.pt + p.pb - (p.kh - 1) * p.dh - 1) / p.sh + 1;
    const int64_t Wo = (p.W + p.pl + p.pr - (p.kw - 1) * p.dw - 1) / p.sw + 1;
    EXPECT_EQ(shape, (Shape{p.N, p.M, Ho, Wo}));
    expect_close(y, reference_conv(p, x, weights[0].data, p.bias ? weights[1].data : std::vector<float>{}, Ho, Wo));
  }
}

TEST(ExampleEpConv, WrongChannelCountIsAClearError) {
  OneOp conv(OpKind::kConv, {Weight{{2, 3, 1, 1}, std::vector<float>(6, 1.0f)}}, {1, 0, 0, 0, 0, 1, 1, 1, 1});
  std::vector<float> x(4 * 4 * 4);
  try {
    conv.run({ConstTensor{x.data(), {1, 4, 4, 4}}});
    FAIL() << "expected an error";
  } catch (const ephost::sdk::Error& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("Conv 'op': input has 4 channels, the weights expect 3"), std::string::npos) << e.what();
  }
}

TEST(ExampleEpPool, MaxPoolMatchesReference) {
  // kernel h, w, pads t, l, b, r, strides h, w, dilations h, w, ceil_mode
  for (const std::vector<int64_t>& ints : {std::vector<int64_t>{2, 2, 0, 0, 0, 0, 2, 2, 1, 1, 0},
                                           std::vector<int64_t>{3, 2, 1, 0, 1, 1, 2, 3, 1, 1, 1},
                                           std::vector<int64_t>{2, 3, 1, 1, 0, 0, 1, 2, 2, 1, 1}}) {
    const int64_t N = 2, C = 3, H = 7, W = 8;
    std::vector<float> x = random_values(static_cast<size_t>(N * C * H * W), 42);
    OneOp pool(OpKind::kMaxPool, {}, ints);
    Shape shape;
    std::vector<float> y = pool.run({ConstTensor{x.data(), {N, C, H, W}}}, &shape);
    const int64_t Ho = shape[2], Wo = shape[3];
    // Output size as ONNX defines it (ceil_mode rounds up, but no window may start in the end padding).
    auto size = [&](int64_t in, int64_t k, int64_t pb, int64_t pe, int64_t s, int64_t d) {
      double span = static_cast<double>(in + pb + pe - (k - 1) * d - 1) / static_cast<double>(s);
      int64_t out = static_cast<int64_t>(ints[10] ? std::ceil(span) : std::floor(span)) + 1;
      if (ints[10] && (out - 1) * s >= in + pb) --out;
      return out;
    };
    ASSERT_EQ(Ho, size(H, ints[0], ints[2], ints[4], ints[6], ints[8]));
    ASSERT_EQ(Wo, size(W, ints[1], ints[3], ints[5], ints[7], ints[9]));
    std::vector<float> want(y.size());
    for (int64_t p = 0; p < N * C; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          float m = -INFINITY;
          for (int64_t i = 0; i < ints[0]; ++i)
            for (int64_t j = 0; j < ints[1]; ++j) {
              const int64_t ih = oh * ints[6] - ints[2] + i * ints[8], iw = ow * ints[7] - ints[3] + j * ints[9];
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, x[(p * H + ih) * W + iw]);
            }
          want[(p * Ho + oh) * Wo + ow] = m;
        }
    expect_close(y, want, 0.0f);
  }
}

TEST(ExampleEpPool, GlobalAveragePool) {
  std::vector<float> x = random_values(2 * 3 * 5 * 7, 7);
  Shape shape;
  std::vector<float> y = OneOp(OpKind::kGlobalAveragePool, {}).run({ConstTensor{x.data(), {2, 3, 5, 7}}}, &shape);
  EXPECT_EQ(shape, (Shape{2, 3, 1, 1}));
  std::vector<float> want(6);
  for (size_t p = 0; p < 6; ++p) {
    double s = 0;
    for (size_t i = 0; i < 35; ++i) s += x[p * 35 + i];
    want[p] = static_cast<float>(s / 35);
  }
  expect_close(y, want, 1e-6f);
}

// Element of `shape` (broadcast against `out`) at the flat output index `i`.
size_t broadcast_index(const Shape& shape, const Shape& out, size_t i) {
  size_t index = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const size_t coordinate = i % static_cast<size_t>(out[d]);
    i /= static_cast<size_t>(out[d]);
    if (k < shape.size()) {
      const int64_t dim = shape[shape.size() - 1 - k];
      if (dim != 1) index += coordinate * stride;
      stride *= static_cast<size_t>(dim);
    }
  }
  return index;
}

TEST(ExampleEpElementwise, BroadcastingMatchesReference) {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {3, 1, 1}}, {{2, 3, 4, 5}, {2, 3, 1, 1}}, {{5}, {2, 3, 4, 5}},
      {{}, {2, 3}},                 {{2, 1, 4}, {1, 3, 1}},    {{3, 1}, {3, 4}},           {{1, 1}, {1}}};
  uint32_t seed = 100;
  for (const auto& [sa, sb] : pairs)
    for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv}) {
      std::vector<float> a = random_values(static_cast<size_t>(numel(sa)), seed++), b = random_values(static_cast<size_t>(numel(sb)), seed++);
      for (float& v : b) v += v < 0 ? -0.5f : 0.5f;  // keep divisions tame
      OneOp op(kind, {}, {}, {}, 2);
      Shape shape;
      std::vector<float> y = op.run({ConstTensor{a.data(), sa}, ConstTensor{b.data(), sb}}, &shape);
      std::vector<float> want(y.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const float p = a[broadcast_index(sa, shape, i)], q = b[broadcast_index(sb, shape, i)];
        want[i] = kind == OpKind::kAdd ? p + q : kind == OpKind::kSub ? p - q : kind == OpKind::kMul ? p * q : p / q;
      }
      expect_close(y, want, 1e-6f);
    }
  std::vector<float> a(6), b(4);
  EXPECT_THROW(OneOp(OpKind::kAdd, {}, {}, {}, 2).run({ConstTensor{a.data(), {2, 3}}, ConstTensor{b.data(), {4}}}),
               ephost::sdk::Error);
}

TEST(ExampleEpElementwise, ActivationsAndChannelAffine) {
  std::vector<float> x = random_values(24, 5);
  for (float& v : x) v *= 5.0f;
  auto check = [&](OpKind kind, std::vector<float> floats, float (*f)(float, const std::vector<float>&)) {
    std::vector<float> y = OneOp(kind, {}, {}, floats).run({ConstTensor{x.data(), {2, 3, 4}}});
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = f(x[i], floats);
    expect_close(y, want, 1e-6f);
  };
  check(OpKind::kRelu, {}, [](float v, const std::vector<float>&) { return std::max(v, 0.0f); });
  check(OpKind::kSigmoid, {}, [](float v, const std::vector<float>&) { return 1.0f / (1.0f + std::exp(-v)); });
  check(OpKind::kClip, {-1.0f, 2.5f}, [](float v, const std::vector<float>& c) { return std::min(std::max(v, c[0]), c[1]); });
  check(OpKind::kHardSigmoid, {0.2f, 0.5f},
        [](float v, const std::vector<float>& c) { return std::min(std::max(c[0] * v + c[1], 0.0f), 1.0f); });

  std::vector<float> y = OneOp(OpKind::kChannelAffine, {Weight{{3}, {1, 2, 3}}, Weight{{3}, {0.5f, -1, 0}}})
                             .run({ConstTensor{x.data(), {2, 3, 4}}});
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = (i / 4) % 3;
    EXPECT_NEAR(y[i], x[i] * static_cast<float>(c + 1) + (c == 0 ? 0.5f : c == 1 ? -1.0f : 0.0f), 1e-5f);
  }
}

TEST(ExampleEpDense, MatMulAgainstWeight) {
  std::vector<float> a = random_values(2 * 3 * 7, 8);
  Weight b{{7, 5}, random_values(35, 9)};
  Shape shape;
  std::vector<float> y = OneOp(OpKind::kMatMul, {b}).run({ConstTensor{a.data(), {2, 3, 7}}}, &shape);
  EXPECT_EQ(shape, (Shape{2, 3, 5}));
  std::vector<float> want(30);
  for (size_t r = 0; r < 6; ++r)
    for (size_t j = 0; j < 5; ++j)
      for (size_t k = 0; k < 7; ++k) want[r * 5 + j] += a[r * 7 + k] * b.data[k * 5 + j];
  expect_close(y, want);
  y = OneOp(OpKind::kMatMul, {b}).run({ConstTensor{a.data(), {7}}}, &shape);  // a vector
  EXPECT_EQ(shape, (Shape{5}));
}

TEST(ExampleEpDense, SoftmaxBothOpsetSemantics) {
  std::vector<float> x = random_values(2 * 3 * 4, 11);
  for (int legacy : {0, 1}) {
    std::vector<float> y = OneOp(OpKind::kSoftmax, {}, {1, legacy}).run({ConstTensor{x.data(), {2, 3, 4}}});
    // legacy: each row of [2, 12] sums to 1; otherwise each (n, :, k) column of length 3.
    std::vector<float> want(x.size());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t k = 0; k < (legacy ? 1 : 4); ++k) {
        const int64_t len = legacy ? 12 : 3, step = legacy ? 1 : 4;
        double total = 0;
        for (int64_t c = 0; c < len; ++c) total += std::exp(x[n * 12 + c * step + k]);
        for (int64_t c = 0; c < len; ++c)
          want[n * 12 + c * step + k] = static_cast<float>(std::exp(x[n * 12 + c * step + k]) / total);
      }
    expect_close(y, want, 1e-5f);
  }
}

TEST(ExampleEpDense, ReshapeAndFlatten) {
  std::vector<float> x = random_values(2 * 3 * 4, 12);
  Shape shape;
  std::vector<float> y = OneOp(OpKind::kReshape, {}, {0, -1}).run({ConstTensor{x.data(), {2, 3, 4}}}, &shape);
  EXPECT_EQ(shape, (Shape{2, 12}));
  EXPECT_EQ(y, x);
  OneOp(OpKind::kFlatten, {}, {-1}).run({ConstTensor{x.data(), {2, 3, 4}}}, &shape);
  EXPECT_EQ(shape, (Shape{6, 4}));
  OneOp(OpKind::kFlatten, {}, {0}).run({ConstTensor{x.data(), {2, 3, 4}}}, &shape);
  EXPECT_EQ(shape, (Shape{1, 24}));
  EXPECT_THROW(OneOp(OpKind::kReshape, {}, {5, -1}).run({ConstTensor{x.data(), {2, 3, 4}}}), ephost::sdk::Error);
  EXPECT_THROW(OneOp(OpKind::kFlatten, {}, {4}).run({ConstTensor{x.data(), {2, 3, 4}}}), ephost::sdk::Error);
}

}  // namespace
