// Where a convolutional region of the CPU plugin creates its oneDNN primitives and packs its weights:
// with static input shapes at session creation, so that the first run does no more than any other;
// with dynamic ones on the first run of each new shape only. Checked without timing: the region
// reports a "Plan" span (plugin ABI 4 profile spans) in exactly the runs that built a plan.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

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

struct Spans {
  int plans = 0;      // "Plan" spans: runs that created the region's primitives
  int region_ops = 0;  // spans of the region's primitives (the profile did reach inside the region)
};

// Runs the model once per entry of `sizes` (the input's height and width) in one profiled session at
// one thread (with `config`'s further entries), and counts the region's spans.
Spans run_profiled(const std::string& model, const std::vector<int64_t>& sizes,
                   const std::map<std::string, std::string>& config = {}) {
  TempDir dir;
  Ephost::SessionOptions options;
  options.set_threads(1);
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("trace"));
  for (const auto& [key, value] : config) options.add_config(key, value);
  Ephost::Session session(cpu_env(), model.data(), model.size(), options);
  for (int64_t s : sizes) {
    std::vector<float> x(static_cast<size_t>(16 * s * s));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 997) - 0.4f;
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 16, s, s}, x.data(), x.size());
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

}  // namespace
