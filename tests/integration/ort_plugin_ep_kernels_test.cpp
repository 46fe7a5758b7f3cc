// Kernel-registry ONNX Runtime plugin EPs (API 24) end to end: the test EP "ortkern" (tests/plugins/ort_ep/
// ort_kernel_ep.c: no Compile, a kernel registry) dropped into a plugin directory claims nodes one by one;
// the host matches each against its registry (operator, since-version range, type constraints), runs the
// kernels its create functions make, and leaves on the CPU plugin, saying why, what no kernel fits. The
// kernels see their nodes through OrtKernelInfo; a create function that fails fails the session, naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ort_test_plugins.h"
#include "test_support.h"

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;

namespace {

using ephost_test::read_text;

// Node name -> its entry in the partition report.
std::map<std::string, json> nodes_of(const Ephost::Session& s) {
  const json report = json::parse(s.partition_report_json());
  std::map<std::string, json> out;
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"]] = n;
  return out;
}

// The reason ortkern's claim on `node` was refused, "" when none was.
std::string refusal(const Ephost::Session& s, const std::string& node) {
  const json report = json::parse(s.partition_report_json());
  for (const auto& r : report["graphs"][0]["refused_claims"])
    if (r["provider"] == "ortkern" && r["refused"].get<bool>())
      for (const auto& n : r["nodes"])
        if (n == node) return r["reason"];
  return "";
}

class OrtKernelEp : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_ort_plugin(plugins_, "kernels");
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
  }
  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
};

TEST_F(OrtKernelEp, ClaimsAreKernelClaimsAndOutputsEqualTheCpuPlugins) {
  const std::string model = ephost_test::chain_model(4, 6).save(models_);
  Ephost::Session s(*env_, model);
  auto nodes = nodes_of(s);
  for (const char* name : {"add", "mul", "relu"}) {
    EXPECT_EQ(nodes[name]["provider"], "ortkern") << nodes[name].dump(2);
    EXPECT_TRUE(nodes[name]["fused_group"].is_null()) << "a kernel claim, not a fused group: " << nodes[name].dump(2);
  }
  EXPECT_EQ(nodes["sub"]["provider"], "cpu");  // no kernel for Sub: ortkern's lookup found none, so no claim
  EXPECT_EQ(nodes["sigmoid"]["provider"], "cpu");
  EXPECT_EQ(refusal(s, "sub"), "");
  ephost_test::expect_chain_output(s, 4, 6);
  ephost_test::expect_chain_output(s, 4, 6);  // the kernels are made once and run again
}

TEST_F(OrtKernelEp, KernelInfoGettersDescribeTheNode) {
  ModelBuilder m(16);
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  m.initializer("c1", {3}, {0.5f, -1.0f, 2.0f});
  m.node("Add", {"x", "c1"}, {"a"}, "add");
  ephost_test::attr_float(m.node("LeakyRelu", {"a"}, {"y"}, "leaky"), "alpha", 0.25f);
  const std::string log = models_.file("kernels.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.info_log", log).add_config("ep.ortkern.claim", "lookup");
  Ephost::Session s(*env_, m.save(models_), options);
  EXPECT_EQ(read_text(log),
            "node=add op=Add domain= since=14 ep=self claim=lookup in0=x:1 in1=c1:1:const out0=a:1\n"
            "node=leaky op=LeakyRelu domain= since=16 ep=self claim=lookup in0=a:1 out0=y:1 alpha=0.25\n");
  std::vector<float> x = {-2.0f, 0.5f, 1.0f, -0.25f, 3.0f, -4.0f};
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())}, {"y"});
  const std::vector<float> y = out[0].to_vector<float>();
  const float c1[3] = {0.5f, -1.0f, 2.0f};
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = x[i] + c1[i % 3];
    EXPECT_FLOAT_EQ(y[i], a >= 0 ? a : 0.25f * a) << i;
  }
}

// x32 * x32 (int32: in Mul's type constraint), x64 * x64 (int64: not) and x - x (Sub: no kernel).
ModelBuilder typed_model() {
  ModelBuilder m(13);
  m.input("a32", onnx::TensorProto::INT32, {2, 3}).input("a64", onnx::TensorProto::INT64, {2, 3});
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.output("p32", onnx::TensorProto::INT32, {2, 3}).output("p64", onnx::TensorProto::INT64, {2, 3});
  m.output("d", onnx::TensorProto::FLOAT, {2, 3});
  m.node("Mul", {"a32", "a32"}, {"p32"}, "mul32");
  m.node("Mul", {"a64", "a64"}, {"p64"}, "mul64");
  m.node("Sub", {"x", "x"}, {"d"}, "sub");
  return m;
}

void expect_typed_outputs(const Ephost::Session& s) {
  std::vector<int32_t> a32 = {1, -2, 3, 4, 5, -6};
  std::vector<int64_t> a64 = {7, 8, -9, 10, 11, 12};
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto out = s.run({"a32", "a64", "x"},
                   {Ephost::Tensor::wrap(EPHOST_ELEMENT_INT32, {2, 3}, a32.data(), a32.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {2, 3}, a64.data(), a64.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())},
                   {"p32", "p64", "d"});
  ASSERT_EQ(out.size(), 3u);
  const auto p32 = out[0].to_vector<int32_t>();
  const auto p64 = out[1].to_vector<int64_t>();
  const auto d = out[2].to_vector<float>();
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p32[i], a32[i] * a32[i]);
    EXPECT_EQ(p64[i], a64[i] * a64[i]);
    EXPECT_EQ(d[i], 0.0f);
  }
}

TEST_F(OrtKernelEp, TheLookUpClaimsOnlyNodesItsTypeConstraintsAllow) {
  Ephost::Session s(*env_, typed_model().save(models_));
  auto nodes = nodes_of(s);
  EXPECT_EQ(nodes["mul32"]["provider"], "ortkern");
  EXPECT_EQ(nodes["mul64"]["provider"], "cpu");
  EXPECT_EQ(nodes["sub"]["provider"], "cpu");
  EXPECT_EQ(refusal(s, "mul64"), "");  // never claimed: EpGraphSupportInfo_LookUpKernel found no kernel
  expect_typed_outputs(s);
}

TEST_F(OrtKernelEp, ClaimsNoKernelFitsAreRefusedSayingWhy) {
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.claim", "all");  // ortkern claims by operator alone; the host matches
  Ephost::Session s(*env_, typed_model().save(models_), options);
  auto nodes = nodes_of(s);
  EXPECT_EQ(nodes["mul32"]["provider"], "ortkern");
  EXPECT_EQ(nodes["mul64"]["provider"], "cpu");
  EXPECT_EQ(nodes["sub"]["provider"], "cpu");
  const std::string mul64 = refusal(s, "mul64");
  EXPECT_NE(mul64.find("EpGraphSupportInfo_AddSingleNode"), std::string::npos) << mul64;
  EXPECT_NE(mul64.find("type constraint T allows {float, int32}, and input 0 'a64' is int64"), std::string::npos)
      << mul64;
  const std::string sub = refusal(s, "sub");
  EXPECT_NE(sub.find("its kernel registry has no kernel for Sub (domain 'ai.onnx')"), std::string::npos) << sub;
  expect_typed_outputs(s);
}

TEST_F(OrtKernelEp, ANodeOutsideAKernelsVersionRangeStaysOnTheCpu) {
  ModelBuilder m = ephost_test::chain_model(2, 3);
  m.proto().mutable_opset_import(0)->set_version(12);  // Relu resolves to version 6; ortkern's covers 13..14
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.claim", "all");
  Ephost::Session s(*env_, m.save(models_), options);
  auto nodes = nodes_of(s);
  EXPECT_EQ(nodes["add"]["provider"], "ortkern");  // Add-7 is in 7..14
  EXPECT_EQ(nodes["relu"]["provider"], "cpu");
  const std::string relu = refusal(s, "relu");
  EXPECT_NE(relu.find("its kernels for Relu cover since-versions 13 to 14, and the node's operator is version 6"),
            std::string::npos)
      << relu;
  ephost_test::expect_chain_output(s, 2, 3);
}

// A plugin the user did not ask for that cannot be created costs its own nodes, never the session: the
// selection report says why it was skipped.
TEST_F(OrtKernelEp, AnEpWithNeitherCompileNorARegistryIsSkippedSayingSo) {
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.registry", "none");
  Ephost::Session s(*env_, ephost_test::chain_model(2, 3).save(models_), options);
  EXPECT_EQ(nodes_of(s)["add"]["provider"], "cpu");
  const json report = json::parse(s.partition_report_json());
  std::string reason;
  for (const auto& c : report["selection"]["candidates"])
    if (c["provider"].get<std::string>().rfind("ortkern", 0) == 0) reason = c["reason"];  // "ortkern:0"
  EXPECT_NE(reason.find("skipped: its provider could not be created"), std::string::npos) << reason;
  EXPECT_NE(reason.find("neither Compile (API 23) nor a kernel registry (GetKernelRegistry, API 24)"),
            std::string::npos)
      << reason;
  ephost_test::expect_chain_output(s, 2, 3);
}

TEST(OrtKernelEpBroken, AKernelCreateFunctionThatFailsFailsTheSessionNamingIt) {
  TempDir plugins, models;
  ephost_test::install_ort_plugin(plugins, "kernel_create_fails");
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{plugins.path()});
  try {
    Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models));
    ADD_FAILURE() << "the session should fail";
  } catch (const Ephost::Exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("provider 'ortkern' kernel create function (KernelRegistry_AddKernel) for node 'relu' (Relu)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("ortkern refuses to create its Relu kernel (a broken variant)"), std::string::npos) << what;
  }
}

// ---- pre-packed weights ----

// mm1 = x·W, mm2 = z·W (another node, the same weight), mm3 = x·V (another weight), mm4 = x·x' (B not
// constant: ortkern leaves it to the CPU plugin).
ModelBuilder prepack_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).input("z", onnx::TensorProto::FLOAT, {2, 3});
  m.input("t", onnx::TensorProto::FLOAT, {3, 2});
  for (const char* y : {"y1", "y2", "y3"}) m.output(y, onnx::TensorProto::FLOAT, {2, 4});
  m.output("y4", onnx::TensorProto::FLOAT, {2, 2});
  m.initializer("W", {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  m.initializer("V", {3, 4}, {-1, 0.5f, 0, 2, 1, 1, -3, 0.25f, 2, -2, 4, 1});
  m.node("MatMul", {"x", "W"}, {"y1"}, "mm1");
  m.node("MatMul", {"z", "W"}, {"y2"}, "mm2");
  m.node("MatMul", {"x", "V"}, {"y3"}, "mm3");
  m.node("MatMul", {"x", "t"}, {"y4"}, "mm4");
  return m;
}

std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> y(static_cast<size_t>(m * n), 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) y[i * n + j] += a[i * k + p] * b[p * n + j];
  return y;
}

void expect_prepack_outputs(const Ephost::Session& s) {
  std::vector<float> x = {1, -2, 3, 0.5f, 4, -1}, z = {2, 0, -1, 3, 1, 1}, t = {1, 2, 3, 4, 5, 6};
  const std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> v = {-1, 0.5f, 0, 2, 1, 1, -3, 0.25f, 2, -2, 4, 1};
  auto out = s.run({"x", "z", "t"},
                   {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, z.data(), z.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {3, 2}, t.data(), t.size())},
                   {"y1", "y2", "y3", "y4"});
  ASSERT_EQ(out.size(), 4u);
  const std::vector<std::vector<float>> expected = {matmul(x, w, 2, 3, 4), matmul(z, w, 2, 3, 4),
                                                    matmul(x, v, 2, 3, 4), matmul(x, t, 2, 3, 2)};
  for (size_t o = 0; o < 4; ++o) {
    const auto y = out[o].to_vector<float>();
    ASSERT_EQ(y.size(), expected[o].size()) << o;
    for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected[o][i]) << "output " << o << " element " << i;
  }
}

// The prepack log's lines: "prepack node=<n> input=<i> cache=<0|1>" and "shared node=<n> input=<i>
// buffer=<address>", in order.
std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// node -> the address its SetSharedPrePackedWeight received.
std::map<std::string, std::string> shared_buffers(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> out;
  for (const std::string& line : lines) {
    if (line.rfind("shared node=", 0) != 0) continue;
    const std::string node = line.substr(12, line.find(' ', 12) - 12);
    EXPECT_EQ(out.count(node), 0u) << "SetSharedPrePackedWeight called twice for " << node;
    out[node] = line.substr(line.find("buffer=") + 7);
  }
  return out;
}

TEST_F(OrtKernelEp, ConstantWeightsArePrePackedOnceAndEqualWeightsShared) {
  const std::string log = models_.file("prepack.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.prepack_log", log);
  Ephost::Session s(*env_, prepack_model().save(models_), options);
  auto nodes = nodes_of(s);
  for (const char* n : {"mm1", "mm2", "mm3"}) EXPECT_EQ(nodes[n]["provider"], "ortkern") << n;
  EXPECT_EQ(nodes["mm4"]["provider"], "cpu");  // B is an input: ortkern claims only constant 2-D weights
  const std::vector<std::string> lines = lines_of(log);
  // Offered once per kernel and constant input (x, z are not constant), with a cache to share through.
  std::vector<std::string> offers;
  for (const std::string& line : lines)
    if (line.rfind("prepack ", 0) == 0) offers.push_back(line);
  std::sort(offers.begin(), offers.end());
  EXPECT_EQ(offers, (std::vector<std::string>{"prepack node=mm1 input=1 cache=1", "prepack node=mm2 input=1 cache=1",
                                              "prepack node=mm3 input=1 cache=1"}));
  const auto shared = shared_buffers(lines);
  ASSERT_EQ(shared.size(), 3u) << read_text(log);
  EXPECT_EQ(shared.at("mm1"), shared.at("mm2"));  // W packed twice, kept once
  EXPECT_NE(shared.at("mm1"), shared.at("mm3"));
  // PrePack's is_packed for every kernel reading them, but the CPU plugin (mm4's) read W and V in its
  // get_capability and never said it was done with them: it may hold a view, so they stay.
  // (ConstantWeightsPrePackedByEveryReaderAreFreed: without it they go.)
  const auto freed = nlohmann::json::parse(s.partition_report_json())["freed_initializers"];
  EXPECT_EQ(freed["count"], 0) << freed.dump();
  expect_prepack_outputs(s);  // computed from the packed copies
  expect_prepack_outputs(s);
  EXPECT_EQ(lines_of(log).size(), lines.size());  // packing is done when the session is made, not per run

  // Another session of the same weights, alive at the same time: the same packed copy.
  const std::string log2 = models_.file("prepack2.txt");
  Ephost::SessionOptions options2;
  options2.add_config("ep.ortkern.prepack_log", log2);
  Ephost::Session s2(*env_, prepack_model().save(models_), options2);
  const auto shared2 = shared_buffers(lines_of(log2));
  ASSERT_EQ(shared2.size(), 3u);
  EXPECT_EQ(shared2.at("mm1"), shared.at("mm1"));
  EXPECT_EQ(shared2.at("mm3"), shared.at("mm3"));
  expect_prepack_outputs(s2);
}

TEST_F(OrtKernelEp, WithoutSharingEachKernelKeepsItsOwnPackedWeight) {
  const std::string log = models_.file("prepack.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.prepack_log", log).add_config("ep.ortkern.share_prepacked_weights", "0");
  Ephost::Session s(*env_, prepack_model().save(models_), options);
  std::vector<std::string> lines = lines_of(log);
  std::sort(lines.begin(), lines.end());
  // No cache (ONNX Runtime's non-sharing mode): the kernels pack and keep their copies; none is shared.
  EXPECT_EQ(lines, (std::vector<std::string>{"prepack node=mm1 input=1 cache=0", "prepack node=mm2 input=1 cache=0",
                                             "prepack node=mm3 input=1 cache=0"}));
  expect_prepack_outputs(s);
}

TEST_F(OrtKernelEp, ConstantWeightsPrePackedByEveryReaderAreFreed) {
  // PrePack's is_packed, for every kernel reading them and no other provider: W and V are freed
  // (plugin ABI 5's value_initializer_done, for the adapter's kernels), as ONNX Runtime frees them.
  ModelBuilder m = prepack_model();
  auto* graph = m.proto().mutable_graph();
  graph->mutable_node()->RemoveLast();  // mm4 (the CPU plugin's)
  graph->mutable_output()->RemoveLast();
  Ephost::SessionOptions options;
  options.add_config("session.disable_cpu_ep_fallback", "1");
  Ephost::Session s(*env_, m.save(models_), options);
  auto nodes = nodes_of(s);
  for (const char* n : {"mm1", "mm2", "mm3"}) ASSERT_EQ(nodes[n]["provider"], "ortkern") << n;
  const auto freed = nlohmann::json::parse(s.partition_report_json())["freed_initializers"];
  EXPECT_EQ(freed["count"], 2) << freed.dump();
  EXPECT_EQ(freed["bytes"], 2 * 12 * sizeof(float)) << freed.dump();
  std::vector<float> x = {1, -2, 0.5f, 3, 0.25f, -1}, z = {2, 0, -1, 1, 1, 0.5f};
  const std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> v = {-1, 0.5f, 0, 2, 1, 1, -3, 0.25f, 2, -2, 4, 1};
  std::vector<float> t(6, 1.0f);  // read by nothing now (mm4 is gone), fed all the same
  auto out = s.run({"x", "z", "t"},
                   {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, z.data(), z.size()),
                    Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {3, 2}, t.data(), t.size())},
                   {"y1", "y2", "y3"});
  const std::vector<std::vector<float>> want = {matmul(x, w, 2, 3, 4), matmul(z, w, 2, 3, 4), matmul(x, v, 2, 3, 4)};
  for (size_t i = 0; i < want.size(); ++i) {
    const std::vector<float> got = out.at(i).to_vector<float>();
    ASSERT_EQ(got.size(), want[i].size()) << i;
    for (size_t j = 0; j < got.size(); ++j) EXPECT_FLOAT_EQ(got[j], want[i][j]) << "y" << i + 1 << " element " << j;
  }
  EXPECT_EQ(nlohmann::json::parse(s.partition_report_json())["freed_initializers"]["read_back"], 0);
}

TEST_F(OrtKernelEp, DisablePrepackingLeavesTheWeightsToCompute) {
  const std::string log = models_.file("prepack.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.prepack_log", log).add_config("ep.ortkern.disable_prepacking", "1");
  Ephost::Session s(*env_, prepack_model().save(models_), options);
  EXPECT_EQ(nodes_of(s)["mm1"]["provider"], "ortkern");
  EXPECT_TRUE(lines_of(log).empty()) << read_text(log);  // PrePackWeight never called
  EXPECT_EQ(nlohmann::json::parse(s.partition_report_json())["freed_initializers"]["count"], 0)
      << "the kernels read their weights in Compute: nothing may be freed";
  expect_prepack_outputs(s);  // B read from the input in Compute
}

}  // namespace

namespace {

// x -> Add(x, x) = a -> Relu(a) = r -> Identity(r) = i -> Add(i, r) = s -> Identity(s) = j -> LeakyRelu(j) = y.
// Relu (MayInplace) is a's last reader: it may write over a. The first Identity (Alias) reads r, which
// Add reads later: its output needs a buffer of its own holding r's bytes. The second Identity is s's
// last reader: its output is s's buffer. y is a graph output: never anyone's buffer. The sessions run with
// graph optimizations off, which would remove the Identity nodes (noop elimination).
ModelBuilder alias_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT, {2, 3});
  m.node("Add", {"x", "x"}, {"a"}, "double");
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("Identity", {"r"}, {"i"}, "copy_lives_on");
  m.node("Add", {"i", "r"}, {"s"}, "sum");
  m.node("Identity", {"s"}, {"j"}, "copy_dies");
  ephost_test::attr_float(m.node("LeakyRelu", {"j"}, {"y"}, "leaky"), "alpha", 0.5f);
  return m;
}

// node -> (input 0's buffer, output 0's buffer) of each Compute, in order, from the compute log.
std::map<std::string, std::vector<std::pair<std::string, std::string>>> buffers_by_node(const std::string& log) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  for (const std::string& line : lines_of(log)) {
    const size_t node = line.find("node=") + 5, in = line.find(" in="), o = line.find(" out=");
    out[line.substr(node, in - node)].emplace_back(line.substr(in + 4, o - in - 4), line.substr(o + 5));
  }
  return out;
}

void expect_alias_outputs(const Ephost::Session& s) {
  std::vector<float> x = {-2.0f, 0.5f, 1.0f, -0.25f, 3.0f, 0.0f};
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size())}, {"y"});
  const std::vector<float> y = out[0].to_vector<float>();
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], 2.0f * std::max(2.0f * x[i], 0.0f)) << i;
}

TEST_F(OrtKernelEp, AliasAndMayInplaceOutputsTakeTheirDyingInputsBuffer) {
  const std::string log = models_.file("compute.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.compute_log", log).add_config("session.graph_optimization_level", "0");
  Ephost::Session s(*env_, alias_model().save(models_), options);
  const auto nodes = nodes_of(s);
  for (const char* n : {"double", "relu", "copy_lives_on", "sum", "copy_dies", "leaky"})
    EXPECT_EQ(nodes.at(n)["provider"], "ortkern") << n;
  // The first run places buffers by the allocation plan, the later ones by the memory pattern it recorded.
  for (int run = 0; run < 3; ++run) expect_alias_outputs(s);
  auto buffers = buffers_by_node(log);
  for (const char* n : {"relu", "copy_lives_on", "copy_dies", "leaky"}) ASSERT_EQ(buffers[n].size(), 3u) << n;
  for (size_t run = 0; run < 3; ++run) {
    EXPECT_EQ(buffers["relu"][run].first, buffers["relu"][run].second) << "run " << run << ": Relu in place";
    EXPECT_NE(buffers["copy_lives_on"][run].first, buffers["copy_lives_on"][run].second)
        << "run " << run << ": r is read later, so Identity's output cannot be r's buffer";
    EXPECT_EQ(buffers["copy_dies"][run].first, buffers["copy_dies"][run].second) << "run " << run;
    EXPECT_NE(buffers["leaky"][run].first, buffers["leaky"][run].second) << "run " << run << ": a graph output";
  }
}

TEST_F(OrtKernelEp, WithoutMemoryReuseAliasOutputsStillHoldTheirInputs) {
  const std::string log = models_.file("compute.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.compute_log", log).add_config("session.enable_mem_reuse", "0");
  options.add_config("session.graph_optimization_level", "0");
  Ephost::Session s(*env_, alias_model().save(models_), options);
  expect_alias_outputs(s);
  auto buffers = buffers_by_node(log);
  for (const char* n : {"relu", "copy_lives_on", "copy_dies"}) {
    ASSERT_EQ(buffers[n].size(), 1u) << n;
    EXPECT_NE(buffers[n][0].first, buffers[n][0].second) << n << ": no reuse asked, none done";
  }
}

}  // namespace
