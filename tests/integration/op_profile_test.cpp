// Profiles inside fused steps (plugin ABI 4, kernel_profile_span): the CPU plugin reports one span per
// primitive or fused chain of a convolutional region, and one span naming all nodes of any other
// fused group; the host nests them under the step's span (category "op"), and `ephost bench --per-op`
// sums them. The PP-OCR det case is the measure of done: at least 100 operator spans inside
// its region, adding up to within 10% of the region's span.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, false);
}

Ephost::SessionOptions profiled(const TempDir& dir) {
  Ephost::SessionOptions options;
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, dir.file("trace"));
  return options;
}

std::vector<json> events_of(const json& trace, const std::string& category) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e["cat"] == category) out.push_back(e);
  return out;
}

bool inside(const json& inner, const json& outer) {
  const int64_t s = inner["ts"], d = inner["dur"], os = outer["ts"], od = outer["dur"];
  return inner["tid"] == outer["tid"] && s >= os && s + d <= os + od;
}

// What the operator spans of one step say about it.
struct StepSpans {
  std::vector<json> ops;  // inside the step, in start order
  int64_t sum_us = 0;     // their durations added
  int64_t overlap_us = 0; // the most one starts before the previous ended (0: they tile or leave gaps)
  size_t naming_nodes = 0;  // spans that name at least one ONNX node
};

StepSpans spans_inside(const json& trace, const json& step) {
  StepSpans out;
  for (const json& e : events_of(trace, "op"))
    if (e["args"]["step"] == step["name"] && inside(e, step)) out.ops.push_back(e);
  // By start, then by length: a span shorter than a microsecond rounds to a length of 0 and shares its
  // start with the span after it; taken second, it would read as the next one starting 1 span early.
  std::sort(out.ops.begin(), out.ops.end(), [](const json& a, const json& b) {
    const int64_t ta = a["ts"], tb = b["ts"];
    return ta != tb ? ta < tb : a["dur"].get<int64_t>() < b["dur"].get<int64_t>();
  });
  int64_t previous_end = -1;
  for (const json& e : out.ops) {
    const int64_t ts = e["ts"], dur = e["dur"];
    out.sum_us += dur;
    if (previous_end >= 0) out.overlap_us = std::max(out.overlap_us, previous_end - ts);
    previous_end = ts + dur;
    if (!e["args"]["nodes"].get<std::string>().empty()) ++out.naming_nodes;
  }
  return out;
}

// A convolutional region: Conv, BatchNormalization, Relu, Conv, Add (residual), MaxPool, Conv, Sigmoid.
// The host folds the BatchNormalization into the first convolution's weights; the region then runs
// that convolution and the Relu as one chain, and the second convolution with the residual Add.
ModelBuilder small_region() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16}).output("y", onnx::TensorProto::FLOAT, {1, 8, 8, 8});
  auto conv = [&](const std::string& x, const std::string& name, int64_t k) {
    std::vector<float> w(static_cast<size_t>(8 * 8 * k * k)), b(8);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 13) - 6);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i);
    m.initializer(name + "_w", {8, 8, k, k}, w).initializer(name + "_b", {8}, b);
    auto& n = m.node("Conv", {x, name + "_w", name + "_b"}, {name}, name);
    ephost_test::attr_ints(n, "kernel_shape", {k, k});
    ephost_test::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    return name;
  };
  const std::vector<float> ones(8, 1.f), zeros(8, 0.f);
  m.initializer("bn_s", {8}, ones).initializer("bn_b", {8}, zeros).initializer("bn_m", {8}, zeros);
  m.initializer("bn_v", {8}, ones);
  const std::string c1 = conv("x", "conv1", 3);
  m.node("BatchNormalization", {c1, "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn1"}, "bn1");
  m.node("Relu", {"bn1"}, {"relu1"}, "relu1");
  const std::string c2 = conv("relu1", "conv2", 3);
  m.node("Add", {c2, "x"}, {"sum"}, "residual");
  auto& pool = m.node("MaxPool", {"sum"}, {"pool"}, "pool");
  ephost_test::attr_ints(pool, "kernel_shape", {2, 2});
  ephost_test::attr_ints(pool, "strides", {2, 2});
  const std::string c3 = conv("pool", "conv3", 1);
  m.node("Sigmoid", {c3}, {"y"}, "sigmoid");
  return m;
}

void run_small_region(Ephost::Session& session, int times) {
  std::vector<float> x(8 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 997) - 0.4f;
  for (int i = 0; i < times; ++i) {
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 8, 16, 16}, x.data(), x.size());
    session.run({"x"}, {in}, {"y"});
  }
}

// The steps of the trace that are fused groups of `min_nodes` nodes or more.
std::vector<json> fused_steps(const json& trace, size_t min_nodes) {
  std::vector<json> out;
  for (const json& e : events_of(trace, "node"))
    if (e["args"]["op_type"] == "fused group" && std::stoul(e["args"]["nodes"].get<std::string>()) >= min_nodes)
      out.push_back(e);
  return out;
}

}  // namespace

TEST(OpProfile, RegionReportsASpanPerChainNamingItsNodesNestedInTheStep) {
  TempDir dir;
  const std::string bytes = small_region().bytes();
  Ephost::SessionOptions options = profiled(dir);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  run_small_region(session, 2);
  const json trace = read_json(session.end_profiling());
  ASSERT_TRUE(trace.is_object());

  const std::vector<json> regions = fused_steps(trace, 7);
  std::string steps;
  for (const json& e : events_of(trace, "node")) steps += e["name"].get<std::string>() + " " + e["args"].dump() + "\n";
  ASSERT_EQ(regions.size(), 2u) << "one region of the nodes (the host may fold the BatchNormalization into its "
                                   "convolution), once per run; the steps:\n"
                                << steps;
  std::set<std::string> covered;
  for (const json& region : regions) {
    const StepSpans s = spans_inside(trace, region);
    ASSERT_FALSE(s.ops.empty());
    EXPECT_LE(s.overlap_us, 1) << "spans follow one another (1 us of rounding)";
    EXPECT_LE(s.sum_us, region["dur"].get<int64_t>());
    for (const json& e : s.ops) {
      EXPECT_EQ(e["args"]["provider"], "cpu");
      const std::string nodes = e["args"]["nodes"];
      std::stringstream list(nodes);
      for (std::string n; std::getline(list, n, ',');) covered.insert(n);
      if (nodes.empty()) {
        const std::string op = e["args"]["op_type"];
        EXPECT_TRUE(op == "Reorder" || op == "Plan") << "only the region's own work names no node: " << e;
      }
    }
  }
  // Every node the region received is named by some span.
  for (const char* node : {"conv1", "relu1", "conv2", "residual", "pool", "conv3", "sigmoid"})
    EXPECT_TRUE(covered.count(node)) << node << " is named by an operator span";
  // A fused chain says what it fused: the first convolution took the Relu, the second the residual Add.
  bool chain = false, residual = false;
  for (const json& e : events_of(trace, "op")) {
    chain = chain || (e["args"]["op_type"] == "Conv+Relu" && e["args"]["nodes"] == "conv1,relu1");
    residual = residual || (e["args"]["op_type"] == "Conv+Add" && e["args"]["nodes"] == "conv2,residual");
  }
  EXPECT_TRUE(chain && residual) << trace.dump(1);
}

TEST(OpProfile, OtherFusedGroupsReportOneSpanNamingAllTheirNodes) {
  // An elementwise chain (Relu, Sigmoid, Relu), which the CPU plugin runs as one pass.
  TempDir dir;
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {64, 64}).output("y", onnx::TensorProto::FLOAT, {64, 64});
  m.node("Relu", {"x"}, {"a"}, "relu_a");
  m.node("Sigmoid", {"a"}, {"b"}, "sigmoid_b");
  m.node("Relu", {"b"}, {"y"}, "relu_y");
  const std::string bytes = m.bytes();
  Ephost::SessionOptions options = profiled(dir);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  std::vector<float> x(64 * 64, 0.25f);
  Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {64, 64}, x.data(), x.size());
  session.run({"x"}, {in}, {"y"});
  const json trace = read_json(session.end_profiling());
  const std::vector<json> groups = fused_steps(trace, 2);
  ASSERT_FALSE(groups.empty()) << "the chain is fused: " << trace.dump(1);
  for (const json& g : groups) {
    const StepSpans s = spans_inside(trace, g);
    ASSERT_EQ(s.ops.size(), 1u) << g;
    const std::string nodes = s.ops[0]["args"]["nodes"];
    EXPECT_EQ(nodes, "relu_a,sigmoid_b,relu_y") << "names each node of the group";
    EXPECT_EQ(s.ops[0]["args"]["op_type"], "Relu+Sigmoid+Relu");
  }
}

TEST(OpProfile, PpOcrDetNamesAHundredOperatorsThatAddUpToItsRegion) {
  std::string why;
  const std::string folder = ephost_test::ocr_model_folder(&why);
  if (folder.empty()) GTEST_SKIP() << why;
  TempDir dir;
  Ephost::SessionOptions options = profiled(dir);
  options.set_threads(2);
  Ephost::Session session(cpu_env(), folder + "/ch_PP-OCRv4_det_infer.onnx", options);
  const std::vector<int64_t> shape = {1, 3, 320, 320};
  std::vector<float> x(3 * 320 * 320);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (int run = 0; run < 2; ++run) {
    Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
    session.run({"x"}, {in}, {"sigmoid_0.tmp_0"});
  }
  const json trace = read_json(session.end_profiling());
  ASSERT_TRUE(trace.is_object());

  // The largest region (PP-OCR det's one region of over 300 nodes), in the second run.
  std::vector<json> regions = fused_steps(trace, 100);
  ASSERT_EQ(regions.size(), 2u) << "one big region per run";
  const json& region = regions.back();
  const StepSpans s = spans_inside(trace, region);
  const int64_t region_us = region["dur"];
  EXPECT_GE(s.naming_nodes, 100u) << "operator spans naming ONNX nodes inside the region";
  EXPECT_LE(s.overlap_us, 1) << "spans follow one another (1 us of rounding)";
  // Measured on one clock (the spans are the host's clock read by the plugin) and tiling the compute,
  // they add up to the region's span less the host's bookkeeping around the call, however loaded the
  // machine is: preemption lands inside some span. Rounding: at most 1 us per span.
  EXPECT_LE(s.sum_us, region_us + static_cast<int64_t>(s.ops.size()));
  EXPECT_GE(static_cast<double>(s.sum_us), 0.9 * static_cast<double>(region_us))
      << s.ops.size() << " spans add up to " << s.sum_us << " us of the region's " << region_us << " us";
  std::cout << "[ measured ] PP-OCR det 320x320, 2 threads: " << s.ops.size() << " operator spans ("
            << s.naming_nodes << " naming nodes) add up to " << s.sum_us << " us of the region's " << region_us
            << " us (" << 100.0 * static_cast<double>(s.sum_us) / static_cast<double>(region_us) << "%)\n";
}

TEST(OpProfile, BenchPerOpSumsTheSpansByOpTypeAndByNode) {
  TempDir dir;
  const std::string model = dir.file("region.onnx");
  {
    const std::string bytes = small_region().bytes();
    std::ofstream(model, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const ephost_test::CommandResult r = ephost_test::run_command(
      "EPHOST_PLUGIN_PATH= '" + std::string(EPHOST_CLI_PATH) + "' bench '" + model +
      "' --repeat 2 --warmup 1 --per-op --per-op-top 50 --json --no-progress 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("per_op")) << r.output;
  const json& per_op = j["per_op"];
  EXPECT_EQ(per_op["runs"], 3) << "every profiled run: the warm-up and the timed ones";
  auto row = [&](const char* list, const char* key, const std::string& value) {
    for (const json& e : per_op[list])
      if (e[key] == value) return e;
    return json();
  };
  const json conv_relu = row("by_op_type", "op_type", "Conv+Relu");
  ASSERT_TRUE(conv_relu.is_object()) << per_op.dump(1);
  EXPECT_EQ(conv_relu["count"], 3) << "one span per run";
  EXPECT_GT(conv_relu["ms_per_run"].get<double>(), 0.0);
  EXPECT_TRUE(row("by_node", "node", "conv1 + relu1").is_object()) << per_op.dump(1);
  EXPECT_TRUE(row("by_node", "node", "pool").is_object()) << per_op.dump(1);
  double shares = 0;
  for (const json& e : per_op["by_op_type"]) shares += e["share"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-6) << "with every row listed, the shares add up to the whole";
  // The region's own step is not counted again beside its operators.
  for (const json& e : per_op["by_op_type"]) EXPECT_NE(e["op_type"], "fused group") << per_op.dump(1);
}
