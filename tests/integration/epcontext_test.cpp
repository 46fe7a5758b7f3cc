// The EPContext cache end to end, through the C API and the example compiling plugin (built twice:
// SDK 1.0.0 and 2.0.0): generation in both embed modes from a path and from a buffer, file names and
// attributes, the node-name prefix, external initializers, reload with identical outputs, several
// main contexts, weight sharing across two and three models, contexts that do not fit (other SDK
// version, truncated or bit-flipped binary, `..` path) rejected with INVALID_GRAPH and run on the CPU
// plugin instead, and the strict option that fails instead.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;
namespace fs = boost::filesystem;

std::vector<float> pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// x[1,3,8,8] -> Conv(w1) -> Relu -> Sigmoid -> Conv(w2_<variant>) -> Add(bias) -> y[1,4,8,8].
// With ep.example.claim=Conv,Relu,Add the Sigmoid goes to the CPU plugin and the example plugin
// compiles two partitions. Every variant shares w1 (the first convolution), so weight sharing has
// something to deduplicate; w2 differs per variant.
ModelBuilder small_model(int variant = 0) {
  ModelBuilder m(13, "net");
  m.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y", onnx::TensorProto::FLOAT, {1, 4, 8, 8});
  m.initializer("w1", {16, 3, 3, 3}, pattern(16 * 27, 0.3f, 0.0f));
  m.initializer("w2", {4, 16, 3, 3}, pattern(4 * 16 * 9, 0.2f, 1.0f + static_cast<float>(variant)));
  m.initializer("bias", {1, 4, 1, 1}, {0.1f, -0.2f, 0.3f, 0.05f * static_cast<float>(variant)});
  set_ints(m.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  m.node("Sigmoid", {"r1"}, {"s1"}, "sigmoid");
  set_ints(m.node("Conv", {"s1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "bias"}, {"y"}, "add");
  return m;
}

std::vector<float> input_x() { return pattern(3 * 8 * 8, 1.0f, 0.5f); }

std::vector<float> run(const Ephost::Session& s) {
  std::vector<float> x = input_x();
  auto out = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 3, 8, 8}, x.data(), x.size())}, {"y"});
  return out[0].to_vector<float>();
}

onnx::ModelProto read_model(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  return m;
}

void write_model(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  m.SerializeToOstream(&out);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<const onnx::NodeProto*> context_nodes(const onnx::ModelProto& m) {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "EPContext") out.push_back(&n);
  return out;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::string attr_s(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  return a ? a->s() : "<absent>";
}
int64_t attr_i(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  return a ? a->i() : -999;
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// provider of every main-graph node, from the partition report.
std::map<std::string, std::string> providers_of(const Ephost::Session& s) {
  std::map<std::string, std::string> out;
  const json report = json::parse(s.partition_report_json());
  for (const auto& n : report["graphs"][0]["nodes"]) out[n["node"].get<std::string>()] = n["provider"].get<std::string>();
  return out;
}

class EpContext : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_EXAMPLE_PLUGIN_DIR});
    sdk2_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR,
                                          std::vector<std::string>{EPHOST_EXAMPLE_SDK2_PLUGIN_DIR});
  }

  // Options that compile `model` into a ctx model; the example plugin claims Conv, Relu and Add.
  static Ephost::SessionOptions compile_options(const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    Ephost::SessionOptions o;
    o.add_config("ep.context_enable", "1").add_config("ep.example.claim", "Conv,Relu,Add");
    for (const auto& kv : extra) o.add_config(kv.first, kv.second);
    return o;
  }
  static Ephost::SessionOptions load_options(const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    Ephost::SessionOptions o;
    o.add_config("ep.example.claim", "Conv,Relu,Add");
    for (const auto& kv : extra) o.add_config(kv.first, kv.second);
    return o;
  }

  // The CPU plugin's answer for the uncompiled model.
  std::vector<float> cpu_reference(const std::string& model) {
    Ephost::SessionOptions o;
    o.append_provider("cpu");
    return run(Ephost::Session(*env_, model, o));
  }

  // Compiles small_model() in dir_ and returns the ctx model path.
  std::string compile(const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    std::string model = small_model().save(dir_);
    Ephost::Session s(*env_, model, compile_options(extra));
    return dir_.file("model_ctx.onnx");
  }

  static void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << i;
  }

  // The report of the only EPContext node of a loaded model that was rejected.
  static json rejected(const Ephost::Session& s) {
    json report = json::parse(s.ep_context_report_json());
    for (const auto& d : report)
      if (!d["loaded"].get<bool>()) return d;
    return json();
  }

  std::unique_ptr<Ephost::Env> env_, sdk2_;
  TempDir dir_;
};

TEST_F(EpContext, GeneratesCtxModelAndOneBinaryPerPluginBesideTheModel) {
  std::string ctx = compile();
  EXPECT_EQ(files_in(dir_.path()), (std::set<std::string>{"model.onnx", "model_ctx.onnx", "model_example.bin"}));
  onnx::ModelProto m = read_model(ctx);
  EXPECT_NO_THROW(onnx::checker::check_model(m));  // the host registered the EPContext schema
  auto nodes = context_nodes(m);
  ASSERT_EQ(nodes.size(), 2u);  // Conv+Relu, and Conv+Add after the CPU plugin's Sigmoid
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& n = *nodes[i];
    EXPECT_EQ(n.domain(), "com.microsoft");
    EXPECT_EQ(attr_i(n, "main_context"), i == 0 ? 1 : 0);  // one binary: the first node holds it
    EXPECT_EQ(attr_i(n, "embed_mode"), 0);
    EXPECT_EQ(attr_s(n, "ep_cache_context"), i == 0 ? "model_example.bin" : "");
    EXPECT_EQ(attr_s(n, "source"), "EXAMPLE");
    EXPECT_EQ(attr_s(n, "ep_sdk_version"), "1.0.0");
    EXPECT_FALSE(attr_s(n, "hardware_architecture").empty());
    EXPECT_EQ(attr_s(n, "onnx_model_filename"), "model.onnx");
    EXPECT_EQ(attr_s(n, "partition_name"), n.name());
    EXPECT_EQ(n.name().rfind("model_example_", 0), 0u) << n.name();
  }
  // The weights live in the binary: the ctx model keeps no initializer for the compiled nodes.
  EXPECT_EQ(m.graph().initializer_size(), 0);
  bool has_domain = false;
  for (const auto& op : m.opset_import()) has_domain |= op.domain() == "com.microsoft" && op.version() == 1;
  EXPECT_TRUE(has_domain);
  bool has_compat = false;
  for (const auto& kv : m.metadata_props())
    if (kv.key() == "ep_compatibility_info.example") {
      has_compat = true;
      EXPECT_NE(kv.value().find("sdk_version=1.0.0"), std::string::npos) << kv.value();
    }
  EXPECT_TRUE(has_compat);
  // The Sigmoid the example plugin does not claim stays an ordinary node.
  bool sigmoid = false;
  for (const auto& n : m.graph().node()) sigmoid |= n.op_type() == "Sigmoid";
  EXPECT_TRUE(sigmoid);
}

TEST_F(EpContext, ReloadGivesTheUncompiledModelsOutputsWithoutCompiling) {
  std::string model = small_model().save(dir_);
  std::vector<float> fresh;
  {
    Ephost::Session s(*env_, model, compile_options());
    fresh = run(s);
  }
  Ephost::Session loaded(*env_, dir_.file("model_ctx.onnx"), load_options());
  EXPECT_EQ(run(loaded), fresh);  // the same program: identical, not merely close
  expect_close(run(loaded), cpu_reference(model));
  json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 2u);
  for (const auto& d : report) {
    EXPECT_TRUE(d["loaded"].get<bool>()) << d.dump();
    EXPECT_EQ(d["verdict"], "optimal");
    EXPECT_EQ(d["provider"], "example");
  }
  auto where = providers_of(loaded);
  EXPECT_EQ(where["sigmoid"], "cpu");
}

TEST_F(EpContext, EmbedModeOnePutsEachPartitionInItsOwnNode) {
  std::string model = small_model().save(dir_);
  { Ephost::Session s(*env_, model, compile_options({{"ep.context_embed_mode", "1"}})); }
  EXPECT_EQ(files_in(dir_.path()), (std::set<std::string>{"model.onnx", "model_ctx.onnx"}));
  onnx::ModelProto m = read_model(dir_.file("model_ctx.onnx"));
  auto nodes = context_nodes(m);
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto* n : nodes) {
    // Two main contexts in one model, each with its payload (ONNX Runtime #31977 left the second empty).
    EXPECT_EQ(attr_i(*n, "main_context"), 1);
    EXPECT_EQ(attr_i(*n, "embed_mode"), 1);
    EXPECT_GT(attr_s(*n, "ep_cache_context").size(), 1000u);
  }
  Ephost::Session loaded(*env_, dir_.file("model_ctx.onnx"), load_options());
  expect_close(run(loaded), cpu_reference(model));
  for (const auto& d : json::parse(loaded.ep_context_report_json())) EXPECT_TRUE(d["loaded"].get<bool>());
}

TEST_F(EpContext, MergedModelWithTwoMainContextsFromTwoBinariesLoads) {
  // Two ctx models of the same network compiled with different prefixes, then chained into one model:
  // two main contexts, each with its own binary, as the seed's prefix option is meant for.
  std::string model = small_model().save(dir_);
  { Ephost::Session s(*env_, model, compile_options({{"ep.context_node_name_prefix", "a_"}, {"ep.context_file_path", dir_.file("a_ctx.onnx")}})); }
  // The second compile writes the same binary name: put it in a subfolder (subfolders are allowed).
  fs::create_directories(dir_.file("b"));
  fs::copy_file(model, dir_.file("b/model.onnx"));
  { Ephost::Session s(*env_, dir_.file("b/model.onnx"), compile_options({{"ep.context_node_name_prefix", "b_"}})); }
  onnx::ModelProto a = read_model(dir_.file("a_ctx.onnx"));
  onnx::ModelProto b = read_model(dir_.file("b/model_ctx.onnx"));
  // Side by side: both read x; a's output is renamed y_a.
  onnx::ModelProto merged = a;
  auto* g = merged.mutable_graph();
  g->mutable_output(0)->set_name("y_a");
  for (auto& n : *g->mutable_node())
    for (auto& o : *n.mutable_output())
      if (o == "y") o = "y_a";
  for (auto n : b.graph().node()) {
    if (n.op_type() != "EPContext") n.set_name("b/" + n.name());
    for (auto& i : *n.mutable_input()) i = i == "x" ? "x" : "b/" + i;
    for (auto& o : *n.mutable_output()) o = o == "y" ? "y" : "b/" + o;
    for (auto& at : *n.mutable_attribute())
      if (at.name() == "ep_cache_context" && !at.s().empty()) at.set_s("b/" + at.s());
    *g->add_node() = n;
  }
  for (auto vi : b.graph().value_info()) {
    vi.set_name("b/" + vi.name());
    *g->add_value_info() = vi;
  }
  auto* out = g->add_output();
  *out = b.graph().output(0);
  std::string path = dir_.file("merged_ctx.onnx");
  write_model(merged, path);
  Ephost::Session loaded(*env_, path, load_options());
  json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 4u);
  for (const auto& d : report) EXPECT_TRUE(d["loaded"].get<bool>()) << d.dump();
  std::vector<float> x = input_x();
  auto y = loaded.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 3, 8, 8}, x.data(), x.size())},
                      {"y_a", "y"});
  // Both halves are the network on x.
  std::vector<float> want = cpu_reference(model);
  expect_close(y[0].to_vector<float>(), want);
  expect_close(y[1].to_vector<float>(), want);
}

TEST_F(EpContext, PrefixNamesNodesPartitionsAndGraph) {
  std::string ctx = compile({{"ep.context_node_name_prefix", "m1_"}});
  onnx::ModelProto m = read_model(ctx);
  EXPECT_EQ(m.graph().name(), "m1_net");
  for (const auto* n : context_nodes(m)) {
    EXPECT_EQ(n->name().rfind("m1_", 0), 0u) << n->name();
    EXPECT_EQ(attr_s(*n, "partition_name"), n->name());
  }
}

TEST_F(EpContext, FromABufferNeedsContextFilePath) {
  std::string bytes = small_model().bytes();
  try {
    Ephost::Session s(*env_, bytes.data(), bytes.size(), compile_options());
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("ep.context_file_path"), std::string::npos) << e.message();
  }
  std::string ctx = dir_.file("sub/net_ctx.onnx");
  { Ephost::Session s(*env_, bytes.data(), bytes.size(), compile_options({{"ep.context_file_path", ctx}})); }
  EXPECT_TRUE(fs::exists(ctx));
  EXPECT_TRUE(fs::exists(dir_.file("sub/net_example.bin")));  // named after the ctx model, minus "_ctx"
  EXPECT_EQ(attr_s(*context_nodes(read_model(ctx))[0], "onnx_model_filename"), "net.onnx");

  // Loading from a buffer: the binary is found through ep.context_file_path's folder.
  std::string ctx_bytes = read_file(ctx);
  Ephost::Session loaded(*env_, ctx_bytes.data(), ctx_bytes.size(), load_options({{"ep.context_file_path", ctx}}));
  for (const auto& d : json::parse(loaded.ep_context_report_json())) EXPECT_TRUE(d["loaded"].get<bool>()) << d.dump();
  expect_close(run(loaded), cpu_reference(small_model().save(dir_)));
  // Without it the host cannot know where the binary is, and says so.
  try {
    Ephost::Session s(*env_, ctx_bytes.data(), ctx_bytes.size(), load_options());
    FAIL() << "expected a failure";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("ep.context_file_path"), std::string::npos) << e.message();
  }
}

TEST_F(EpContext, RefusesToOverwriteAnExistingCtxModelUnlessAsked) {
  std::string ctx = compile();
  std::string before = read_file(ctx);
  try {
    Ephost::Session s(*env_, dir_.file("model.onnx"), compile_options());
    FAIL() << "expected a failure";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("exists already"), std::string::npos) << e.message();
  }
  EXPECT_EQ(read_file(ctx), before);
  EXPECT_NO_THROW(Ephost::Session(*env_, dir_.file("model.onnx"), compile_options({{"ep.context_overwrite", "1"}})));
  // No temporary file is left behind.
  EXPECT_EQ(files_in(dir_.path()), (std::set<std::string>{"model.onnx", "model_ctx.onnx", "model_example.bin"}));
}

TEST_F(EpContext, ExternalInitializersGoToTheirOwnFileNeverTheSourcesDataFile) {
  // The source keeps w1 in an external data file; with claim=Conv,Relu the Add (and its bias) stays
  // on the CPU plugin, so the ctx model still has an initializer of its own.
  ModelBuilder b = small_model();
  onnx::TensorProto& bias = *b.proto().mutable_graph()->mutable_initializer(2);
  std::string raw;
  for (float f : bias.float_data()) raw.append(reinterpret_cast<const char*>(&f), sizeof f);
  bias.clear_float_data();
  bias.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = bias.add_external_data();
  loc->set_key("location");
  loc->set_value("source_weights.bin");
  std::ofstream(dir_.file("source_weights.bin"), std::ios::binary) << raw;
  std::string model = b.save(dir_);
  std::vector<float> want = cpu_reference(model);

  auto only_add_on_cpu = [&](std::vector<std::pair<std::string, std::string>> extra) {
    extra.emplace_back("ep.context_overwrite", "1");
    Ephost::SessionOptions o = compile_options(extra);
    o.add_config("ep.example.claim", "Conv,Relu");
    Ephost::Session s(*env_, model, o);
  };
  only_add_on_cpu({{"ep.context_model_external_initializers_file_name", "model_ctx_weights.bin"}});
  onnx::ModelProto m = read_model(dir_.file("model_ctx.onnx"));
  ASSERT_EQ(m.graph().initializer_size(), 1);
  const auto& t = m.graph().initializer(0);
  EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(t.external_data(0).value(), "model_ctx_weights.bin");
  EXPECT_TRUE(fs::exists(dir_.file("model_ctx_weights.bin")));
  // The ctx model runs without the source's data file.
  fs::rename(dir_.file("source_weights.bin"), dir_.file("moved_away.bin"));
  {
    Ephost::SessionOptions o = load_options();
    o.add_config("ep.example.claim", "Conv,Relu");
    expect_close(run(Ephost::Session(*env_, dir_.file("model_ctx.onnx"), o)), want);
  }
  fs::rename(dir_.file("moved_away.bin"), dir_.file("source_weights.bin"));

  // Without the option every initializer is embedded.
  only_add_on_cpu({});
  onnx::ModelProto e = read_model(dir_.file("model_ctx.onnx"));
  ASSERT_EQ(e.graph().initializer_size(), 1);
  EXPECT_NE(e.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(e.graph().initializer(0).raw_data().size(), 16u);
}

TEST_F(EpContext, ContextFromTheOtherSdkVersionIsRejectedAndRunsOnCpu) {
  std::string model = small_model().save(dir_);
  { Ephost::Session s(*sdk2_, model, compile_options()); }  // compiled by SDK 2.0.0
  Ephost::Session loaded(*env_, dir_.file("model_ctx.onnx"), load_options());  // loaded by SDK 1.0.0
  json d = rejected(loaded);
  ASSERT_FALSE(d.is_null()) << loaded.ep_context_report_json();
  EXPECT_EQ(d["status"], "INVALID_GRAPH");
  EXPECT_EQ(d["verdict"], "unsupported");
  EXPECT_NE(d["reason"].get<std::string>().find("ep_sdk_version"), std::string::npos) << d.dump();
  EXPECT_TRUE(d["fell_back"].get<bool>());
  // The original nodes ran on the providers after the one that rejected: the CPU plugin.
  for (const auto& [node, provider] : providers_of(loaded)) EXPECT_EQ(provider, "cpu") << node;
  expect_close(run(loaded), cpu_reference(model));
  // The source nodes are spliced into the session's IR and typed where they go in: one IR build and one
  // whole-model shape inference, the ctx model's load (model/creation_counts.h); the source model is
  // checked but not inferred.
  const json creation = json::parse(loaded.partition_report_json())["creation"];
  EXPECT_EQ(creation["ir_builds"].get<size_t>(), 1u) << creation.dump();
  EXPECT_EQ(creation["shape_inferences"].get<size_t>(), 1u) << creation.dump();
}

TEST_F(EpContext, ContextFromAnOlderMinorVersionLoadsButAsksForARecompile) {
  std::string model = small_model().save(dir_);
  {
    Ephost::Env sdk1_1(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_EXAMPLE_SDK1_1_PLUGIN_DIR});
    Ephost::Session s(sdk1_1, model, compile_options());  // compiled by SDK 1.1.0
  }
  Ephost::Session loaded(*env_, dir_.file("model_ctx.onnx"), load_options());  // run by SDK 1.0.0
  for (const auto& d : json::parse(loaded.ep_context_report_json())) {
    EXPECT_TRUE(d["loaded"].get<bool>()) << d.dump();
    EXPECT_EQ(d["verdict"], "prefer_recompile");
    EXPECT_NE(d["reason"].get<std::string>().find("1.1.0"), std::string::npos) << d.dump();
  }
  expect_close(run(loaded), cpu_reference(model));
  try {
    Ephost::Session s(*env_, dir_.file("model_ctx.onnx"),
                      load_options({{"session.fail_on_suboptimal_compiled_model", "1"}}));
    FAIL() << "expected a failure";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
    EXPECT_NE(e.message().find("fail_on_suboptimal_compiled_model"), std::string::npos) << e.message();
  }
}

TEST_F(EpContext, StrictOptionFailsWithInvalidGraphInsteadOfFallingBack) {
  std::string model = small_model().save(dir_);
  { Ephost::Session s(*sdk2_, model, compile_options()); }
  try {
    Ephost::Session s(*env_, dir_.file("model_ctx.onnx"), load_options({{"session.disable_ep_context_fallback", "1"}}));
    FAIL() << "expected INVALID_GRAPH";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
    EXPECT_NE(e.message().find("ep_sdk_version"), std::string::npos) << e.message();
  }
}

TEST_F(EpContext, TruncatedAndBitFlippedBinariesAreRejectedWithoutACrash) {
  std::string ctx = compile();
  std::string good = read_file(dir_.file("model_example.bin"));
  std::vector<float> want = cpu_reference(dir_.file("model.onnx"));
  struct Damage {
    std::string name, bytes, expect;
  };
  std::string flipped = good;
  flipped[flipped.size() - 100] ^= 0x10;  // inside the last weight
  std::vector<Damage> damages = {{"truncated", good.substr(0, good.size() / 2), "truncated"},
                                 {"bit-flipped", flipped, "checksum"},
                                 {"empty", "", "empty"},
                                 {"garbage", std::string(4096, 'x'), ""}};
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.name);
    std::ofstream(dir_.file("model_example.bin"), std::ios::binary | std::ios::trunc) << d.bytes;
    Ephost::Session loaded(*env_, ctx, load_options());
    json r = rejected(loaded);
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r["status"], "INVALID_GRAPH");
    if (!d.expect.empty()) {
      EXPECT_NE(r["reason"].get<std::string>().find(d.expect), std::string::npos) << r.dump();
    }
    expect_close(run(loaded), want);
    try {
      Ephost::Session s(*env_, ctx, load_options({{"session.disable_ep_context_fallback", "1"}}));
      FAIL() << "expected INVALID_GRAPH";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH) << e.message();
    }
  }
}

TEST_F(EpContext, PathsLeavingTheModelsFolderAreRejected) {
  std::string ctx = compile();
  for (std::string bad : {"../model_example.bin", "/etc/passwd"}) {
    SCOPED_TRACE(bad);
    onnx::ModelProto m = read_model(ctx);
    for (auto& n : *m.mutable_graph()->mutable_node())
      for (auto& a : *n.mutable_attribute())
        if (a.name() == "ep_cache_context" && !a.s().empty()) a.set_s(bad);
    write_model(m, dir_.file("bad_ctx.onnx"));
    try {
      Ephost::Session s(*env_, dir_.file("bad_ctx.onnx"), load_options({{"session.disable_ep_context_fallback", "1"}}));
      FAIL() << "expected INVALID_GRAPH";
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
      EXPECT_NE(e.message().find(bad), std::string::npos) << e.message();
    }
  }
}

TEST_F(EpContext, AMissingSourceModelMakesAnUnusableContextFatal) {
  std::string ctx = compile();
  std::ofstream(dir_.file("model_example.bin"), std::ios::binary | std::ios::trunc) << "broken";
  fs::remove(dir_.file("model.onnx"));
  try {
    Ephost::Session s(*env_, ctx, load_options());
    FAIL() << "expected INVALID_GRAPH";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
    EXPECT_NE(e.message().find("model.onnx"), std::string::npos) << e.message();
  }
}

class WeightSharing : public EpContext {
 protected:
  // Compiles `n` variants of the network as one weight-sharing group; returns the ctx model paths.
  std::vector<std::string> compile_group(int n) {
    std::vector<std::string> ctx;
    for (int i = 0; i < n; ++i) {
      std::string model = small_model(i).save(dir_, "m" + std::to_string(i + 1) + ".onnx");
      Ephost::SessionOptions o = compile_options({{"ep.share_ep_contexts", "1"}});
      if (i == n - 1) o.add_config("ep.stop_share_ep_contexts", "1");
      Ephost::Session s(*env_, model, o);
      ctx.push_back(dir_.file("m" + std::to_string(i + 1) + "_ctx.onnx"));
      // The binary appears only when the last session of the group is done.
      EXPECT_EQ(fs::exists(dir_.file("m1_example.bin")), i == n - 1);
    }
    return ctx;
  }
  // Size of the binary the model compiles into alone (no sharing), in a scratch folder.
  uint64_t alone_size(int variant) {
    TempDir scratch;
    std::string model = small_model(variant).save(scratch, "alone.onnx");
    Ephost::Session s(*env_, model, compile_options());
    return fs::file_size(scratch.file("alone_example.bin"));
  }
  Ephost::SessionOptions shared_load() { return load_options({{"ep.share_ep_contexts", "1"}}); }
};

TEST_F(WeightSharing, TwoModelsGiveThreeFilesAndStoreSharedWeightsOnce) {
  compile_group(2);
  std::set<std::string> files = files_in(dir_.path());
  EXPECT_EQ(files, (std::set<std::string>{"m1.onnx", "m2.onnx", "m1_ctx.onnx", "m2_ctx.onnx", "m1_example.bin"}));
  for (const char* ctx : {"m1_ctx.onnx", "m2_ctx.onnx"})
    EXPECT_EQ(attr_s(*context_nodes(read_model(dir_.file(ctx)))[0], "ep_cache_context"), "m1_example.bin");
  const uint64_t shared = fs::file_size(dir_.file("m1_example.bin"));
  const uint64_t w1_bytes = 16 * 27 * sizeof(float);
  EXPECT_LE(shared + w1_bytes, alone_size(0) + alone_size(1)) << "w1 must be stored once";
}

TEST_F(WeightSharing, SecondSessionTakesItsGraphWithoutReadingTheBinaryAgain) {
  std::vector<std::string> ctx = compile_group(2);
  std::vector<float> want1 = cpu_reference(dir_.file("m1.onnx")), want2 = cpu_reference(dir_.file("m2.onnx"));
  auto s1 = std::make_unique<Ephost::Session>(*env_, ctx[0], shared_load());
  // Only the first session reads the binary: remove it, and the second still loads its graph.
  fs::rename(dir_.file("m1_example.bin"), dir_.file("gone.bin"));
  auto s2 = std::make_unique<Ephost::Session>(*env_, ctx[1], shared_load());
  for (const auto& d : json::parse(s2->ep_context_report_json())) EXPECT_TRUE(d["loaded"].get<bool>()) << d.dump();
  expect_close(run(*s1), want1);
  expect_close(run(*s2), want2);
  // Destroyed in creation order (ONNX Runtime only recommends reverse order): the other keeps working.
  s1.reset();
  expect_close(run(*s2), want2);
  s2.reset();
}

TEST_F(WeightSharing, SessionsMayBeDestroyedInEitherOrder) {
  std::vector<std::string> ctx = compile_group(2);
  std::vector<float> want1 = cpu_reference(dir_.file("m1.onnx"));
  auto s1 = std::make_unique<Ephost::Session>(*env_, ctx[0], shared_load());
  auto s2 = std::make_unique<Ephost::Session>(*env_, ctx[1], shared_load());
  s2.reset();
  expect_close(run(*s1), want1);
}

TEST_F(WeightSharing, ThreeModelsGiveFourFiles) {
  std::vector<std::string> ctx = compile_group(3);
  EXPECT_EQ(files_in(dir_.path()).size(), 3u + 3u + 1u);  // sources, ctx models, one binary
  const uint64_t shared = fs::file_size(dir_.file("m1_example.bin"));
  const uint64_t w1_bytes = 16 * 27 * sizeof(float);
  EXPECT_LE(shared + 2 * w1_bytes, alone_size(0) + alone_size(1) + alone_size(2));
  std::vector<std::unique_ptr<Ephost::Session>> sessions;
  for (const auto& c : ctx) sessions.push_back(std::make_unique<Ephost::Session>(*env_, c, shared_load()));
  for (int i = 0; i < 3; ++i)
    expect_close(run(*sessions[static_cast<size_t>(i)]),
                 cpu_reference(dir_.file("m" + std::to_string(i + 1) + ".onnx")));
  sessions.erase(sessions.begin() + 1);  // the middle one first
  expect_close(run(*sessions[1]), cpu_reference(dir_.file("m3.onnx")));
}

TEST_F(WeightSharing, EmbedModeCannotShare) {
  std::string model = small_model().save(dir_);
  try {
    Ephost::Session s(*env_, model, compile_options({{"ep.share_ep_contexts", "1"}, {"ep.context_embed_mode", "1"}}));
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
  }
}

}  // namespace
