// EPContext resolution (host/epcontext/context_loading.h): resolve_contexts on ctx models that real
// sessions of the example EP wrote (SDK 1.0.0, 2.0.0 and 1.1.0 builds), with providers made straight
// from the plugin registry. A loadable context ends loaded by its provider; one its provider rejects
// (other SDK major version, corrupted program, corrupted binary, no context_load) gives a diagnostic
// with verdict and reason and, with fallback on, the source model's nodes in its place, kept from the
// provider that rejected it; the strict options throw INVALID_GRAPH instead.
#include <gtest/gtest.h>

#include "core/error.h"
#include "epcontext/context_loading.h"
#include "graph/graph.h"
#include "epcontext_fixture.h"

namespace {

using namespace epctx_test;
using ephost::ContextDiagnostic;
using ephost::ContextLoadSettings;
using ephost::ContextResolution;
using ephost::ContextShareRegistry;
using ephost_test::expect_error;

const std::vector<std::string> kPartitions{"model_example_0", "model_example_1"};
// The source nodes each partition stands for.
const std::map<std::string, size_t> kSourceNodes{{"conv1", 0}, {"relu1", 0}, {"conv2", 0}, {"add", 0}};

class Resolution : public ::testing::Test {
 protected:
  // conv_net saved as dir_/model.onnx and compiled by `env`'s example build: dir_/model_ctx.onnx and
  // dir_/model_example.bin. Returns the ctx model's path.
  std::string compile_with(ephost::Env& env) {
    const std::string model = write_model(conv_net(), dir_.file("model.onnx"));
    compile(env, model);
    return dir_.file("model_ctx.onnx");
  }
  std::unique_ptr<ephost::Model> load(const std::string& path) {
    return ephost::load_model_from_file(path, ephost::LoadOptions{});
  }
  // Resolves on the model's IR (built on first use, as the session builds it once), which the fallback edits.
  ContextResolution resolve(ephost::Model& model, const Providers& providers, const ContextLoadSettings& settings = {}) {
    return ephost::resolve_contexts(model, graph_of(model), providers, settings, registry_);
  }
  ephost::Graph& graph_of(const ephost::Model& model) {
    std::unique_ptr<ephost::Graph>& g = graphs_[&model];
    if (!g) g = ephost::build_graph_ir(model);
    return *g;
  }
  static std::vector<std::string> ir_node_names(const ephost::Graph& g) {
    std::vector<std::string> names;
    for (const auto& n : g.nodes) names.push_back(n->name);
    return names;
  }
  static size_t ir_context_nodes(const ephost::Graph& g) {
    size_t count = 0;
    for (const auto& n : g.nodes) count += n->op_type == "EPContext";
    return count;
  }
  // Rewrites every graph of the binary with `damage` applied to its bytes, in a valid container: the
  // host's checks pass, the plugin sees the damage.
  template <typename Damage>
  void damage_programs(Damage damage) {
    const std::string raw = read_file(dir_.file("model_example.bin"));
    ephost::ContextBinary bin =
        ephost::ContextBinary::parse(std::make_shared<const ephost::Bytes>(raw.begin(), raw.end()), "bin");
    ephost::ContextBinaryBuilder rebuilt;
    for (const std::string& name : bin.graph_names()) {
      ephost::Bytes program = bin.assemble(name);
      damage(program);
      rebuilt.add_graph(name, {program});
    }
    write_file(dir_.file("model_example.bin"), as_string(rebuilt.serialize()));
  }
  // The IR, not the proto, holds the fallback: source nodes in place of the contexts, typed where they
  // went in (the source model is not shape-inferred).
  void expect_fell_back(const ephost::Model& model) {
    const ephost::Graph& g = graph_of(model);
    EXPECT_EQ(ir_context_nodes(g), 0u);
    const std::vector<std::string> listed = ir_node_names(g);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()),
              (std::set<std::string>{"conv1", "relu1", "sigmoid", "conv2", "add"}));
    std::set<std::string> initializers;
    for (const ephost::Value* v : g.initializers) initializers.insert(v->name);
    EXPECT_EQ(initializers, (std::set<std::string>{"w1", "w2", "bias"}));
    for (const auto& n : g.nodes)
      for (const ephost::Value* out : n->outputs) {
        ASSERT_NE(out, nullptr);
        EXPECT_TRUE(out->type.is_tensor()) << out->name;
        EXPECT_EQ(out->type.elem_type, EPHOST_ELEMENT_FLOAT) << out->name;
        EXPECT_TRUE(out->type.has_shape) << out->name;
      }
    EXPECT_EQ(g.topological_order.size(), g.nodes.size());
  }

  TempDir dir_;
  ContextShareRegistry registry_;
  std::map<const ephost::Model*, std::unique_ptr<ephost::Graph>> graphs_;  // each model's IR
};

TEST_F(Resolution, ALoadableContextEndsLoadedByItsProvider) {
  auto model = load(compile_with(example_env()));
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  ContextResolution r = resolve(*model, providers);
  ASSERT_EQ(r.loaded.size(), 2u);
  for (const std::string& name : kPartitions) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(r.loaded.count(name));
    EXPECT_EQ(r.loaded.at(name).provider, 0u);
    ASSERT_NE(r.loaded.at(name).compute, nullptr);
    // A loaded unit has a compute function (the provider door refuses one without): a fused unit
    // named after its EPContext node.
    EXPECT_TRUE(r.loaded.at(name).compute->fused());
    EXPECT_EQ(r.loaded.at(name).compute->name(), name);
  }
  EXPECT_TRUE(r.excluded.empty());
  ASSERT_EQ(r.diagnostics.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ContextDiagnostic& d = r.diagnostics[i];
    EXPECT_EQ(d.node, kPartitions[i]);
    EXPECT_EQ(d.source, "EXAMPLE");
    EXPECT_EQ(d.provider, "example");
    EXPECT_EQ(d.verdict, "optimal");
    EXPECT_EQ(d.reason, "");
    EXPECT_TRUE(d.loaded);
    EXPECT_FALSE(d.fell_back);
    EXPECT_EQ(d.fallback_nodes, 0u);
  }
  // The model keeps its EPContext nodes.
  EXPECT_EQ(ir_node_names(graph_of(*model)), (std::vector<std::string>{"model_example_0", "sigmoid", "model_example_1"}));
  EXPECT_EQ(node_names(*model->proto), (std::vector<std::string>{"model_example_0", "sigmoid", "model_example_1"}));
}

TEST_F(Resolution, TheFirstProviderWithTheSourceKeyIsTheOneAsked) {
  auto model = load(compile_with(example_env()));
  Providers providers = providers_of(example_env(), {"cpu", "example"});
  ContextResolution r = resolve(*model, providers);
  ASSERT_EQ(r.loaded.size(), 2u);
  for (const auto& [name, loaded] : r.loaded) EXPECT_EQ(loaded.provider, 1u) << name;
}

TEST_F(Resolution, AContextFromAnotherSdkMajorVersionFallsBackToTheSourceNodes) {
  auto model = load(compile_with(example_sdk2_env()));
  Providers providers = providers_of(example_env(), {"example", "cpu"});  // SDK 1.0.0 refuses 2.0.0
  ContextResolution r = resolve(*model, providers);
  EXPECT_TRUE(r.loaded.empty());
  ASSERT_EQ(r.diagnostics.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const ContextDiagnostic& d = r.diagnostics[i];
    EXPECT_EQ(d.node, kPartitions[i]);
    EXPECT_EQ(d.provider, "example");
    EXPECT_EQ(d.verdict, "unsupported");
    EXPECT_EQ(d.reason, "ep_sdk_version 2.0.0 != 1.0.0: compiled by another major version of the SDK");
    EXPECT_FALSE(d.loaded);
    EXPECT_TRUE(d.fell_back);
    EXPECT_EQ(d.fallback_nodes, 2u);  // Conv+Relu, Conv+Add
  }
  expect_fell_back(*model);
  // The original nodes are kept from the provider that rejected their context (index 0); the Sigmoid,
  // never in a context, is not.
  EXPECT_EQ(r.excluded, kSourceNodes);
}

TEST_F(Resolution, ACorruptedProgramIsRejectedByThePluginInItsOwnWords) {
  const std::string ctx = compile_with(example_env());
  damage_programs([](ephost::Bytes& program) { program[program.size() - 3] ^= 0x01; });
  auto model = load(ctx);
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  ContextResolution r = resolve(*model, providers);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  for (const ContextDiagnostic& d : r.diagnostics) {
    SCOPED_TRACE(d.node);
    EXPECT_EQ(d.provider, "example");
    EXPECT_EQ(d.verdict, "unsupported");
    EXPECT_EQ(d.reason, "checksum: the program's bytes changed since it was written (corrupt blob)");
    EXPECT_TRUE(d.fell_back);
  }
  expect_fell_back(*model);
  EXPECT_EQ(r.excluded, kSourceNodes);
}

TEST_F(Resolution, ACorruptedBinaryIsUnreadableAndChargedToTheFirstCandidate) {
  const std::string ctx = compile_with(example_env());
  std::string bin = read_file(dir_.file("model_example.bin"));
  bin[bin.size() - 100] ^= 0x10;  // inside the last weight
  write_file(dir_.file("model_example.bin"), bin);
  auto model = load(ctx);
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  ContextResolution r = resolve(*model, providers);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  const std::string path = fs::weakly_canonical(dir_.path() / "model_example.bin").string();
  for (const ContextDiagnostic& d : r.diagnostics) {
    SCOPED_TRACE(d.node);
    EXPECT_EQ(d.provider, "example");
    EXPECT_EQ(d.verdict, "unreadable");
    EXPECT_NE(d.reason.find("context binary '" + path + "'"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("checksum"), std::string::npos) << d.reason;
    EXPECT_TRUE(d.fell_back);
  }
  expect_fell_back(*model);
  EXPECT_EQ(r.excluded, kSourceNodes);
}

TEST_F(Resolution, WithFallbackDisabledARejectedContextIsInvalidGraph) {
  auto model = load(compile_with(example_sdk2_env()));
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  ContextLoadSettings settings;
  settings.disable_fallback = true;
  expect_error([&] { resolve(*model, providers, settings); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'model_example_0' (source 'EXAMPLE', provider 'example') cannot be used",
                "ep_sdk_version 2.0.0 != 1.0.0", "session.disable_ep_context_fallback=1"});
  EXPECT_EQ(ir_context_nodes(graph_of(*model)), 2u);  // nothing was edited
  EXPECT_EQ(context_nodes(*model->proto).size(), 2u);
}

TEST_F(Resolution, NoProviderForTheSourceKeyIsNoProviderAndFallsBack) {
  auto model = load(compile_with(example_env()));
  Providers providers = providers_of(example_env(), {"cpu"});
  ContextResolution r = resolve(*model, providers);
  EXPECT_TRUE(r.loaded.empty());
  ASSERT_EQ(r.diagnostics.size(), 2u);
  for (const ContextDiagnostic& d : r.diagnostics) {
    SCOPED_TRACE(d.node);
    EXPECT_EQ(d.provider, "");
    EXPECT_EQ(d.verdict, "no_provider");
    EXPECT_EQ(d.reason, "no provider of this session loads contexts with source 'EXAMPLE' (providers: cpu)");
    EXPECT_TRUE(d.fell_back);
  }
  expect_fell_back(*model);
  EXPECT_TRUE(r.excluded.empty());  // no provider rejected anything: every provider may claim the nodes
  ContextLoadSettings strict;
  strict.disable_fallback = true;
  auto again = load(dir_.file("model_ctx.onnx"));
  expect_error([&] { resolve(*again, providers, strict); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'model_example_0' (source 'EXAMPLE') cannot be used", "no provider"});
}

TEST_F(Resolution, APreferRecompileVerdictLoadsButFailsWhenSuboptimalIsFatal) {
  const std::string ctx = compile_with(example_sdk1_1_env());
  Providers providers = providers_of(example_env(), {"example", "cpu"});  // SDK 1.0.0 runs 1.1.0's programs
  auto model = load(ctx);
  ContextResolution r = resolve(*model, providers);
  EXPECT_EQ(r.loaded.size(), 2u);
  for (const ContextDiagnostic& d : r.diagnostics) {
    SCOPED_TRACE(d.node);
    EXPECT_TRUE(d.loaded);
    EXPECT_FALSE(d.fell_back);
    EXPECT_EQ(d.verdict, "prefer_recompile");
    EXPECT_EQ(d.reason, "ep_sdk_version 1.1.0 != 1.0.0: same major version, so it runs; a recompile would use this SDK");
  }
  ContextLoadSettings strict;
  strict.fail_on_suboptimal = true;
  auto again = load(ctx);
  expect_error([&] { resolve(*again, providers, strict); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'model_example_0': provider 'example' can run its context but recommends compiling "
                "the model again: ep_sdk_version 1.1.0 != 1.0.0",
                "(session.fail_on_suboptimal_compiled_model=1)"});
  // An optimal context is not suboptimal.
  TempDir other;
  compile(example_env(), write_model(conv_net(), other.file("model.onnx")));
  auto optimal = load(other.file("model_ctx.onnx"));
  EXPECT_EQ(resolve(*optimal, providers, strict).loaded.size(), 2u);
}

TEST_F(Resolution, TheSourceModelIsFoundBesideTheCtxModelOrAtTheConfiguredPath) {
  const std::string ctx = compile_with(example_sdk2_env());
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  fs::create_directories(dir_.path() / "elsewhere");
  fs::rename(dir_.file("model.onnx"), dir_.file("elsewhere/original.onnx"));
  auto model = load(ctx);
  const std::string beside = fs::weakly_canonical(dir_.path() / "model.onnx").string();
  expect_error([&] { resolve(*model, providers); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'model_example_0' cannot be used", "source model '" + beside + "'",
                "(onnx_model_filename, beside the ctx model) does not exist", "ep.context_source_model_path"});
  ContextLoadSettings settings;
  settings.source_model_path = dir_.file("elsewhere/original.onnx");
  auto again = load(ctx);
  ContextResolution r = resolve(*again, providers, settings);
  for (const ContextDiagnostic& d : r.diagnostics) EXPECT_TRUE(d.fell_back) << d.node;
  expect_fell_back(*again);
}

TEST_F(Resolution, AModelFromABufferFindsItsBinaryThroughContextFilePath) {
  const std::string ctx = compile_with(example_env());
  const std::string bytes = read_file(ctx);
  Providers providers = providers_of(example_env(), {"example", "cpu"});
  auto model = ephost::load_model_from_buffer(bytes.data(), bytes.size(), ephost::LoadOptions{});
  ContextLoadSettings settings;
  settings.ctx_file_path = ctx;
  EXPECT_EQ(resolve(*model, providers, settings).loaded.size(), 2u);
  // Without it the binary cannot be found, nor the source model to fall back to.
  auto lost = ephost::load_model_from_buffer(bytes.data(), bytes.size(), ephost::LoadOptions{});
  expect_error([&] { resolve(*lost, providers); }, EPHOST_INVALID_GRAPH,
               {"EPContext node 'model_example_0'", "needs the ctx model's folder", "set ep.context_file_path"});
}

TEST_F(Resolution, AProviderWithoutContextLoadFailsToLoadAndItsNodesGoToTheNextProvider) {
  // A hand-made ctx model for the test plugin alpha (no context_judge, no context_load), and its source.
  write_model(ephost_test::add_model(), dir_.file("add.onnx"));
  ContextSpec spec("alpha_ctx");
  spec.source = "AlphaExecutionProvider";  // any of the plugin's source keys
  spec.embed_mode = 1;
  spec.cache = "alpha's own bytes";
  spec.model_filename = "add.onnx";
  spec.inputs = {"X", "Y"};
  spec.outputs = {"Z"};
  onnx::ModelProto ctx = context_model({spec});
  ephost_test::add_input(ctx.mutable_graph(), "Y");
  ephost_test::add_output(ctx.mutable_graph(), "Z");
  Providers providers = providers_of(alpha_env(), {"cpu", "alpha"});  // its Env registers the EPContext schema
  auto model = load(write_model(ctx, dir_.file("add_ctx.onnx")));
  ContextResolution r = resolve(*model, providers);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const ContextDiagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.node, "alpha_ctx");
  EXPECT_EQ(d.source, "AlphaExecutionProvider");
  EXPECT_EQ(d.provider, "alpha");
  EXPECT_EQ(d.verdict, "load_failed");
  EXPECT_EQ(d.reason, "the provider has no context_load");
  EXPECT_TRUE(d.fell_back);
  EXPECT_EQ(d.fallback_nodes, 1u);
  EXPECT_EQ(ir_node_names(graph_of(*model)), (std::vector<std::string>{"add"}));
  EXPECT_EQ(r.excluded, (std::map<std::string, size_t>{{"add", 1}}));
}

}  // namespace
