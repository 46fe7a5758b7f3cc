// The CPU plugin's fused patterns (plugins/cpu/fusion/) against the unfused graph: each model runs in a
// session with pattern fusion (cpu option fuse_patterns=1, the default) and one without, on the same
// random inputs; the outputs must agree, and the fused session must really contain the fused group
// (so that a pattern that silently stops matching fails here too).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "ephost/ephost_cxx_api.h"
#include "cpu_fused_groups.h"
#include "test_support.h"

using ephost_test::ModelBuilder;
using ephost_test::cpu_env;
using ephost_test::fused_groups;

namespace {

using ephost_test::attr_float;
using ephost_test::attr_int;
using ephost_test::attr_ints;

std::vector<float> random_values(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct Feed {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values = {};  // empty: random
};

std::vector<std::vector<float>> run(const Ephost::Session& s, const std::vector<Feed>& feeds,
                                    std::vector<std::vector<float>>& data, const std::vector<std::string>& outputs) {
  std::vector<std::string> names;
  std::vector<Ephost::Tensor> tensors;
  for (size_t i = 0; i < feeds.size(); ++i) {
    names.push_back(feeds[i].name);
    tensors.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, feeds[i].shape, data[i].data(), data[i].size()));
  }
  std::vector<Ephost::Tensor> out = s.run(names, tensors, outputs);
  std::vector<std::vector<float>> result;
  for (auto& t : out) {
    const float* p = static_cast<const float*>(Ephost::api().TensorGetData(t.get()));
    result.emplace_back(p, p + Ephost::api().TensorGetElementCount(t.get()));
  }
  return result;
}

// Runs `m` fused (2 threads, however busy the machine) and unfused (1 thread) on random inputs of the
// given shapes and compares;
// `expect` lists fused groups the fused session must contain. `host_optimizations` false turns the host's
// graph transforms off in both sessions (the plugin then sees the graph as the model has it).
void check_fused(ModelBuilder& m, const std::vector<Feed>& feeds, const std::vector<std::string>& outputs,
                 const std::vector<std::string>& expect, double tol = 1e-4, uint32_t seed = 1,
                 bool host_optimizations = true) {
  const std::string bytes = m.bytes();
  Ephost::SessionOptions fused_opts;
  if (!host_optimizations) fused_opts.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
  fused_opts.set_threads(2);
  // Two threads even on a busy machine, so that the multi-threaded paths run.
  fused_opts.append_provider("cpu", {{"adaptive_threads", "0"}});
  Ephost::Session fused(cpu_env(), bytes.data(), bytes.size(), fused_opts);
  Ephost::SessionOptions plain_opts;
  if (!host_optimizations) plain_opts.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
  plain_opts.set_threads(1);
  plain_opts.append_provider("cpu", {{"fuse_patterns", "0"}});
  Ephost::Session plain(cpu_env(), bytes.data(), bytes.size(), plain_opts);

  const std::multiset<std::string> groups = fused_groups(fused);
  for (const std::string& g : expect) {
    EXPECT_EQ(groups.count(g), 1u) << "no fused group " << g << "; groups: " << [&] {
      std::string s;
      for (const auto& x : groups) s += "[" + x + "] ";
      return s;
    }();
  }
  for (const std::string& g : fused_groups(plain))
    for (const std::string& e : expect) EXPECT_NE(g, e) << "fuse_patterns=0 still fused " << g;

  std::vector<std::vector<float>> data;
  for (size_t i = 0; i < feeds.size(); ++i)
    data.push_back(feeds[i].values.empty()
                       ? random_values(static_cast<size_t>(count(feeds[i].shape)), seed + static_cast<uint32_t>(i))
                       : feeds[i].values);
  const auto got = run(fused, feeds, data, outputs);
  const auto want = run(plain, feeds, data, outputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << outputs[o];
    double worst = 0;
    for (size_t i = 0; i < got[o].size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[o][i])) << outputs[o] << " at " << i;
      worst = std::max(worst, std::abs(static_cast<double>(got[o][i]) - want[o][i]) / (1.0 + std::abs(want[o][i])));
    }
    EXPECT_LE(worst, tol) << outputs[o];
  }
}

std::vector<float> weights(size_t n, uint32_t seed, float scale = 0.3f) { return random_values(n, seed, -scale, scale); }

// Torch's GELU: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
std::string gelu_torch(ModelBuilder& m, const std::string& x, const std::string& p) {
  m.node("Div", {x, "sqrt2"}, {p + "d"}, p + "div");
  m.node("Erf", {p + "d"}, {p + "e"}, p + "erf");
  m.node("Add", {p + "e", "one"}, {p + "a"}, p + "add1");
  m.node("Mul", {x, p + "a"}, {p + "m"}, p + "mul");
  m.node("Mul", {p + "m", "half"}, {p + "y"}, p + "mulhalf");
  return p + "y";
}

void gelu_constants(ModelBuilder& m) {
  m.initializer("sqrt2", {}, {1.4142135623730951f}).initializer("one", {}, {1.f}).initializer("half", {}, {0.5f});
}

TEST(CpuFusion, MatMulBiasGeluResidual) {
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {2, 5, 16}).input("r", onnx::TensorProto::FLOAT, {2, 5, 24});
  m.output("y", onnx::TensorProto::FLOAT, {2, 5, 24});
  m.initializer("w", {16, 24}, weights(16 * 24, 11)).initializer("b", {24}, weights(24, 12));
  gelu_constants(m);
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Add", {"b", "mm"}, {"biased"}, "bias");
  const std::string g = gelu_torch(m, "biased", "g");
  m.node("Add", {g, "r"}, {"y"}, "residual");
  check_fused(m, {{"x", {2, 5, 16}}, {"r", {2, 5, 24}}}, {"y"}, {"MatMul+Add+Div+Erf+Add+Mul+Mul+Add"});
}

TEST(CpuFusion, MatMulGeluHalfFirst) {
  // HF BERT's order: (x * 0.5) * (1 + erf(x / sqrt 2)).
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {7, 32}).output("y", onnx::TensorProto::FLOAT, {7, 40});
  m.initializer("w", {32, 40}, weights(32 * 40, 21)).initializer("b", {40}, weights(40, 22));
  gelu_constants(m);
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "b"}, {"h"}, "bias");
  m.node("Mul", {"h", "half"}, {"hh"}, "half");
  m.node("Div", {"h", "sqrt2"}, {"d"}, "div");
  m.node("Erf", {"d"}, {"e"}, "erf");
  m.node("Add", {"e", "one"}, {"a"}, "add1");
  m.node("Mul", {"hh", "a"}, {"y"}, "mul");
  check_fused(m, {{"x", {7, 32}}}, {"y"}, {"MatMul+Add+Mul+Div+Erf+Add+Mul"});
}

TEST(CpuFusion, GemmTransBAlphaBetaRelu) {
  ModelBuilder m(13);
  m.input("a", onnx::TensorProto::FLOAT, {9, 12}).output("y", onnx::TensorProto::FLOAT, {9, 10});
  m.initializer("w", {10, 12}, weights(120, 31)).initializer("c", {10}, weights(10, 32));
  auto& gemm = m.node("Gemm", {"a", "w", "c"}, {"g"}, "gemm");
  attr_int(gemm, "transB", 1);
  attr_float(gemm, "alpha", 0.5f);
  attr_float(gemm, "beta", 2.f);
  m.node("Relu", {"g"}, {"y"}, "relu");
  check_fused(m, {{"a", {9, 12}}}, {"y"}, {"Gemm+Relu"});
}

TEST(CpuFusion, MatMulResidualThatBroadcasts) {
  // The residual [5, 24] broadcasts over [2, 5, 24]: added after the primitive, not as a post-op.
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {2, 5, 16}).input("r", onnx::TensorProto::FLOAT, {5, 24});
  m.output("y", onnx::TensorProto::FLOAT, {2, 5, 24});
  m.initializer("w", {16, 24}, weights(16 * 24, 41)).initializer("b", {1, 24}, weights(24, 42));
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "b"}, {"biased"}, "bias");
  m.node("Add", {"r", "biased"}, {"s"}, "residual");
  m.node("Relu", {"s"}, {"y"}, "relu");
  check_fused(m, {{"x", {2, 5, 16}}, {"r", {5, 24}}}, {"y"}, {"MatMul+Add+Add+Relu"});
}

TEST(CpuFusion, MatMulSiluAndDecomposedHardSwish) {
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {6, 8}).output("y1", onnx::TensorProto::FLOAT, {6, 16});
  m.output("y2", onnx::TensorProto::FLOAT, {6, 16});
  m.initializer("w1", {8, 16}, weights(128, 51)).initializer("w2", {8, 16}, weights(128, 52));
  m.initializer("three", {}, {3.f}).initializer("zero", {}, {0.f}).initializer("six", {}, {6.f});
  m.node("MatMul", {"x", "w1"}, {"a"}, "mm1");
  m.node("Sigmoid", {"a"}, {"s"}, "sigmoid");
  m.node("Mul", {"a", "s"}, {"y1"}, "silu");
  m.node("MatMul", {"x", "w2"}, {"b"}, "mm2");
  m.node("Add", {"b", "three"}, {"b3"}, "add3");
  m.node("Clip", {"b3", "zero", "six"}, {"c"}, "clip");
  m.node("Mul", {"b", "c"}, {"bc"}, "mul");
  m.node("Div", {"bc", "six"}, {"y2"}, "div6");
  check_fused(m, {{"x", {6, 8}}}, {"y1", "y2"}, {"MatMul+Sigmoid+Mul", "MatMul+Add+Clip+Mul+Div"});
}

TEST(CpuFusion, MatMulDynamicRowsAtTwoShapes) {
  // Symbolic batch and sequence: one fused group, plans per row count.
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {-1, -1, 24}).output("y", onnx::TensorProto::FLOAT, {-1, -1, 8});
  m.initializer("w", {24, 8}, weights(24 * 8, 61)).initializer("b", {8}, weights(8, 62));
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "b"}, {"t"}, "bias");
  m.node("Tanh", {"t"}, {"y"}, "tanh");
  check_fused(m, {{"x", {3, 4, 24}}}, {"y"}, {"MatMul+Add+Tanh"});
  check_fused(m, {{"x", {1, 9, 24}}}, {"y"}, {"MatMul+Add+Tanh"}, 1e-4, 7);
}

// The decomposed LayerNorm exporters write before opset 17 (x also feeds a residual Add).
void layer_norm_model(ModelBuilder& m, bool affine) {
  m.input("x", onnx::TensorProto::FLOAT, {3, 7, 48}).output("y", onnx::TensorProto::FLOAT, {3, 7, 48});
  m.output("z", onnx::TensorProto::FLOAT, {3, 7, 48});
  m.initializer("two", {}, {2.f}).initializer("eps", {}, {1e-5f});
  attr_ints(m.node("ReduceMean", {"x"}, {"mean"}, "rm1"), "axes", {-1});
  m.node("Sub", {"x", "mean"}, {"d"}, "sub");
  m.node("Pow", {"d", "two"}, {"sq"}, "pow");
  attr_ints(m.node("ReduceMean", {"sq"}, {"var"}, "rm2"), "axes", {-1});
  m.node("Add", {"var", "eps"}, {"ve"}, "addeps");
  m.node("Sqrt", {"ve"}, {"sd"}, "sqrt");
  m.node("Div", {"d", "sd"}, {affine ? "n" : "y"}, "div");
  if (affine) {
    m.initializer("gamma", {48}, random_values(48, 71, 0.5f, 1.5f)).initializer("beta", {48}, weights(48, 72));
    m.node("Mul", {"n", "gamma"}, {"g"}, "gamma");
    m.node("Add", {"g", "beta"}, {"y"}, "beta");
  }
  m.node("Add", {"x", "y"}, {"z"}, "residual");
}

TEST(CpuFusion, DecomposedLayerNorm) {
  ModelBuilder m(13);
  layer_norm_model(m, true);
  check_fused(m, {{"x", {3, 7, 48}}}, {"y", "z"}, {"ReduceMean+Sub+Pow+ReduceMean+Add+Sqrt+Div+Mul+Add"});
}

TEST(CpuFusion, DecomposedLayerNormWithoutAffine) {
  ModelBuilder m(13);
  layer_norm_model(m, false);
  check_fused(m, {{"x", {3, 7, 48}}}, {"y", "z"}, {"ReduceMean+Sub+Pow+ReduceMean+Add+Sqrt+Div"});
}

TEST(CpuFusion, StandaloneGelu) {
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {4, 1000}).output("y", onnx::TensorProto::FLOAT, {4, 1000});
  gelu_constants(m);
  m.node("Relu", {"x"}, {"r"}, "relu");  // a producer that is not a MatMul
  m.node("Neg", {"r"}, {"n"}, "neg");
  const std::string g = gelu_torch(m, "n", "g");
  m.node("Identity", {g}, {"y"}, "id");
  check_fused(m, {{"x", {4, 1000}}}, {"y"}, {"Div+Erf+Add+Mul+Mul"}, 1e-5);
}

}  // namespace

// ---- convolutional regions (fusion/cnn_region.h) ------------------------------------------------------

namespace {

// Conv node `name` over `x` with C_in -> C_out channels, k x k, constant weights and bias.
std::string conv(ModelBuilder& m, const std::string& x, const std::string& name, int64_t cin, int64_t cout, int64_t k,
                 int64_t stride = 1, int64_t group = 1, uint32_t seed = 100) {
  m.initializer(name + "_w", {cout, cin / group, k, k}, weights(static_cast<size_t>(cout * cin / group * k * k), seed,
                                                                 0.5f / std::sqrt(static_cast<float>(cin / group * k * k))));
  m.initializer(name + "_b", {cout}, weights(static_cast<size_t>(cout), seed + 1, 0.1f));
  auto& n = m.node("Conv", {x, name + "_w", name + "_b"}, {name}, name);
  attr_ints(n, "kernel_shape", {k, k});
  attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  attr_ints(n, "strides", {stride, stride});
  if (group > 1) attr_int(n, "group", group);
  return name;
}

std::string batch_norm(ModelBuilder& m, const std::string& x, const std::string& name, int64_t c, uint32_t seed) {
  m.initializer(name + "_s", {c}, random_values(static_cast<size_t>(c), seed, 0.5f, 1.5f));
  m.initializer(name + "_b", {c}, weights(static_cast<size_t>(c), seed + 1));
  m.initializer(name + "_m", {c}, weights(static_cast<size_t>(c), seed + 2));
  m.initializer(name + "_v", {c}, random_values(static_cast<size_t>(c), seed + 3, 0.5f, 2.f));
  m.node("BatchNormalization", {x, name + "_s", name + "_b", name + "_m", name + "_v"}, {name}, name);
  return name;
}

bool has_group_containing(const Ephost::Session& s, const std::string& ops) {
  for (const std::string& g : fused_groups(s))
    if (g.find(ops) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(CpuRegion, ResidualBlockWithBatchNorm) {
  // ResNet's basic block (the host folds the BatchNormalizations that follow convolutions), then a
  // BatchNormalization after the residual Add, which stays a per-channel step in the region; and an
  // Add of two convolutions, whose residual must be the one computed first.
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 16, 12, 12}).output("y", onnx::TensorProto::FLOAT, {1, 16, 12, 12});
  m.output("y2", onnx::TensorProto::FLOAT, {1, 16, 12, 12});
  std::string a = conv(m, "x", "c1", 16, 16, 3, 1, 1, 200);
  a = batch_norm(m, a, "bn1", 16, 210);
  m.node("Relu", {a}, {"r1"}, "relu1");
  std::string b = conv(m, "r1", "c2", 16, 16, 3, 1, 1, 220);
  b = batch_norm(m, b, "bn2", 16, 230);
  m.node("Add", {b, "x"}, {"s"}, "residual");
  const std::string n = batch_norm(m, "s", "bn3", 16, 240);
  m.node("Relu", {n}, {"y"}, "relu2");
  const std::string p = conv(m, "x", "c3", 16, 16, 1, 1, 1, 250);
  const std::string q = conv(m, "r1", "c4", 16, 16, 3, 1, 1, 260);
  m.node("Add", {p, q}, {"y2"}, "two_convs");
  check_fused(m, {{"x", {1, 16, 12, 12}}}, {"y", "y2"}, {"Conv+Relu+Conv+Add+BatchNormalization+Relu+Conv+Conv+Add"});
}

TEST(CpuRegion, WinogradConvolutionsMatchDirect) {
  // 3x3 stride-1 convolutions with 16+ channels run as oneDNN's Winograd in regions (cpu option
  // winograd, default 1): with and without ReLU, with channel counts that are not multiples of 16, an
  // odd spatial size and batch 2; next to ones that stay direct (a residual post-op, SiLU, stride 2).
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 24, 13, 11}).output("y", onnx::TensorProto::FLOAT, {2, 24, 13, 11});
  m.output("z", onnx::TensorProto::FLOAT, {2, 16, 7, 6});
  std::string a = conv(m, "x", "w1", 24, 40, 3, 1, 1, 300);
  a = batch_norm(m, a, "wbn1", 40, 310);
  m.node("Relu", {a}, {"wr1"}, "wrelu1");
  const std::string b = conv(m, "wr1", "w2", 40, 48, 3, 1, 1, 320);  // no activation
  m.node("Sigmoid", {b}, {"ws"}, "wsig");
  m.node("Mul", {b, "ws"}, {"wsilu"}, "wsilu");
  const std::string c = conv(m, "wsilu", "w3", 48, 24, 3, 1, 1, 330);  // residual post-op: direct
  m.node("Add", {c, "x"}, {"wsum"}, "wresidual");
  const std::string d = conv(m, "wsum", "w4", 24, 24, 3, 1, 1, 340);
  m.node("Relu", {d}, {"y"}, "wrelu2");
  const std::string e = conv(m, "x", "w5", 24, 16, 3, 2, 1, 350);  // stride 2: direct
  m.node("Relu", {e}, {"z"}, "wrelu3");
  check_fused(m, {{"x", {2, 24, 13, 11}}}, {"y", "z"},
              {"Conv+Relu+Conv+Sigmoid+Mul+Conv+Add+Conv+Relu", "Conv+Relu"});

  // The same region with winograd=0: close to the Winograd run, but not bit for bit (so the Winograd
  // kernels did run above).
  const std::string bytes = m.bytes();
  auto session = [&](const char* wino) {
    Ephost::SessionOptions o;
    o.set_threads(1);
    o.append_provider("cpu", {{"winograd", wino}});
    return Ephost::Session(cpu_env(), bytes.data(), bytes.size(), o);
  };
  Ephost::Session with = session("1"), without = session("0");
  std::vector<Feed> feeds{{"x", {2, 24, 13, 11}}};
  std::vector<std::vector<float>> data{random_values(static_cast<size_t>(count(feeds[0].shape)), 7)};
  const auto got = run(with, feeds, data, {"y", "z"});
  const auto want = run(without, feeds, data, {"y", "z"});
  double worst = 0;
  size_t differ = 0;
  for (size_t i = 0; i < got[0].size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[0][i]) - want[0][i]) / (1.0 + std::abs(want[0][i])));
    differ += got[0][i] != want[0][i];
  }
  EXPECT_LE(worst, 1e-5);
#if defined(__x86_64__) && defined(__GNUC__)
  // oneDNN 2.6's f32 Winograd needs AVX-512; elsewhere, and under an EPHOST_CPU_ISA cap below it (which
  // caps oneDNN too), every convolution stays direct.
  const char* cap = std::getenv("EPHOST_CPU_ISA");
  const bool capped = cap != nullptr && *cap != '\0' && std::string(cap) != "avx512";
  if (!capped && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    EXPECT_GT(differ, 0u) << "winograd=1 and winograd=0 agree bit for bit: no Winograd step ran";
  }
#endif
  EXPECT_EQ(got[1], want[1]) << "z comes from a stride-2 convolution alone (direct either way)";
}

TEST(CpuRegion, GlobalAveragePoolOverChannelChunks) {
  // GlobalAveragePool in a region sums whole NHWC rows in chunks of 256 channels: 300 channels (two
  // chunks, the second partial), batch 2, and a 1x1 image (one row).
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 8, 5, 3}).output("y", onnx::TensorProto::FLOAT, {2, 300, 1, 1});
  m.input("x1", onnx::TensorProto::FLOAT, {2, 8, 1, 1}).output("y1", onnx::TensorProto::FLOAT, {2, 300, 1, 1});
  const std::string a = conv(m, "x", "g1", 8, 300, 1, 1, 1, 400);
  m.node("GlobalAveragePool", {a}, {"y"}, "gap");
  const std::string b = conv(m, "x1", "g2", 8, 300, 1, 1, 1, 410);
  m.node("GlobalAveragePool", {b}, {"y1"}, "gap1");
  check_fused(m, {{"x", {2, 8, 5, 3}}, {"x1", {2, 8, 1, 1}}}, {"y", "y1"}, {});
  ModelBuilder m2(13);
  m2.input("x", onnx::TensorProto::FLOAT, {2, 8, 5, 3}).output("y", onnx::TensorProto::FLOAT, {2, 300, 1, 1});
  m2.node("GlobalAveragePool", {conv(m2, "x", "g1", 8, 300, 1, 1, 1, 400)}, {"y"}, "gap");
  check_fused(m2, {{"x", {2, 8, 5, 3}}}, {"y"}, {"Conv+GlobalAveragePool"});
}

TEST(CpuRegion, SqueezeExciteWithHardSwish) {
  ModelBuilder m(14);
  m.input("x", onnx::TensorProto::FLOAT, {2, 8, 10, 10}).output("y", onnx::TensorProto::FLOAT, {2, 24, 10, 10});
  const std::string c = conv(m, "x", "c1", 8, 24, 3, 1, 1, 300);
  m.node("HardSwish", {c}, {"h"}, "hswish");
  m.node("GlobalAveragePool", {"h"}, {"g"}, "gap");
  const std::string f1 = conv(m, "g", "fc1", 24, 8, 1, 1, 1, 310);
  m.node("Relu", {f1}, {"fr"}, "fc_relu");
  const std::string f2 = conv(m, "fr", "fc2", 8, 24, 1, 1, 1, 320);
  auto& hs = m.node("HardSigmoid", {f2}, {"scale"}, "hsig");
  attr_float(hs, "alpha", 1.f / 6.f);
  m.node("Mul", {"h", "scale"}, {"y"}, "excite");
  check_fused(m, {{"x", {2, 8, 10, 10}}}, {"y"}, {"Conv+HardSwish+GlobalAveragePool+Conv+Relu+Conv+HardSigmoid+Mul"});
}

TEST(CpuRegion, PaddleAffineAndDecomposedHardSwish) {
  // PP-OCRv4's pattern: conv, scalar affine, x * Clip(x + 3, 0, 6) / 6, scalar affine; and a
  // depthwise convolution after it.
  ModelBuilder m(11);
  m.input("x", onnx::TensorProto::FLOAT, {1, 4, 9, 11}).output("y", onnx::TensorProto::FLOAT, {1, 12, 9, 11});
  m.initializer("s1", {1}, {1.25f}).initializer("b1", {1}, {-0.3f}).initializer("three", {}, {3.f});
  m.initializer("zero", {}, {0.f}).initializer("six", {}, {6.f}).initializer("s2", {1}, {0.8f});
  m.initializer("b2", {1}, {0.05f});
  const std::string c = conv(m, "x", "c1", 4, 12, 3, 1, 1, 400);
  m.node("Mul", {c, "s1"}, {"a1"}, "lab_mul1");
  m.node("Add", {"a1", "b1"}, {"a2"}, "lab_add1");
  m.node("Add", {"a2", "three"}, {"h1"}, "hs_add");
  m.node("Clip", {"h1", "zero", "six"}, {"h2"}, "hs_clip");
  m.node("Mul", {"a2", "h2"}, {"h3"}, "hs_mul");
  m.node("Div", {"h3", "six"}, {"h4"}, "hs_div");
  m.node("Mul", {"h4", "s2"}, {"a3"}, "lab_mul2");
  m.node("Add", {"a3", "b2"}, {"a4"}, "lab_add2");
  const std::string d = conv(m, "a4", "dw", 12, 12, 3, 1, 12, 410);
  m.node("Relu", {d}, {"y"}, "relu");
  check_fused(m, {{"x", {1, 4, 9, 11}}}, {"y"},
              {"Conv+Mul+Add+Add+Clip+Mul+Div+Mul+Add+Conv+Relu"});
}

TEST(CpuRegion, SiluPoolsConcatResizeAndTransposedConv) {
  // EfficientNet's SiLU, a strided depthwise conv, max and average pools, channel concat, nearest
  // upsampling and a 2x2/2 transposed convolution with a sigmoid, at two input sizes.
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 6, -1, -1}).output("y", onnx::TensorProto::FLOAT, {1, 4, -1, -1});
  m.output("side", onnx::TensorProto::FLOAT, {1, 16, -1, -1});
  const std::string c = conv(m, "x", "c1", 6, 16, 3, 1, 1, 500);
  m.node("Sigmoid", {c}, {"sg"}, "sig");
  m.node("Mul", {c, "sg"}, {"side"}, "silu");  // also a graph output
  const std::string dw = conv(m, "side", "dw", 16, 16, 3, 2, 16, 510);
  auto& mp = m.node("MaxPool", {"side"}, {"mp"}, "maxpool");
  attr_ints(mp, "kernel_shape", {2, 2});
  attr_ints(mp, "strides", {2, 2});
  auto& ap = m.node("AveragePool", {"side"}, {"ap"}, "avgpool");
  attr_ints(ap, "kernel_shape", {3, 3});
  attr_ints(ap, "strides", {2, 2});
  attr_ints(ap, "pads", {1, 1, 1, 1});
  m.node("Concat", {dw, "mp", "ap"}, {"cat"}, "concat");
  attr_int(m.proto().mutable_graph()->mutable_node(m.proto().graph().node_size() - 1)[0], "axis", 1);
  m.initializer("roi", {0}, {}).initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto& rs = m.node("Resize", {"cat", "roi", "scales"}, {"up"}, "resize");
  auto* mode = rs.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("nearest");
  const std::string r = conv(m, "up", "c2", 48, 8, 1, 1, 1, 520);
  m.initializer("tw", {8, 4, 2, 2}, weights(128, 530)).initializer("tb", {4}, weights(4, 531));
  auto& ct = m.node("ConvTranspose", {r, "tw", "tb"}, {"t"}, "deconv");
  attr_ints(ct, "kernel_shape", {2, 2});
  attr_ints(ct, "strides", {2, 2});
  auto& mp2 = m.node("MaxPool", {"t"}, {"t2"}, "down");
  attr_ints(mp2, "kernel_shape", {2, 2});
  attr_ints(mp2, "strides", {2, 2});
  m.node("Sigmoid", {"t2"}, {"y"}, "out_sigmoid");
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 6, 16, 20}, std::vector<int64_t>{1, 6, 8, 12}})
    check_fused(m, {{"x", shape}}, {"y", "side"}, {}, 1e-4, static_cast<uint32_t>(shape[2]));
  const std::string bytes = m.bytes();
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size());
  EXPECT_TRUE(has_group_containing(s, "Conv+Sigmoid+Mul+Conv+MaxPool+AveragePool+Concat+Resize+Conv+ConvTranspose"))
      << [&] {
           std::string t;
           for (const auto& g : fused_groups(s)) t += "[" + g + "] ";
           return t;
         }();
}

TEST(CpuRegion, PerChannelConstantsAndIntermediateOutputs) {
  // Mul/Add by [1, C, 1, 1] constants fold into the conv; an Add of a [C, 1, 1] constant after a
  // ReLU stays a per-channel step; a value used outside the region is handed out.
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 3, 7, 7}).output("y", onnx::TensorProto::FLOAT, {1, 8, 7, 7});
  m.output("mid", onnx::TensorProto::FLOAT, {1, 8, 7, 7});
  m.initializer("k", {1, 8, 1, 1}, random_values(8, 600, 0.5f, 2.f)).initializer("t", {1, 8, 1, 1}, weights(8, 601));
  m.initializer("u", {8, 1, 1}, weights(8, 602)).initializer("w7", {7}, weights(7, 603));
  const std::string c = conv(m, "x", "c1", 3, 8, 3, 1, 1, 610);
  m.node("Mul", {c, "k"}, {"m1"}, "scale");
  m.node("Add", {"t", "m1"}, {"m2"}, "shift");
  m.node("Relu", {"m2"}, {"mid"}, "relu");
  m.node("Add", {"mid", "u"}, {"m3"}, "chan_add");
  m.node("Mul", {"m3", "w7"}, {"m4"}, "row_mul");  // [7] broadcasts along W
  const std::string c2 = conv(m, "m4", "c2", 8, 8, 1, 1, 1, 620);
  m.node("Sub", {c2, "mid"}, {"y"}, "sub");
  check_fused(m, {{"x", {1, 3, 7, 7}}}, {"y", "mid"}, {"Conv+Mul+Add+Relu+Add+Mul+Conv+Sub"});
}

// ---- constants: the host folds them, in subgraphs too (host/transform/constant_folding.cpp) -------------

TEST(CpuConstants, SubgraphFoldsSlicedOuterWeightsIntoLstmAndMatMul) {
  // An If whose then-branch rebuilds LSTM weights from the enclosing graph's initializers with
  // Constant/Slice/Concat/Unsqueeze (as PyTorch exports an LSTM inside scripted control flow), and
  // whose else-branch multiplies by a transposed outer initializer.
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {3, 1, 4}).input("s", onnx::TensorProto::FLOAT, {1});
  m.output("y", onnx::TensorProto::FLOAT, {1, 1, 5});
  m.initializer("w_all", {20, 4}, weights(80, 701)).initializer("r_all", {20, 5}, weights(100, 702));
  m.initializer("b_all", {40}, weights(40, 703)).initializer("m_all", {5, 12}, weights(60, 704));
  m.initializer("zero", {}, {0.f});
  m.node("Greater", {"s", "zero"}, {"g"}, "greater");
  m.node("Squeeze", {"g"}, {"cond"}, "squeeze");

  onnx::GraphProto then_g;
  then_g.set_name("then");
  auto add = [](onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& in,
                const std::vector<std::string>& out) -> onnx::NodeProto& {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(out[0]);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return *n;
  };
  auto constant = [&](onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& v) {
    auto& n = add(g, "Constant", {}, {name});
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  };
  constant(then_g, "s0", {0});
  constant(then_g, "s10", {10});
  constant(then_g, "s20", {20});
  constant(then_g, "ax0", {0});
  add(then_g, "Slice", {"w_all", "s0", "s10", "ax0"}, {"w_a"});
  add(then_g, "Slice", {"w_all", "s10", "s20", "ax0"}, {"w_b"});
  attr_int(add(then_g, "Concat", {"w_b", "w_a"}, {"w_cat"}), "axis", 0);
  add(then_g, "Unsqueeze", {"w_cat", "ax0"}, {"W"});
  add(then_g, "Unsqueeze", {"r_all", "ax0"}, {"R"});
  add(then_g, "Unsqueeze", {"b_all", "ax0"}, {"B"});
  attr_int(add(then_g, "LSTM", {"x", "W", "R", "B"}, {"", "then_y"}), "hidden_size", 5);
  ModelBuilder::set_type(then_g.add_output(), "then_y", onnx::TensorProto::FLOAT, {1, 1, 5});

  onnx::GraphProto else_g;
  else_g.set_name("else");
  add(else_g, "Transpose", {"m_all"}, {"mt"});
  add(else_g, "Reshape", {"x", "shape12"}, {"x12"});
  add(else_g, "MatMul", {"x12", "mt"}, {"mm"});
  add(else_g, "Relu", {"mm"}, {"rm"});
  add(else_g, "Reshape", {"rm", "shape115"}, {"else_y"});
  m.initializer("shape12", {2}, {}).initializer("shape115", {3}, {});
  for (auto& t : *m.proto().mutable_graph()->mutable_initializer()) {
    if (t.name() == "shape12" || t.name() == "shape115") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.clear_float_data();
      for (int64_t v : t.name() == "shape12" ? std::vector<int64_t>{1, 12} : std::vector<int64_t>{1, 1, 5})
        t.add_int64_data(v);
    }
  }
  ModelBuilder::set_type(else_g.add_output(), "else_y", onnx::TensorProto::FLOAT, {1, 1, 5});

  auto& iff = m.node("If", {"cond"}, {"y"}, "if");
  for (auto [name, g] : {std::make_pair("then_branch", &then_g), std::make_pair("else_branch", &else_g)}) {
    auto* a = iff.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  // The host's constant folding reaches into the branches (host/transform/constant_folding.cpp): the
  // plugin gets the LSTM's and the MatMul's weights as the branches' initializers, and nothing of the
  // chains is left to run.
  for (float sign : {1.f, -1.f}) check_fused(m, {{"x", {3, 1, 4}}, {"s", {1}, {sign}}}, {"y"}, {"MatMul+Relu"});
  // With the host's optimizations off (level 0, as ONNX Runtime's ORT_DISABLE_ALL) nothing folds: the
  // chains run as ordinary nodes on every call, with the same results; the plugin folds nothing itself.
  for (float sign : {1.f, -1.f})
    check_fused(m, {{"x", {3, 1, 4}}, {"s", {1}, {sign}}}, {"y"}, {}, 1e-4, 1, /*host_optimizations=*/false);
  const std::string bytes = m.bytes();
  Ephost::SessionOptions level0;
  level0.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), level0);
  EXPECT_FALSE(has_group_containing(s, "Slice"));
  EXPECT_FALSE(has_group_containing(s, "Transpose"));
}

namespace {

void int8_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<int8_t>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : dims) t->add_dims(d);
  for (int8_t v : values) t->add_int32_data(v);
}

// The nodes of the main graph that run in no step (their outputs precomputed), from the report.
std::vector<std::string> precomputed_nodes(const Ephost::Session& s) {
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  return report.at("graphs").at(0).at("precomputed").get<std::vector<std::string>>();
}

}  // namespace

// A QDQ model's dequantized weight that no int8 pattern takes (the MatMul's output is not quantized
// again): the host computes it once and the MatMul reads a constant (packed once, fused with its Relu);
// the DequantizeLinear runs in no step. Level 0 runs it on every call, with the same results.
TEST(CpuConstants, UnfusedDequantizedWeightIsComputedOnce) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 4}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  std::vector<int8_t> q(12);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  int8_initializer(m, "wq", {4, 3}, q);
  m.initializer("ws", {}, {0.02f});
  m.node("DequantizeLinear", {"wq", "ws"}, {"w"}, "dq_weight");
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Relu", {"mm"}, {"y"}, "relu");
  check_fused(m, {{"x", {2, 4}}}, {"y"}, {"MatMul+Relu"});
  check_fused(m, {{"x", {2, 4}}}, {"y"}, {}, 1e-4, 1, /*host_optimizations=*/false);
  const std::string bytes = m.bytes();
  Ephost::Session folded(cpu_env(), bytes.data(), bytes.size());
  EXPECT_EQ(precomputed_nodes(folded), std::vector<std::string>{"dq_weight"});
  Ephost::SessionOptions level0;
  level0.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
  Ephost::Session unfolded(cpu_env(), bytes.data(), bytes.size(), level0);
  EXPECT_TRUE(precomputed_nodes(unfolded).empty());
}

// ---- attention (fusion/attention_fusion.cpp) ----------------------------------------------------------

namespace {

void int64_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

}  // namespace

TEST(CpuAttention, BertHeadsWithRuntimeReshapeAndMask) {
  // HF BERT's self-attention: heads split by Reshape(B, S, H, d) with the target computed from
  // Shape at run time, Transposes (K's to [B, H, d, S]), scores / sqrt(d) + mask, Softmax, product
  // with V, Transpose and Reshape back to [B, S, D]; symbolic batch and sequence.
  const int64_t H = 4, d = 8, D = H * d;
  ModelBuilder m(13);
  m.input("q", onnx::TensorProto::FLOAT, {-1, -1, D}).input("k", onnx::TensorProto::FLOAT, {-1, -1, D});
  m.input("v", onnx::TensorProto::FLOAT, {-1, -1, D}).input("mask", onnx::TensorProto::FLOAT, {-1, 1, 1, -1});
  m.output("y", onnx::TensorProto::FLOAT, {-1, -1, D});
  int64_initializer(m, "heads", {H, d});
  int64_initializer(m, "dmodel", {D});
  int64_initializer(m, "first2", {0});
  int64_initializer(m, "two", {2});
  m.initializer("sqrt_d", {}, {std::sqrt(static_cast<float>(d))});
  m.node("Shape", {"q"}, {"qs"}, "shape");
  m.node("Slice", {"qs", "first2", "two"}, {"bs"}, "batch_seq");
  attr_int(m.node("Concat", {"bs", "heads"}, {"split"}, "split_shape"), "axis", 0);
  attr_int(m.node("Concat", {"bs", "dmodel"}, {"merge"}, "merge_shape"), "axis", 0);
  for (const std::string x : {"q", "k", "v"}) {
    m.node("Reshape", {x, "split"}, {x + "4"}, x + "_reshape");
    attr_ints(m.node("Transpose", {x + "4"}, {x + "t"}, x + "_transpose"), "perm",
              x == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  m.node("MatMul", {"qt", "kt"}, {"scores"}, "qk");
  m.node("Div", {"scores", "sqrt_d"}, {"scaled"}, "scale");
  m.node("Add", {"scaled", "mask"}, {"masked"}, "mask_add");
  attr_int(m.node("Softmax", {"masked"}, {"p"}, "softmax"), "axis", -1);
  m.node("MatMul", {"p", "vt"}, {"ctx"}, "pv");
  attr_ints(m.node("Transpose", {"ctx"}, {"ctx_t"}, "merge_transpose"), "perm", {0, 2, 1, 3});
  m.node("Reshape", {"ctx_t", "merge"}, {"y"}, "merge_reshape");
  std::vector<float> mask(2 * 7, 0.f);
  mask[5] = mask[6] = mask[13] = -10000.f;  // padding
  check_fused(m, {{"q", {2, 7, D}}, {"k", {2, 7, D}}, {"v", {2, 7, D}}, {"mask", {2, 1, 1, 7}, mask}}, {"y"},
              {"Reshape+Transpose+Reshape+Transpose+Reshape+Transpose+MatMul+Div+Add+Softmax+MatMul+Transpose+Reshape"});
}

TEST(CpuAttention, VitPackedQkvWithSlicesAndScaledQuery) {
  // torch's nn.MultiheadAttention export (ViT): one packed [L, N, 3D] projection sliced into Q, K, V,
  // heads as Reshape(L, N*H, d) -> Transpose(1, 0, 2) (K: (1, 2, 0)), Q divided by sqrt(d) before the
  // product, no mask; the result goes back through Transpose(1, 0, 2) -> Reshape(L, D).
  const int64_t L = 9, H = 3, d = 4, D = H * d;
  ModelBuilder m(13);
  m.input("qkv", onnx::TensorProto::FLOAT, {L, 1, 3 * D}).output("y", onnx::TensorProto::FLOAT, {L, D});
  int64_initializer(m, "axis2", {2});
  int64_initializer(m, "heads", {L, H, d});
  int64_initializer(m, "merge", {L, D});
  for (int i = 0; i < 3; ++i) {
    int64_initializer(m, "s" + std::to_string(i), {i * D});
    int64_initializer(m, "e" + std::to_string(i), {(i + 1) * D});
  }
  m.initializer("sqrt_d", {}, {2.f});
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string x = names[i];
    m.node("Slice", {"qkv", "s" + std::to_string(i), "e" + std::to_string(i), "axis2"}, {x + "s"}, x + "_slice");
    m.node("Reshape", {x + "s", "heads"}, {x + "r"}, x + "_reshape");
    attr_ints(m.node("Transpose", {x + "r"}, {x + "t"}, x + "_transpose"), "perm",
              x == "k" ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{1, 0, 2});
  }
  m.node("Div", {"qt", "sqrt_d"}, {"qd"}, "q_scale");
  m.node("MatMul", {"qd", "kt"}, {"scores"}, "qk");
  attr_int(m.node("Softmax", {"scores"}, {"p"}, "softmax"), "axis", -1);
  m.node("MatMul", {"p", "vt"}, {"ctx"}, "pv");
  attr_ints(m.node("Transpose", {"ctx"}, {"ctx_t"}, "merge_transpose"), "perm", {1, 0, 2});
  m.node("Reshape", {"ctx_t", "merge"}, {"y"}, "merge_reshape");
  check_fused(m, {{"qkv", {L, 1, 3 * D}}}, {"y"},
              {"Slice+Reshape+Transpose+Slice+Reshape+Transpose+Slice+Reshape+Transpose+Div+MatMul+Softmax+MatMul+"
               "Transpose+Reshape"});
}

TEST(CpuAttention, InnerValuesThatAreGraphOutputsStopTheMatchWithoutMisusingTheHost) {
  // The scores and the Softmax's input are graph outputs too, so they have no sole reader: the matcher must
  // not ask an absent node for its id (the host logs "misused node_id" for that; ViT with every value
  // requested did). Nothing fuses across them, and the results still match the unfused run.
  const int64_t S = 5, d = 4;
  ModelBuilder m(13);
  m.input("q", onnx::TensorProto::FLOAT, {S, d}).input("kt", onnx::TensorProto::FLOAT, {d, S});
  m.input("v", onnx::TensorProto::FLOAT, {S, d});
  m.output("y", onnx::TensorProto::FLOAT, {S, d}).output("scores", onnx::TensorProto::FLOAT, {S, S});
  m.output("scaled", onnx::TensorProto::FLOAT, {S, S});
  m.initializer("sqrt_d", {}, {2.f});
  m.node("MatMul", {"q", "kt"}, {"scores"}, "qk");
  m.node("Div", {"scores", "sqrt_d"}, {"scaled"}, "scale");
  attr_int(m.node("Softmax", {"scaled"}, {"p"}, "softmax"), "axis", -1);
  m.node("MatMul", {"p", "v"}, {"y"}, "pv");
  testing::internal::CaptureStderr();
  check_fused(m, {{"q", {S, d}}, {"kt", {d, S}}, {"v", {S, d}}}, {"y", "scores", "scaled"}, {});
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("misused"), std::string::npos) << log;
}

TEST(CpuRecurrent, BidirectionalGruAndLstmOnTwoThreadsMatchOneThread) {
  // At two threads the two directions run side by side, each with the small-batch step product.
  for (const std::string op : {"GRU", "LSTM"}) {
    const int64_t T = 6, B = 2, I = 5, H = 7, G = op == "GRU" ? 3 : 4;
    ModelBuilder m(14);
    m.input("x", onnx::TensorProto::FLOAT, {T, B, I}).output("y", onnx::TensorProto::FLOAT, {T, 2, B, H});
    m.output("yh", onnx::TensorProto::FLOAT, {2, B, H});
    m.initializer("W", {2, G * H, I}, weights(static_cast<size_t>(2 * G * H * I), 801));
    m.initializer("R", {2, G * H, H}, weights(static_cast<size_t>(2 * G * H * H), 802));
    m.initializer("B", {2, 2 * G * H}, weights(static_cast<size_t>(4 * G * H), 803));
    auto& n = m.node(op, {"x", "W", "R", "B"}, {"y", "yh"}, "rnn");
    attr_int(n, "hidden_size", H);
    auto* dir = n.add_attribute();
    dir->set_name("direction");
    dir->set_type(onnx::AttributeProto::STRING);
    dir->set_s("bidirectional");
    check_fused(m, {{"x", {T, B, I}}}, {"y", "yh"}, {}, 1e-5);
  }
}
