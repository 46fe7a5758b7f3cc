// The CPU plugin's fused block-quantized int4 product (plugins/cpu/fusion/q4_matmul.cpp): DequantizeLinear-21
// of int4 / uint4 weights with block_size (or per column, per tensor) feeding MatMul or Gemm runs as one
// group that dequantizes on the fly. Each model runs fused (the default) and with fuse_patterns=0, where
// DequantizeLinear materialises the float weights and MatMul runs on its own, on the same random inputs;
// the outputs must agree to float rounding of the sum, and the fused session must hold the group (so that
// a pattern that silently stops matching fails here). Runs on every ISA tier (cpu_plugin_tests_*).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
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

// A packed 4-bit initializer of random codes (two per byte, the first in the low nibble).
void packed_initializer(ModelBuilder& m, const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                        uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::string bytes(static_cast<size_t>((count + 1) / 2), '\0');
  for (char& b : bytes) b = static_cast<char>(d(gen));
  if (count % 2 != 0) bytes.back() = static_cast<char>(bytes.back() & 0x0F);
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t dim : dims) t->add_dims(dim);
  t->set_raw_data(bytes);
}

void scale_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(0.002f, 0.05f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = d(gen);
  m.initializer(name, dims, v);
}

// The weight's DequantizeLinear: W_q [rows, cols] of `type`, scale (and zero point when `zp`) of
// `scale_dims`, block_size `block` along `axis`.
void add_dequantize(ModelBuilder& m, int32_t type, const std::vector<int64_t>& w_dims,
                    const std::vector<int64_t>& scale_dims, int64_t axis, int64_t block, bool zp) {
  packed_initializer(m, "w_q", type, w_dims, 5);
  scale_initializer(m, "w_s", scale_dims, 6);
  std::vector<std::string> inputs = {"w_q", "w_s"};
  if (zp) {
    packed_initializer(m, "w_z", type, scale_dims, 7);
    inputs.push_back("w_z");
  }
  auto& dq = m.node("DequantizeLinear", inputs, {"w"}, "w_dequantize");
  ephost_test::attr_int(dq, "axis", axis);
  if (block > 0) ephost_test::attr_int(dq, "block_size", block);
}

std::vector<float> run(const Ephost::Session& s, const std::vector<int64_t>& shape, std::vector<float>& x,
                       std::vector<int64_t>* y_shape = nullptr) {
  std::vector<Ephost::Tensor> in;
  in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size()));
  std::vector<Ephost::Tensor> out = s.run({"x"}, in, {"y"});
  if (y_shape) *y_shape = out[0].shape();
  const float* p = static_cast<const float*>(Ephost::api().TensorGetData(out[0].get()));
  return std::vector<float>(p, p + Ephost::api().TensorGetElementCount(out[0].get()));
}

// Runs the model fused and unfused on each of `x_shapes`; the fused session must hold `expect` (or, with
// expect empty, no group with a MatMul or Gemm).
void check_q4(ModelBuilder& m, const std::vector<std::vector<int64_t>>& x_shapes, const std::string& expect) {
  const std::string bytes = m.bytes();
  Ephost::SessionOptions fused_opts;
  fused_opts.set_threads(3);
  fused_opts.append_provider("cpu", {{"adaptive_threads", "0"}});
  Ephost::Session fused(cpu_env(), bytes.data(), bytes.size(), fused_opts);
  Ephost::SessionOptions plain_opts;
  plain_opts.set_threads(1);
  plain_opts.append_provider("cpu", {{"fuse_patterns", "0"}});
  Ephost::Session plain(cpu_env(), bytes.data(), bytes.size(), plain_opts);
  std::string all;
  const std::multiset<std::string> groups = fused_groups(fused);
  for (const auto& g : groups) all += "[" + g + "] ";
  if (expect.empty()) {
    for (const auto& g : groups) EXPECT_EQ(g.find("DequantizeLinear+"), std::string::npos) << all;
  } else {
    EXPECT_EQ(groups.count(expect), 1u) << "fused groups: " << all;
  }
  EXPECT_TRUE(fused_groups(plain).empty());
  uint32_t seed = 1;
  for (const auto& shape : x_shapes) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    std::mt19937 gen(seed++);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> x(n);
    for (float& v : x) v = d(gen);
    std::vector<int64_t> got_shape, want_shape;
    const std::vector<float> got = run(fused, shape, x, &got_shape);
    const std::vector<float> want = run(plain, shape, x, &want_shape);
    ASSERT_EQ(got_shape, want_shape);
    ASSERT_EQ(got.size(), want.size());
    double scale = 0;
    for (float v : want) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    ASSERT_GT(scale, 0.0);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5 * scale + 1e-6) << "at " << i;
  }
}

}  // namespace

TEST(CpuQ4MatMul, Int4BlockedWithZeroPointsAndBias) {
  ModelBuilder m(21);
  const int64_t K = 67, N = 45, block = 16, blocks = 5;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 5, K}).output("y", onnx::TensorProto::FLOAT, {-1, 5, N});
  add_dequantize(m, EPHOST_ELEMENT_INT4, {K, N}, {blocks, N}, 0, block, true);
  std::vector<float> b(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) b[i] = 0.1f * static_cast<float>(i % 9) - 0.4f;
  m.initializer("b", {N}, b);
  m.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  m.node("Add", {"b", "mm"}, {"y"}, "bias");
  check_q4(m, {{3, 5, K}, {1, 5, K}}, "DequantizeLinear+MatMul+Add");
}

TEST(CpuQ4MatMul, Uint4BlockedWithoutZeroPoints) {
  ModelBuilder m(21);
  const int64_t K = 128, N = 130;
  m.input("x", onnx::TensorProto::FLOAT, {-1, K}).output("y", onnx::TensorProto::FLOAT, {-1, N});
  add_dequantize(m, EPHOST_ELEMENT_UINT4, {K, N}, {K / 32, N}, 0, 32, false);
  m.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  check_q4(m, {{1, K}, {37, K}}, "DequantizeLinear+MatMul");
}

TEST(CpuQ4MatMul, VectorTimesMatrix) {
  ModelBuilder m(21);
  const int64_t K = 33, N = 9;
  m.input("x", onnx::TensorProto::FLOAT, {K}).output("y", onnx::TensorProto::FLOAT, {N});
  add_dequantize(m, EPHOST_ELEMENT_INT4, {K, N}, {3, N}, 0, 13, true);
  m.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  check_q4(m, {{K}}, "DequantizeLinear+MatMul");
}

TEST(CpuQ4MatMul, GemmTransBBlockedAlongColumnsWithBeta) {
  ModelBuilder m(21);
  const int64_t K = 40, N = 33;
  m.input("x", onnx::TensorProto::FLOAT, {-1, K}).output("y", onnx::TensorProto::FLOAT, {-1, N});
  add_dequantize(m, EPHOST_ELEMENT_INT4, {N, K}, {N, 5}, 1, 8, true);
  std::vector<float> c(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) c[i] = 0.05f * static_cast<float>(i);
  m.initializer("c", {N}, c);
  auto& gemm = m.node("Gemm", {"x", "w", "c"}, {"y"}, "gemm");
  ephost_test::attr_int(gemm, "transB", 1);
  ephost_test::attr_float(gemm, "beta", 0.5f);
  check_q4(m, {{7, K}}, "DequantizeLinear+Gemm");
}

TEST(CpuQ4MatMul, PerColumnAndPerTensorScales) {
  for (bool per_tensor : {false, true}) {
    ModelBuilder m(21);
    const int64_t K = 50, N = 70;
    m.input("x", onnx::TensorProto::FLOAT, {-1, K}).output("y", onnx::TensorProto::FLOAT, {-1, N});
    add_dequantize(m, EPHOST_ELEMENT_UINT4, {K, N}, per_tensor ? std::vector<int64_t>{} : std::vector<int64_t>{N}, 1,
                   0, true);
    m.node("MatMul", {"x", "w"}, {"y"}, "matmul");
    check_q4(m, {{4, K}}, "DequantizeLinear+MatMul");
  }
}

TEST(CpuQ4MatMul, SharedWeightRunsUnfused) {
  ModelBuilder m(21);
  const int64_t K = 32, N = 16;
  m.input("x", onnx::TensorProto::FLOAT, {2, K}).output("y", onnx::TensorProto::FLOAT, {2, N});
  add_dequantize(m, EPHOST_ELEMENT_INT4, {K, N}, {2, N}, 0, 16, false);
  m.node("MatMul", {"x", "w"}, {"p"}, "first");
  m.node("MatMul", {"x", "w"}, {"q"}, "second");
  m.node("Add", {"p", "q"}, {"y"}, "sum");
  check_q4(m, {{2, K}}, "");
}
