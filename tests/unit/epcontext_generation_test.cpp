// EPContext generation (host/epcontext/context_generation.h): the settings read from EpContextOptions
// before anything is compiled, and generate_context_model driven by real sessions of the example EP
// (samples/example_ep): the files it writes, the attributes of every EPContext node and the model's
// metadata as the seed describes them, what it refuses, and that a failure leaves nothing behind.
#include <gtest/gtest.h>

#include "core/error.h"
#include "epcontext/context_generation.h"
#include "epcontext_fixture.h"

namespace {

using namespace epctx_test;
using ephost::ContextBinary;
using ephost::ContextShareRegistry;
using ephost::EpContextOptions;
using ephost::GenerationResult;
using ephost::GenerationSettings;
using ephost::read_generation_settings;
using ephost_test::expect_error;

EpContextOptions enabled() {
  EpContextOptions o;
  o.enable = true;
  return o;
}

// ---------------------------------------------------------------------------------------------------
// read_generation_settings

class GenerationSettingsTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(GenerationSettingsTest, DisabledReadsNothingAndRefusesNothing) {
  EpContextOptions o;
  o.embed = o.share = true;  // would be refused if generation were on
  o.external_initializers_file = "/abs/w.bin";
  GenerationSettings s = read_generation_settings(o, "");
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.ctx_path, "");
}

TEST_F(GenerationSettingsTest, DefaultsToModelCtxOnnxBesideTheModel) {
  const std::string model = dir_.file("net.onnx");
  GenerationSettings s = read_generation_settings(enabled(), model);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(fs::path(s.ctx_path), dir_.path() / "net_ctx.onnx");
  EXPECT_EQ(s.model_name, "net");
  EXPECT_EQ(s.source_model_filename, "net.onnx");
  EXPECT_FALSE(s.embed);
  EXPECT_FALSE(s.overwrite);
  // ONNX Runtime's rule: ".onnx" is what goes; other dots stay in the name.
  GenerationSettings dotted = read_generation_settings(enabled(), dir_.file("resnet.v2.onnx"));
  EXPECT_EQ(fs::path(dotted.ctx_path), dir_.path() / "resnet.v2_ctx.onnx");
  EXPECT_EQ(dotted.model_name, "resnet.v2");
  GenerationSettings other = read_generation_settings(enabled(), dir_.file("model.pb"));
  EXPECT_EQ(fs::path(other.ctx_path), dir_.path() / "model_ctx.onnx");
  EXPECT_EQ(other.model_name, "model");
  EXPECT_EQ(other.source_model_filename, "model.pb");
}

TEST_F(GenerationSettingsTest, OptionsAreCarriedOver) {
  EpContextOptions o = enabled();
  o.file_path = dir_.file("out/custom.onnx");
  o.node_prefix = "m1_";
  o.external_initializers_file = "custom_weights.bin";
  o.overwrite = true;
  o.share = true;
  o.stop_share = true;
  GenerationSettings s = read_generation_settings(o, dir_.file("net.onnx"));
  EXPECT_EQ(s.ctx_path, dir_.file("out/custom.onnx"));
  EXPECT_EQ(s.node_prefix, "m1_");
  EXPECT_EQ(s.external_initializers_file, "custom_weights.bin");
  EXPECT_TRUE(s.overwrite);
  EXPECT_TRUE(s.share);
  EXPECT_TRUE(s.stop_share);
  EXPECT_EQ(s.model_name, "net");  // the binary is named after the source model, not the ctx model
  EXPECT_EQ(s.source_model_filename, "net.onnx");
}

TEST_F(GenerationSettingsTest, ABufferModelWithoutFilePathIsInvalidArgument) {
  expect_error([&] { read_generation_settings(enabled(), ""); }, EPHOST_INVALID_ARGUMENT,
               {"ep.context_enable=1", "loaded from a buffer", "needs ep.context_file_path"});
}

TEST_F(GenerationSettingsTest, ABufferModelIsNamedAfterItsCtxModelOrItsSourceModelPath) {
  EpContextOptions o = enabled();
  o.file_path = dir_.file("sub/net_ctx.onnx");
  GenerationSettings s = read_generation_settings(o, "");
  EXPECT_EQ(s.ctx_path, dir_.file("sub/net_ctx.onnx"));
  EXPECT_EQ(s.model_name, "net");  // the ctx model's name without "_ctx"
  EXPECT_EQ(s.source_model_filename, "net.onnx");
  o.source_model_path = "/models/original.onnx";
  GenerationSettings named = read_generation_settings(o, "");
  EXPECT_EQ(named.model_name, "original");
  EXPECT_EQ(named.source_model_filename, "original.onnx");
}

TEST_F(GenerationSettingsTest, AFilePathNamingAFolderIsInvalidArgument) {
  fs::create_directories(dir_.path() / "folder");
  EpContextOptions o = enabled();
  o.file_path = dir_.file("folder");
  expect_error([&] { read_generation_settings(o, dir_.file("net.onnx")); }, EPHOST_INVALID_ARGUMENT,
               {"ep.context_file_path '" + dir_.file("folder") + "'", "is a folder", "must name the ctx model file"});
}

TEST_F(GenerationSettingsTest, AFilePathThatIsTheSourceModelIsInvalidArgument) {
  const std::string model = write_model(conv_net(), dir_.file("net.onnx"));
  EpContextOptions o = enabled();
  o.file_path = dir_.file("./sub/../net.onnx");  // another spelling of the same file
  fs::create_directories(dir_.path() / "sub");
  o.overwrite = true;  // refused as the source, not as an existing file
  expect_error([&] { read_generation_settings(o, model); }, EPHOST_INVALID_ARGUMENT,
               {"ep.context_file_path '" + o.file_path + "'", "is the source model itself"});
  EXPECT_EQ(read_model(model).graph().node_size(), 5);
}

TEST_F(GenerationSettingsTest, EmbedModeWithSharingIsInvalidArgument) {
  EpContextOptions o = enabled();
  o.embed = true;
  o.share = true;
  expect_error([&] { read_generation_settings(o, dir_.file("net.onnx")); }, EPHOST_INVALID_ARGUMENT,
               {"ep.share_ep_contexts=1", "needs ep.context_embed_mode=0"});
  o.share = false;
  EXPECT_TRUE(read_generation_settings(o, dir_.file("net.onnx")).embed);
}

TEST_F(GenerationSettingsTest, ExternalInitializersMustBeABareFileName) {
  for (const std::string bad : {"sub/weights.bin", "/tmp/weights.bin", "../weights.bin"}) {
    SCOPED_TRACE(bad);
    EpContextOptions o = enabled();
    o.external_initializers_file = bad;
    expect_error([&] { read_generation_settings(o, dir_.file("net.onnx")); }, EPHOST_INVALID_ARGUMENT,
                 {"ep.context_model_external_initializers_file_name '" + bad + "'", "must be a file name",
                  "beside the ctx model"});
  }
  EpContextOptions o = enabled();
  o.external_initializers_file = "weights.bin";
  EXPECT_EQ(read_generation_settings(o, dir_.file("net.onnx")).external_initializers_file, "weights.bin");
}

TEST_F(GenerationSettingsTest, AnExistingCtxModelIsRefusedUnlessOverwriteIsSet) {
  dir_.write("net_ctx.onnx", "previous");
  expect_error([&] { read_generation_settings(enabled(), dir_.file("net.onnx")); }, EPHOST_FAIL,
               {"the EPContext model '" + dir_.file("net_ctx.onnx") + "' exists already", "ep.context_overwrite=1"});
  EpContextOptions o = enabled();
  o.overwrite = true;
  EXPECT_TRUE(read_generation_settings(o, dir_.file("net.onnx")).overwrite);
  EXPECT_EQ(read_file(dir_.file("net_ctx.onnx")), "previous");  // reading settings writes nothing
}

// ---------------------------------------------------------------------------------------------------
// generate_context_model, after real sessions of the example EP

class Generation : public ::testing::Test {
 protected:
  // Compiles conv_net(variant) saved as `name` in dir_ with ep.context_enable=1 (the session writes its
  // own ctx model beside it) and keeps the session, for generate_context_model to be called again.
  void compile_model(const std::string& name = "model.onnx", int variant = 0, ephost::Env* env = nullptr,
                     std::vector<std::pair<std::string, std::string>> extra = {}) {
    onnx::ModelProto m = conv_net(variant);
    auto* kv = m.add_metadata_props();
    kv->set_key("author");
    kv->set_value("unit test");
    kv = m.add_metadata_props();  // stale: generation must replace it, not add a second one
    kv->set_key("ep_compatibility_info.example");
    kv->set_value("stale");
    model_path_ = write_model(m, dir_.file(name));
    session_ = compile(env ? *env : example_env(), model_path_, std::move(extra));
    source_ = ephost::load_model_from_file(model_path_, ephost::LoadOptions{});
  }
  // Settings for a ctx model `out/<name>` (the binary goes beside it).
  GenerationSettings settings(const std::string& name = "net_ctx.onnx") {
    EpContextOptions o = enabled();
    o.file_path = dir_.file("out/" + name);
    return read_generation_settings(o, model_path_);
  }
  GenerationResult generate(const GenerationSettings& s) {
    return ephost::generate_context_model(s, *source_, session_->main_executor(), session_->providers(), registry_);
  }
  std::string out(const std::string& rel = "") const { return rel.empty() ? dir_.file("out") : dir_.file("out/" + rel); }
  const ephost::PluginRecord& example_record() const { return session_->providers().front()->record(); }

  TempDir dir_;
  ContextShareRegistry registry_;
  std::string model_path_;
  std::unique_ptr<ephost::Session> session_;
  std::unique_ptr<ephost::Model> source_;
};

TEST_F(Generation, ASessionWritesTheCtxModelAndOneBinaryPerPluginWithTheSeedsAttributes) {
  compile_model();
  EXPECT_EQ(files_in(dir_.path().string()),
            (std::set<std::string>{"model.onnx", "model_ctx.onnx", "model_example.bin"}));
  const onnx::ModelProto m = read_model(dir_.file("model_ctx.onnx"));
  const auto nodes = context_nodes(m);
  ASSERT_EQ(nodes.size(), 2u);
  const std::vector<std::string> names{"model_example_0", "model_example_1"};
  const ephost::PluginRecord& rec = example_record();
  ASSERT_FALSE(rec.hardware_architecture.empty());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE(i);
    const onnx::NodeProto& n = *nodes[i];
    EXPECT_EQ(n.domain(), "com.microsoft");
    EXPECT_EQ(n.name(), names[i]);
    EXPECT_EQ(attr_i(n, "main_context"), i == 0 ? 1 : 0);  // the first node of the plugin holds the binary
    EXPECT_EQ(attr_i(n, "embed_mode"), 0);
    EXPECT_EQ(attr_s(n, "ep_cache_context"), i == 0 ? "model_example.bin" : "");
    EXPECT_EQ(attr_s(n, "source"), "EXAMPLE");  // the plugin's first context source key
    EXPECT_EQ(attr_s(n, "partition_name"), names[i]);
    EXPECT_EQ(attr_s(n, "onnx_model_filename"), "model.onnx");
    EXPECT_EQ(attr_s(n, "ep_sdk_version"), "1.0.0");
    EXPECT_EQ(attr_s(n, "hardware_architecture"), rec.hardware_architecture);
    EXPECT_NE(attr_s(n, "notes").find("example EP program"), std::string::npos) << attr_s(n, "notes");
  }
  EXPECT_EQ(nodes[0]->input_size(), 1);  // x; the weights are in the program
  EXPECT_EQ(nodes[0]->input(0), "x");
  EXPECT_EQ(nodes[1]->output(0), "y");
  // The binary holds one graph per partition, named by partition_name.
  auto bin = std::make_shared<const ephost::Bytes>(ephost::Bytes());
  {
    const std::string raw = read_file(dir_.file("model_example.bin"));
    bin = std::make_shared<const ephost::Bytes>(raw.begin(), raw.end());
  }
  EXPECT_EQ(ContextBinary::parse(bin, "model_example.bin").graph_names(), names);
  // Metadata: the plugin's compatibility info (once), and the source's own entries kept.
  EXPECT_EQ(metadata(m, "ep_compatibility_info.example"),
            "example;version=1.0.0;sdk_version=1.0.0;hardware_architecture=" + rec.hardware_architecture);
  EXPECT_EQ(metadata(m, "author"), "unit test");
  bool domain = false;
  for (const auto& op : m.opset_import()) domain |= op.domain() == "com.microsoft" && op.version() == 1;
  EXPECT_TRUE(domain);
  // The Sigmoid stays an ordinary node; every initializer went into the programs.
  EXPECT_EQ(node_names(m), (std::vector<std::string>{"model_example_0", "sigmoid", "model_example_1"}));
  EXPECT_EQ(m.graph().initializer_size(), 0);
  EXPECT_EQ(m.producer_name(), "ephost");
}

TEST_F(Generation, TheVersionsRecordedAreThoseOfThePluginThatCompiled) {
  compile_model("model.onnx", 0, &example_sdk2_env());
  const onnx::ModelProto m = read_model(dir_.file("model_ctx.onnx"));
  for (const auto* n : context_nodes(m)) EXPECT_EQ(attr_s(*n, "ep_sdk_version"), "2.0.0");
  EXPECT_NE(metadata(m, "ep_compatibility_info.example").find(";sdk_version=2.0.0;"), std::string::npos);
}

TEST_F(Generation, GenerateReportsTheFilesItWroteCtxModelLast) {
  compile_model();
  const GenerationSettings s = settings();
  GenerationResult r = generate(s);
  EXPECT_EQ(r.ctx_path, out("net_ctx.onnx"));
  EXPECT_EQ(r.files, (std::vector<std::string>{out("model_example.bin"), out("net_ctx.onnx")}));
  EXPECT_EQ(r.context_nodes, 2u);
  EXPECT_EQ(r.ordinary_nodes, 1u);
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"model_example.bin", "net_ctx.onnx"}));
  // The binary is named after the source model; the ctx model names it relative to its own folder.
  EXPECT_EQ(attr_s(*context_nodes(read_model(out("net_ctx.onnx")))[0], "ep_cache_context"), "model_example.bin");
  // The same bytes as the session's own generation.
  EXPECT_EQ(read_file(out("model_example.bin")), read_file(dir_.file("model_example.bin")));
}

TEST_F(Generation, ExternalInitializersOfOrdinaryNodesGoToTheirOwnFile) {
  // The example EP claims only Conv and Relu: the Add (and its bias) stays ordinary.
  compile_model("model.onnx", 0, nullptr, {{"ep.example.claim", "Conv,Relu"}});
  EpContextOptions o = enabled();
  o.file_path = out("net_ctx.onnx");
  o.external_initializers_file = "net_weights.bin";
  GenerationResult r = generate(read_generation_settings(o, model_path_));
  EXPECT_EQ(r.files, (std::vector<std::string>{out("model_example.bin"), out("net_weights.bin"), out("net_ctx.onnx")}));
  const onnx::ModelProto m = read_model(out("net_ctx.onnx"));
  ASSERT_EQ(m.graph().initializer_size(), 1);
  const auto& bias = m.graph().initializer(0);
  EXPECT_EQ(bias.name(), "bias");
  EXPECT_EQ(bias.data_location(), onnx::TensorProto::EXTERNAL);
  std::map<std::string, std::string> ext;
  for (const auto& e : bias.external_data()) ext[e.key()] = e.value();
  EXPECT_EQ(ext["location"], "net_weights.bin");
  EXPECT_EQ(ext["length"], "16");
  const std::string weights = read_file(out("net_weights.bin"));
  ASSERT_EQ(weights.size(), std::stoul(ext["offset"]) + 16);
  float b[4];
  std::memcpy(b, weights.data() + std::stoul(ext["offset"]), sizeof b);
  EXPECT_FLOAT_EQ(b[1], -0.2f);
}

TEST_F(Generation, EmbedModeOnePutsAContainerInEveryNodeAndWritesNoBinary) {
  compile_model();
  GenerationSettings s = settings();
  s.embed = true;
  GenerationResult r = generate(s);
  EXPECT_EQ(r.files, (std::vector<std::string>{out("net_ctx.onnx")}));
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"net_ctx.onnx"}));
  const onnx::ModelProto m = read_model(out("net_ctx.onnx"));
  const auto nodes = context_nodes(m);
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto* n : nodes) {
    SCOPED_TRACE(n->name());
    EXPECT_EQ(attr_i(*n, "main_context"), 1);  // every node holds its own context
    EXPECT_EQ(attr_i(*n, "embed_mode"), 1);
    const std::string payload = attr_s(*n, "ep_cache_context");
    auto data = std::make_shared<const ephost::Bytes>(payload.begin(), payload.end());
    ContextBinary c = ContextBinary::parse(data, "payload");
    EXPECT_FALSE(c.raw());
    EXPECT_EQ(c.graph_names(), (std::vector<std::string>{attr_s(*n, "partition_name")}));
  }
}

TEST_F(Generation, AnExistingBinaryACtxModelUsesIsRefusedWithoutOverwriteAndNothingIsWritten) {
  compile_model();
  fs::create_directories(out());
  // Another ctx model in the output folder uses the binary (the checksum it recorded matches).
  fs::copy_file(dir_.file("model_example.bin"), out("model_example.bin"));
  fs::copy_file(dir_.file("model_ctx.onnx"), out("kept_ctx.onnx"));
  const std::string before = read_file(out("model_example.bin"));
  expect_error([&] { generate(settings()); }, EPHOST_FAIL,
               {"the context binary '" + out("model_example.bin") + "' exists already and ctx model 'kept_ctx.onnx' "
                "uses it", "ep.context_overwrite=1"});
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"kept_ctx.onnx", "model_example.bin"}));
  EXPECT_EQ(read_file(out("model_example.bin")), before);
  GenerationSettings s = settings();
  s.overwrite = true;
  generate(s);
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"kept_ctx.onnx", "model_example.bin", "net_ctx.onnx"}));
  EXPECT_EQ(read_file(out("model_example.bin")), read_file(dir_.file("model_example.bin")));
}

TEST_F(Generation, AnOrphanBinaryIsReplacedWithoutOverwrite) {
  // What a compile killed between the binary's rename and the ctx model's leaves: no model uses it.
  compile_model();
  fs::create_directories(out());
  write_file(out("model_example.bin"), "previous");
  generate(settings());
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"model_example.bin", "net_ctx.onnx"}));
  EXPECT_EQ(read_file(out("model_example.bin")), read_file(dir_.file("model_example.bin")));
}

TEST_F(Generation, ASecondSessionRefusesAnExistingCtxModelUnlessOverwriteIsSet) {
  compile_model();
  const std::string before = read_file(dir_.file("model_ctx.onnx"));
  expect_error([&] { compile(example_env(), model_path_); }, EPHOST_FAIL,
               {"the EPContext model '" + dir_.file("model_ctx.onnx") + "' exists already", "ep.context_overwrite=1"});
  EXPECT_EQ(read_file(dir_.file("model_ctx.onnx")), before);
  EXPECT_NO_THROW(compile(example_env(), model_path_, {{"ep.context_overwrite", "1"}}));
  EXPECT_EQ(files_in(dir_.path().string()),
            (std::set<std::string>{"model.onnx", "model_ctx.onnx", "model_example.bin"}));  // no temporary left
}

TEST_F(Generation, AFailureAtTheLastFileLeavesNothingHalfWritten) {
  // Between reading the settings and writing, someone else wrote the ctx model (another process
  // compiling the same model), or the external initializers file: the generation fails, and must
  // not leave a binary that no ctx model of its own refers to.
  compile_model();
  {
    const GenerationSettings s = settings();
    fs::create_directories(out());
    write_file(out("net_ctx.onnx"), "theirs");
    expect_error([&] { generate(s); }, EPHOST_FAIL, {out("net_ctx.onnx"), "exists already"});
    EXPECT_EQ(files_in(out()), (std::set<std::string>{"net_ctx.onnx"}));
    EXPECT_EQ(read_file(out("net_ctx.onnx")), "theirs");
  }
  fs::remove_all(out());
  {
    EpContextOptions o = enabled();
    o.file_path = out("net_ctx.onnx");
    o.external_initializers_file = "net_weights.bin";
    const GenerationSettings s = read_generation_settings(o, model_path_);
    fs::create_directories(out());
    write_file(out("net_weights.bin"), "theirs");
    expect_error([&] { generate(s); }, EPHOST_FAIL, {out("net_weights.bin"), "exists already"});
    EXPECT_EQ(files_in(out()), (std::set<std::string>{"net_weights.bin"}));
    EXPECT_EQ(read_file(out("net_weights.bin")), "theirs");
  }
}

TEST_F(Generation, AWeightSharingGroupWritesOneBinaryWhenItsLastSessionStops) {
  compile_model("m1.onnx", 1);
  GenerationSettings s1 = settings("m1_ctx.onnx");
  s1.share = true;
  GenerationResult r1 = generate(s1);
  EXPECT_EQ(r1.files, (std::vector<std::string>{out("m1_ctx.onnx")}));  // the binary waits for the group
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"m1_ctx.onnx"}));
  EXPECT_EQ(attr_s(*context_nodes(read_model(out("m1_ctx.onnx")))[0], "ep_cache_context"), "m1_example.bin");
  {
    auto lock = registry_.lock();
    auto* g = registry_.generation("example");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->bin_path, out("m1_example.bin"));
    EXPECT_EQ(g->first_model, "m1");
  }
  // The second model of the group, with the stop option.
  auto first_session = std::move(session_);
  auto first_source = std::move(source_);
  compile_model("m2.onnx", 2);
  GenerationSettings s2 = settings("m2_ctx.onnx");
  s2.share = true;
  s2.stop_share = true;
  GenerationResult r2 = generate(s2);
  EXPECT_EQ(r2.files, (std::vector<std::string>{out("m1_example.bin"), out("m2_ctx.onnx")}));
  EXPECT_EQ(files_in(out()), (std::set<std::string>{"m1_ctx.onnx", "m2_ctx.onnx", "m1_example.bin"}));
  // The second ctx model names the group's binary, which the first model named.
  EXPECT_EQ(attr_s(*context_nodes(read_model(out("m2_ctx.onnx")))[0], "ep_cache_context"), "m1_example.bin");
  {
    auto lock = registry_.lock();
    EXPECT_EQ(registry_.generation("example"), nullptr);  // the group is closed
    EXPECT_TRUE(registry_.open_generations().empty());
  }
  const std::string raw = read_file(out("m1_example.bin"));
  ContextBinary bin = ContextBinary::parse(std::make_shared<const ephost::Bytes>(raw.begin(), raw.end()), "shared");
  EXPECT_EQ(bin.graph_names(),
            (std::vector<std::string>{"m1_example_0", "m1_example_1", "m2_example_0", "m2_example_1"}));
  // w1 is common to both models: the shared binary is smaller than the two binaries the sessions wrote alone.
  const uint64_t w1 = 16 * 27 * sizeof(float);
  EXPECT_LE(raw.size() + w1, fs::file_size(dir_.file("m1_example.bin")) + fs::file_size(dir_.file("m2_example.bin")));
}

}  // namespace
