// The example compiling EP (samples/example_ep) as applications see it: discovered from its folder,
// claiming fused groups, compiling and running them with the same results as the built-in CPU plugin,
// on a synthetic model (every supported op, dynamic batch) and on PP-OCR's mobile text-direction
// classifier (skipped with a message when the models cannot be fetched).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void set_int(onnx::NodeProto& n, const std::string& name, int64_t value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

std::vector<float> pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

// x[N,3,10,12] -> Conv -> hardswish (Add, Clip, Mul, Div) -> depthwise Conv (stride 2x1) -> Relu ->
// squeeze-excite (GlobalAveragePool, Conv, HardSigmoid, Mul) -> MaxPool -> BatchNormalization ->
// Flatten -> Reshape -> MatMul -> Add -> Sub -> Sigmoid -> Softmax -> y[N,5]: every op the example EP
// claims, in the shapes of a small mobile classifier. The features (bn) and logits are outputs too:
// compared value by value, they show differences the final softmax would squash.
const std::vector<std::string> kOutputs = {"y", "logits", "bn"};

ModelBuilder classifier_model() {
  ModelBuilder m(13, "classifier");
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3, 10, 12}).output("y", onnx::TensorProto::FLOAT, {-1, 5});
  m.output("logits", onnx::TensorProto::FLOAT, {-1, 5}).output("bn", onnx::TensorProto::FLOAT, {-1, 4, 2, 6});
  m.initializer("w1", {4, 3, 3, 3}, pattern(108, 0.4f, 0.0f)).initializer("b1", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  m.initializer("three", {}, {3.0f}).initializer("zero", {}, {0.0f}).initializer("six", {}, {6.0f});
  m.initializer("w2", {4, 1, 3, 3}, pattern(36, 0.5f, 1.0f));
  m.initializer("w3", {4, 4, 1, 1}, pattern(16, 0.7f, 2.0f)).initializer("b3", {4}, {0.5f, -0.5f, 0.25f, 0.0f});
  m.initializer("gamma", {4}, {1.0f, 0.5f, 2.0f, 1.5f}).initializer("beta", {4}, {0.0f, 0.1f, -0.1f, 0.2f});
  m.initializer("mean", {4}, {0.1f, 0.0f, 0.2f, -0.1f}).initializer("var", {4}, {1.0f, 0.5f, 2.0f, 0.25f});
  m.initializer("w4", {48, 5}, pattern(240, 0.3f, 3.0f)).initializer("b4", {5}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f});
  m.initializer("offset", {5}, {0.5f, 0.0f, -0.5f, 0.25f, 0.0f});
  auto& shape = *m.proto().mutable_graph()->add_initializer();
  shape.set_name("flat_shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(2);
  shape.add_int64_data(-1);
  shape.add_int64_data(48);

  set_ints(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c1", "three"}, {"a1"}, "hs_add");
  m.node("Clip", {"a1", "zero", "six"}, {"k1"}, "hs_clip");
  m.node("Mul", {"c1", "k1"}, {"m1"}, "hs_mul");
  m.node("Div", {"m1", "six"}, {"h1"}, "hs_div");
  auto& dw = m.node("Conv", {"h1", "w2"}, {"c2"}, "depthwise");
  set_int(dw, "group", 4);
  set_ints(dw, "pads", {1, 1, 1, 1});
  set_ints(dw, "strides", {2, 1});
  m.node("Relu", {"c2"}, {"r2"}, "relu");
  m.node("GlobalAveragePool", {"r2"}, {"g"}, "se_pool");
  m.node("Conv", {"g", "w3", "b3"}, {"s"}, "se_conv");
  m.node("HardSigmoid", {"s"}, {"hs"}, "se_gate");
  m.node("Mul", {"r2", "hs"}, {"se"}, "se_mul");
  auto& pool = m.node("MaxPool", {"se"}, {"p"}, "pool");
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  m.node("BatchNormalization", {"p", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
  m.node("Flatten", {"bn"}, {"f"}, "flatten");
  m.node("Reshape", {"f", "flat_shape"}, {"f2"}, "reshape");
  m.node("MatMul", {"f2", "w4"}, {"mm"}, "fc");
  m.node("Add", {"mm", "b4"}, {"logits"}, "fc_bias");
  m.node("Sub", {"logits", "offset"}, {"shifted"}, "shift");
  m.node("Sigmoid", {"shifted"}, {"squashed"}, "squash");
  m.node("Softmax", {"squashed"}, {"y"}, "softmax");
  return m;
}

// node name -> (provider, fused group), from the partition report's main graph.
std::map<std::string, std::pair<std::string, std::string>> assignment(const Ephost::Session& s) {
  json report = json::parse(s.partition_report_json());
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& n : report["graphs"][0]["nodes"])
    out[n["node"]] = {n["provider"], n["fused_group"].is_string() ? n["fused_group"].get<std::string>() : ""};
  return out;
}

std::set<std::string> example_groups(const Ephost::Session& s) {
  std::set<std::string> groups;
  for (const auto& [node, where] : assignment(s))
    if (where.first == "example") groups.insert(where.second);
  return groups;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-6 + rel * std::fabs(want[i]) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", the CPU plugin gives " << want[i];
  EXPECT_EQ(bad, 0) << what;
}

Ephost::SessionOptions with_providers(const std::vector<std::string>& providers,
                                      const std::vector<std::pair<std::string, std::string>>& config = {}) {
  Ephost::SessionOptions o;
  for (const auto& p : providers) o.append_provider(p);
  for (const auto& [k, v] : config) o.add_config(k, v);
  return o;
}

// The classifier's outputs (kOutputs) for input x of `shape`.
std::vector<std::vector<float>> run_classifier(const Ephost::Session& s, const std::vector<int64_t>& shape,
                                               std::vector<float> x) {
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
  std::vector<std::vector<float>> out;
  for (const auto& tensor : s.run({"x"}, {t}, kOutputs)) out.push_back(tensor.to_vector<float>());
  return out;
}

void expect_same_outputs(const Ephost::Session& example, const Ephost::Session& cpu, const std::vector<int64_t>& shape,
                         const std::vector<float>& x, const std::string& what) {
  auto got = run_classifier(example, shape, x), want = run_classifier(cpu, shape, x);
  for (size_t i = 0; i < kOutputs.size(); ++i) expect_close(got[i], want[i], 1e-4, what + " " + kOutputs[i]);
}

class ExamplePlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_EXAMPLE_PLUGIN_DIR});
    model_ = classifier_model().bytes();
  }
  Ephost::Session session(const Ephost::SessionOptions& o) const { return Ephost::Session(*env_, model_.data(), model_.size(), o); }
  std::unique_ptr<Ephost::Env> env_;
  std::string model_;
};

TEST_F(ExamplePlugin, DescribesItselfAndTheSdk2BuildDiffersOnlyInSdkVersion) {
  auto find = [](const Ephost::Env& env) {
    for (const auto& r : env.plugin_reports())
      if (std::string(r.name) == "example") return r;
    ADD_FAILURE() << "no example plugin in " << env.plugin_report_json();
    return EphostPluginReport{};
  };
  EphostPluginReport r = find(*env_);
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(std::string(r.vendor), "ephost samples");
  EXPECT_EQ(std::string(r.source_keys), "EXAMPLE,ExampleExecutionProvider");
  EXPECT_EQ(std::string(r.sdk_version), "1.0.0");
  EXPECT_EQ(r.default_priority, 200);
  EXPECT_NE(std::string(r.hardware_architecture), "");
  EXPECT_NE(std::string(r.path).find("example"), std::string::npos);

  Ephost::Env sdk2(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_EXAMPLE_SDK2_PLUGIN_DIR});
  EphostPluginReport r2 = find(sdk2);
  ASSERT_TRUE(r2.loaded) << r2.reason;
  EXPECT_EQ(std::string(r2.sdk_version), "2.0.0");
  EXPECT_EQ(std::string(r2.hardware_architecture), std::string(r.hardware_architecture));
  EXPECT_EQ(std::string(r2.source_keys), std::string(r.source_keys));
}

TEST_F(ExamplePlugin, RunsTheWholeClassifierAsOneGroupLikeTheCpuPlugin) {
  Ephost::Session example = session(with_providers({"example", "cpu"}));
  Ephost::Session cpu = session(with_providers({"cpu"}));
  for (const auto& [node, where] : assignment(example)) EXPECT_EQ(where.first, "example") << node;
  EXPECT_EQ(example_groups(example).size(), 1u);
  for (int64_t batch : {1, 3}) {
    std::vector<int64_t> shape{batch, 3, 10, 12};
    expect_same_outputs(example, cpu, shape, pattern(static_cast<size_t>(batch * 360), 2.0f, 0.5f),
                        "batch " + std::to_string(batch));
  }
}

TEST_F(ExamplePlugin, IsAskedBeforeTheCpuPluginByDefault) {
  Ephost::Session s = session(Ephost::SessionOptions());
  EXPECT_EQ(assignment(s)["conv1"].first, "example");
}

// Leaving Clip and HardSigmoid to the CPU plugin cuts the claimed nodes where a path leaves and
// re-enters them (hardswish, squeeze-excite): one group per stage, none refused for a cycle.
TEST_F(ExamplePlugin, ClaimOptionSplitsIntoStagesThatNeverFormACycle) {
  const std::string claim = "Conv,Add,Sub,Mul,Div,Relu,Sigmoid,GlobalAveragePool,MaxPool,MatMul,Softmax,"
                            "BatchNormalization,Reshape,Flatten";
  Ephost::Session split = session(with_providers({"example", "cpu"}, {{"ep.example.claim", claim}}));
  Ephost::Session cpu = session(with_providers({"cpu"}));
  auto a = assignment(split);
  EXPECT_EQ(a["hs_clip"].first, "cpu");
  EXPECT_EQ(a["se_gate"].first, "cpu");
  EXPECT_EQ(a["conv1"].second, a["hs_add"].second);   // stage 0
  EXPECT_NE(a["hs_add"].second, a["hs_mul"].second);  // hs_mul reads the Clip's result: stage 1
  EXPECT_EQ(a["hs_mul"].second, a["se_conv"].second);
  EXPECT_NE(a["se_conv"].second, a["se_mul"].second);  // se_mul reads the HardSigmoid's: stage 2
  EXPECT_EQ(a["se_mul"].second, a["softmax"].second);
  EXPECT_EQ(example_groups(split).size(), 3u);
  json refused = json::parse(split.partition_report_json())["graphs"][0]["refused_claims"];
  for (const auto& r : refused) EXPECT_NE(r["provider"], "example") << r.dump();

  std::vector<int64_t> shape{2, 3, 10, 12};
  expect_same_outputs(split, cpu, shape, pattern(720, 1.5f, 0.2f), "split");
}

TEST_F(ExamplePlugin, EmptyClaimLeavesEverythingToTheCpuPlugin) {
  Ephost::Session s = session(with_providers({"example", "cpu"}, {{"ep.example.claim", ""}}));
  for (const auto& [node, where] : assignment(s)) EXPECT_EQ(where.first, "cpu") << node;
}

TEST_F(ExamplePlugin, UnknownClaimedOpIsAClearError) {
  try {
    session(with_providers({"example", "cpu"}, {{"ep.example.claim", "Conv,LSTM"}}));
    FAIL() << "expected the session to fail";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("ep.example.claim: the example EP does not run 'LSTM'"), std::string::npos)
        << e.what();
  }
}

TEST_F(ExamplePlugin, ConcurrentRunsOfOneSessionAgree) {
  Ephost::Session s = session(with_providers({"example", "cpu"}));
  std::vector<int64_t> shape{2, 3, 10, 12};
  std::vector<float> x = pattern(720, 1.0f, 0.7f);
  const auto expected = run_classifier(s, shape, x);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        if (run_classifier(s, shape, x) != expected) ++mismatches[t];
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// ---- PP-OCR's mobile text-direction classifier -------------------------------------------------------

using ephost_test::ocr_model_folder;

TEST_F(ExamplePlugin, MobileClassifierMatchesTheCpuPlugin) {
  std::string why;
  const std::string folder = ocr_model_folder(&why);
  if (folder.empty()) GTEST_SKIP() << why;
  onnx::ModelProto model;
  {
    std::ifstream f(folder + "/ch_ppocr_mobile_v2.0_cls_infer.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&f));
  }
  // Also expose the pooled features feeding the classifier head: 200 values compared one by one
  // (the softmax alone would hide small differences).
  const std::string features = "p2o.GlobalAveragePool.19";
  ModelBuilder::set_type(model.mutable_graph()->add_output(), features, onnx::TensorProto::FLOAT, {-1, 200, 1, 1});
  std::string bytes;
  model.SerializeToString(&bytes);

  Ephost::Session example(*env_, bytes.data(), bytes.size(), with_providers({"example", "cpu"}));
  Ephost::Session cpu(*env_, bytes.data(), bytes.size(), with_providers({"cpu"}));
  // Two groups: the convolutional body, and MatMul + Add + Softmax; the batch-size arithmetic in
  // between (Shape, Cast, Slice, Concat, a Reshape to a computed shape) stays on the CPU plugin.
  EXPECT_EQ(example_groups(example).size(), 2u);
  for (const auto& [node, where] : assignment(example)) {
    if (where.first != "cpu") continue;
    EXPECT_TRUE(node.find("Shape") != std::string::npos || node.find("Cast") != std::string::npos ||
                node.find("Slice") != std::string::npos || node.find("Concat") != std::string::npos ||
                node.find("Reshape") != std::string::npos)
        << node << " is not on the example EP";
  }

  for (int64_t batch : {1, 2}) {
    std::vector<int64_t> shape{batch, 3, 48, 192};
    std::vector<float> x(static_cast<size_t>(batch * 3 * 48 * 192));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
    auto got = example.run({"x"}, {t}, {"softmax_0.tmp_0", features});
    auto want = cpu.run({"x"}, {t}, {"softmax_0.tmp_0", features});
    expect_close(got[1].to_vector<float>(), want[1].to_vector<float>(), 1e-4, "features");
    expect_close(got[0].to_vector<float>(), want[0].to_vector<float>(), 1e-4, "softmax");
  }
}

}  // namespace
