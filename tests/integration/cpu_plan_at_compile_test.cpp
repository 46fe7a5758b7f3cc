// Where the CPU plugin's convolutional regions and fused int8 (QDQ) convolutions and products create
// their oneDNN primitives and pack their weights: with static input shapes at session creation, so
// that the first run does no more than any other; with dynamic ones on the first run of each new shape
// only. Checked without timing: the group reports a "Plan" span (plugin ABI 4 profile spans) in
// exactly the runs that built a plan.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ephost/ephost_cxx_api.h"
#include "cpu_fused_groups.h"
#include "ephost/ephost_session_options_keys.h"
#include "qdq_test_models.h"
#include "test_support.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;
using ephost_test::cpu_env;
using ephost_test::typed_initializer;

// Conv 3x3 + Relu, Conv 3x3 (Winograd-sized: 16 channels) + residual Add, MaxPool, Conv 1x1: one region.
// `spatial` < 0 makes height and width symbolic.
std::string region_model(int64_t spatial) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 16, spatial, spatial});
  m.output("y", onnx::TensorProto::FLOAT, {1, 16, spatial < 0 ? -1 : spatial / 2, spatial < 0 ? -1 : spatial / 2});
  auto conv = [&](const std::string& x, const std::string& name, int64_t k) {
    std::vector<float> w(static_cast<size_t>(16 * 16 * k * k)), b(16);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 13) - 6);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i);
    m.initializer(name + "_w", {16, 16, k, k}, w).initializer(name + "_b", {16}, b);
    auto& n = m.node("Conv", {x, name + "_w", name + "_b"}, {name}, name);
    ephost_test::attr_ints(n, "kernel_shape", {k, k});
    ephost_test::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    return name;
  };
  m.node("Relu", {conv("x", "conv1", 3)}, {"relu1"}, "relu1");
  m.node("Add", {conv("relu1", "conv2", 3), "x"}, {"sum"}, "residual");
  auto& pool = m.node("MaxPool", {"sum"}, {"pool"}, "pool");
  ephost_test::attr_ints(pool, "kernel_shape", {2, 2});
  ephost_test::attr_ints(pool, "strides", {2, 2});
  m.node("Relu", {conv("pool", "conv3", 1)}, {"y"}, "relu2");
  return m.bytes();
}

// x_q = Q(x, 0.02, 128) -> DQ -> `op` with DequantizeLinear'd int8 weights (within +-60: every tier
// multiplies them exactly) -> Q(0.05, 120) -> DQ -> y: the pattern the plugin runs as one int8
// primitive. Conv: x [1, 16, s, s], 3x3 padded, 16 output channels; MatMul: x [1, s, 16] by [16, 16].
// `spatial` < 0 makes s symbolic.
std::string int8_model(const std::string& op, int64_t spatial) {
  ModelBuilder m(13);
  const bool conv = op == "Conv";
  const int64_t s = spatial < 0 ? -1 : spatial;
  m.input("x", onnx::TensorProto::FLOAT, conv ? std::vector<int64_t>{1, 16, s, s} : std::vector<int64_t>{1, s, 16});
  m.output("y", onnx::TensorProto::FLOAT, conv ? std::vector<int64_t>{1, 16, s, s} : std::vector<int64_t>{1, s, 16});
  ephost_test::add_quant_pair(m, "x", {0.02f, 128, false}, "in", "a");
  const std::vector<int64_t> w_dims = conv ? std::vector<int64_t>{16, 16, 3, 3} : std::vector<int64_t>{16, 16};
  std::vector<int8_t> w(static_cast<size_t>(conv ? 16 * 16 * 9 : 16 * 16));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 121) - 60);
  typed_initializer<int8_t>(m, "w_q", onnx::TensorProto::INT8, w_dims, w);
  m.initializer("w_s", {16}, ephost_test::channel_scales(16));
  auto& dq = m.node("DequantizeLinear", {"w_q", "w_s"}, {"w"}, "w_dequantize");
  ephost_test::attr_int(dq, "axis", conv ? 0 : 1);
  auto& product = m.node(op, {"a", "w"}, {"p"}, "product");
  if (conv) {
    ephost_test::attr_ints(product, "kernel_shape", {3, 3});
    ephost_test::attr_ints(product, "pads", {1, 1, 1, 1});
  }
  ephost_test::add_quant_pair(m, "p", {0.05f, 120, false}, "out", "y");
  return m.bytes();
}

struct Spans {
  int plans = 0;      // "Plan" spans: runs that created the group's primitives
  int region_ops = 0;  // spans of the region's primitives (the profile did reach inside the region)
};

// Runs the model once per entry of `sizes` (the input's height and width, or the MatMul's rows when
// `x_dims` is 3) in one profiled session at one thread (with `config`'s further entries), and counts
// the spans. With `fused` the fused groups the session formed.
Spans run_profiled(const std::string& model, const std::vector<int64_t>& sizes,
                   const std::map<std::string, std::string>& config = {}, size_t x_dims = 4,
                   std::multiset<std::string>* fused = nullptr) {
  TempDir dir;
  Ephost::SessionOptions options;
  options.set_threads(1);
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("trace"));
  for (const auto& [key, value] : config) options.add_config(key, value);
  Ephost::Session session(cpu_env(), model.data(), model.size(), options);
  if (fused != nullptr) *fused = ephost_test::fused_groups(session);
  for (int64_t s : sizes) {
    const std::vector<int64_t> shape = x_dims == 4 ? std::vector<int64_t>{1, 16, s, s} : std::vector<int64_t>{1, s, 16};
    std::vector<float> x(static_cast<size_t>(x_dims == 4 ? 16 * s * s : 16 * s));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 997) - 0.4f;
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
    session.run({"x"}, {in}, {"y"});
  }
  std::ifstream file(session.end_profiling());
  std::stringstream text;
  text << file.rdbuf();
  const json trace = json::parse(text.str());
  Spans out;
  for (const json& e : trace["traceEvents"]) {
    if (e["cat"] != "op") continue;
    const std::string op = e["args"]["op_type"];
    if (op == "Plan") ++out.plans;
    if (e["args"]["nodes"].get<std::string>().find("conv") != std::string::npos) ++out.region_ops;
  }
  return out;
}

// The int8 product of int8_model(op, ...) ran as one fused group, with its weights' DequantizeLinear
// (no float copy of the weights).
void expect_int8_group(const std::multiset<std::string>& fused, const std::string& op) {
  std::string all;
  for (const std::string& g : fused) all += "[" + g + "] ";
  EXPECT_EQ(fused.count("DequantizeLinear+DequantizeLinear+" + op + "+QuantizeLinear"), 1u) << all;
}

TEST(CpuPlanAtCompile, StaticShapesCreateNoPrimitivesInAnyRun) {
  const Spans s = run_profiled(region_model(16), {16, 16, 16});
  EXPECT_GE(s.region_ops, 3 * 3) << "every run reports the region's convolutions";
  EXPECT_EQ(s.plans, 0) << "a run created the primitives: session creation should have";
}

TEST(CpuPlanAtCompile, DynamicShapesPlanOnTheFirstRunOfEachShapeOnly) {
  const Spans s = run_profiled(region_model(-1), {16, 16, 12, 16, 12});
  EXPECT_GE(s.region_ops, 5 * 3);
  EXPECT_EQ(s.plans, 2) << "one plan for 16x16 and one for 12x12, each on its first run";
}

TEST(CpuPlanAtCompile, SymbolicShapesFixedByAFreeDimensionOverridePlanAtCreation) {
  const std::map<std::string, std::string> fixed = {
      {std::string(kEphostSessionOptionsFreeDimensionOverridePrefix) + "N", "16"}};
  const Spans s = run_profiled(region_model(-1), {16, 16, 16}, fixed);
  EXPECT_GE(s.region_ops, 3 * 3);
  EXPECT_EQ(s.plans, 0) << "with N fixed at 16 the shapes are static: no run should create primitives";
}

TEST(CpuPlanAtCompile, Int8ConvWithAStaticShapeCreatesNoPrimitiveInAnyRun) {
  std::multiset<std::string> fused;
  const Spans s = run_profiled(int8_model("Conv", 12), {12, 12, 12}, {}, 4, &fused);
  expect_int8_group(fused, "Conv");
  EXPECT_EQ(s.plans, 0) << "a run created the int8 convolution's primitive: session creation should have";
}

TEST(CpuPlanAtCompile, Int8ConvWithADynamicShapePlansOnTheFirstRunOfEachShape) {
  std::multiset<std::string> fused;
  const Spans s = run_profiled(int8_model("Conv", -1), {12, 12, 9, 12}, {}, 4, &fused);
  expect_int8_group(fused, "Conv");
  EXPECT_EQ(s.plans, 2) << "one plan for 12x12 and one for 9x9, each on its first run";
}

TEST(CpuPlanAtCompile, Int8MatMulWithAStaticShapeCreatesNoPrimitiveInAnyRun) {
  std::multiset<std::string> fused;
  const Spans s = run_profiled(int8_model("MatMul", 24), {24, 24}, {}, 3, &fused);
  expect_int8_group(fused, "MatMul");
  EXPECT_EQ(s.plans, 0) << "a run created the int8 product's primitive: session creation should have";
  const Spans d = run_profiled(int8_model("MatMul", -1), {24, 24, 5}, {}, 3);
  EXPECT_EQ(d.plans, 2) << "with a symbolic row count: one plan per new row count, on its first run";
}

}  // namespace
