// ONNX Runtime plugin EPs end to end through the C API: the test EP "ortadd" (tests/plugins/ort_ep, a C
// library exporting CreateEpFactories / ReleaseEpFactory only) dropped into a plugin directory is
// discovered with its devices, takes the Add/Mul/Relu nodes it claims as fused groups, and computes what
// the CPU plugin computes; its options reach CreateEp; its devices can be picked; broken libraries
// (a crash while probed, a NULL factory, API 31 asked for, a provider-bridge library) are skipped
// saying why, and the host survives.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "ort_test_plugins.h"
#include "test_support.h"
#include "test_paths.h"

using json = nlohmann::json;
using ephost_test::TempDir;

namespace {

namespace fs = boost::filesystem;

using ephost_test::assignment;
using ephost_test::install_ort_plugin;

json report_entry(const Ephost::Env& env, const std::string& file) {
  for (const auto& r : json::parse(env.plugin_report_json())) {
    const std::string path = r["path"];
    if (path.size() >= file.size() && path.compare(path.size() - file.size(), file.size(), file) == 0) return r;
  }
  return json();
}


class OrtPluginEp : public ::testing::Test {
 protected:
  void SetUp() override {
    install_ort_plugin(plugins_, "good");
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(4, 6).save(models_);
  }
  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(OrtPluginEp, IsDiscoveredWithItsDevices) {
  const json r = report_entry(*env_, "libephost_test_ort_good.so");
  ASSERT_FALSE(r.is_null()) << env_->plugin_report_json();
  EXPECT_TRUE(r["loaded"].get<bool>()) << r.dump(2);
  EXPECT_EQ(r["name"], "ortadd");
  EXPECT_EQ(r["vendor"], "ephost tests");
  EXPECT_EQ(r["version"], "1.2.3");
  EXPECT_EQ(r["probe_outcome"], "usable");
  EXPECT_NE(r["sdk_version"].get<std::string>().find("ONNX Runtime plugin EP (API 30"), std::string::npos)
      << r.dump(2);
  ASSERT_TRUE(r.contains("devices")) << r.dump(2);
  ASSERT_EQ(r["devices"].size(), 1u);  // it supports the CPU hardware device only
  EXPECT_EQ(r["devices"][0]["type"], "cpu");
  EXPECT_EQ(r["devices"][0]["label"], "ortadd:0");
  EXPECT_TRUE(r["devices"][0]["host_memory_usable"].get<bool>());
}

TEST_F(OrtPluginEp, TakesTheNodesItClaimsAndComputesWhatTheCpuPluginComputes) {
  Ephost::Session s(*env_, model_path_);
  auto a = assignment(s);
  EXPECT_EQ(a["add"], "ortadd");
  EXPECT_EQ(a["mul"], "ortadd");
  EXPECT_EQ(a["relu"], "ortadd");
  EXPECT_EQ(a["sub"], "cpu");
  EXPECT_EQ(a["sigmoid"], "cpu");
  ephost_test::expect_chain_output(s, 4, 6);
  // A second run reuses the compiled group and its state.
  ephost_test::expect_chain_output(s, 4, 6);
}

TEST_F(OrtPluginEp, OptionsReachCreateEpAsOnnxRuntimePassesThem) {
  Ephost::SessionOptions options;
  options.add_config("ep.ortadd.skip_op", "Mul");
  Ephost::Session s(*env_, model_path_, options);
  auto a = assignment(s);
  EXPECT_EQ(a["add"], "ortadd");
  EXPECT_EQ(a["mul"], "cpu");
  EXPECT_EQ(a["relu"], "ortadd");
  ephost_test::expect_chain_output(s, 4, 6);
}

TEST_F(OrtPluginEp, ItsDeviceCanBePicked) {
  Ephost::SessionOptions options;
  options.append_provider_for_device("ortadd", 0);
  Ephost::Session s(*env_, model_path_, options);
  EXPECT_EQ(assignment(s)["add"], "ortadd");
  // The report outlives the loop: a range over a member of a temporary would read freed memory.
  const json report = json::parse(s.partition_report_json());
  for (const auto& n : report["graphs"][0]["nodes"])
    if (n["node"] == "add") EXPECT_EQ(n["device"], "ortadd:0") << n.dump(2);
  ephost_test::expect_chain_output(s, 4, 6);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// EPContext (issue 25 step 5): ortadd makes an EPContext node in Compile (OrtModelEditorApi::CreateNode)
// when asked for one; the host writes it into the ctx model, and loading the ctx model hands the node back
// to ortadd (claimed in GetCapability, compiled from its ep_cache_context) without compiling the original
// group again. ortadd's option compile_log records each Compile: "graph" or "context".
class OrtPluginEpContext : public OrtPluginEp, public ::testing::WithParamInterface<const char*> {};

TEST_P(OrtPluginEpContext, CompiledGroupIsCachedAndReloadedWithoutCompilingAgain) {
  const std::string log = models_.file("compiles.txt");
  {
    Ephost::SessionOptions options;
    options.add_config("ep.context_enable", "1").add_config("ep.context_embed_mode", GetParam());
    options.add_config("ep.ortadd.compile_log", log);
    Ephost::Session s(*env_, model_path_, options);
    EXPECT_EQ(assignment(s)["add"], "ortadd");
    ephost_test::expect_chain_output(s, 4, 6);
  }
  EXPECT_EQ(read_text(log), "graph\n");  // one fused group: add, mul, relu
  const std::string ctx = models_.file("model_ctx.onnx");
  ASSERT_TRUE(fs::exists(ctx));
  Ephost::SessionOptions options;
  options.add_config("ep.ortadd.compile_log", log);
  Ephost::Session loaded(*env_, ctx, options);
  EXPECT_EQ(read_text(log), "graph\ncontext\n");  // the cached group, loaded; the graph not compiled again
  const json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_EQ(report[0]["source"], "ortadd") << report.dump(2);
  EXPECT_EQ(report[0]["provider"], "ortadd") << report.dump(2);
  EXPECT_TRUE(report[0]["loaded"].get<bool>()) << report.dump(2);
  ephost_test::expect_chain_output(loaded, 4, 6);
  ephost_test::expect_chain_output(loaded, 4, 6);
}

INSTANTIATE_TEST_SUITE_P(EmbedMode, OrtPluginEpContext, ::testing::Values("0", "1"));

std::string metadata(const std::string& model_path, const std::string& key) {
  onnx::ModelProto m;
  std::ifstream in(model_path, std::ios::binary);
  if (!m.ParseFromIstream(&in)) return "(unreadable)";
  for (const auto& kv : m.metadata_props())
    if (kv.key() == key) return kv.value();
  return "(absent)";
}

// Compatibility: the ctx model records ortadd's GetCompiledModelCompatibilityInfo (its option target),
// and loading asks its factory's ValidateCompiledModelCompatibilityInfo: "cpu" runs, "cpu-old" runs with a
// warning (PREFER_RECOMPILATION), anything else is UNSUPPORTED: INVALID_GRAPH, and the source model's nodes
// run on the next providers (the CPU plugin), or with session.disable_ep_context_fallback=1 the session fails.
class OrtPluginEpCompatibility : public OrtPluginEp {
 protected:
  // Compiles the chain model into model_ctx.onnx with ortadd's option target=`target`.
  std::string compile_for(const std::string& target) {
    Ephost::SessionOptions options;
    options.add_config("ep.context_enable", "1").add_config("ep.ortadd.target", target);
    { Ephost::Session s(*env_, model_path_, options); }
    return models_.file("model_ctx.onnx");
  }
};

TEST_F(OrtPluginEpCompatibility, TheCtxModelRecordsThePluginsOwnCompatibilityInfo) {
  const std::string ctx = compile_for("cpu");
  EXPECT_EQ(metadata(ctx, "ep_compatibility_info.ortadd"), "ortadd;version=1.2.3;target=cpu");
  Ephost::Session loaded(*env_, ctx);
  const json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_EQ(report[0]["verdict"], "optimal") << report.dump(2);
  EXPECT_TRUE(report[0]["loaded"].get<bool>()) << report.dump(2);
  ephost_test::expect_chain_output(loaded, 4, 6);
}

TEST_F(OrtPluginEpCompatibility, PreferRecompilationStillLoads) {
  Ephost::Session loaded(*env_, compile_for("cpu-old"));
  const json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_EQ(report[0]["verdict"], "prefer_recompile") << report.dump(2);
  EXPECT_TRUE(report[0]["loaded"].get<bool>()) << report.dump(2);
  ephost_test::expect_chain_output(loaded, 4, 6);
}

TEST_F(OrtPluginEpCompatibility, UnsupportedIsInvalidGraphAndFallsBackToTheCpuPlugin) {
  const std::string ctx = compile_for("npu");
  const std::string log = models_.file("compiles.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortadd.compile_log", log);
  Ephost::Session loaded(*env_, ctx, options);
  const json report = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(report.size(), 1u) << report.dump(2);
  EXPECT_FALSE(report[0]["loaded"].get<bool>()) << report.dump(2);
  EXPECT_EQ(report[0]["verdict"], "unsupported") << report.dump(2);
  EXPECT_EQ(report[0]["status"], "INVALID_GRAPH") << report.dump(2);
  EXPECT_NE(report[0]["reason"].get<std::string>().find("EP_UNSUPPORTED"), std::string::npos) << report.dump(2);
  EXPECT_TRUE(report[0]["fell_back"].get<bool>()) << report.dump(2);
  auto a = assignment(loaded);
  EXPECT_EQ(a["add"], "cpu");
  EXPECT_EQ(a["mul"], "cpu");
  EXPECT_EQ(a["relu"], "cpu");
  EXPECT_EQ(read_text(log), "");  // ortadd compiled nothing: neither the context nor the source nodes
  ephost_test::expect_chain_output(loaded, 4, 6);

  Ephost::SessionOptions strict;
  strict.add_config("session.disable_ep_context_fallback", "1");
  try {
    Ephost::Session failing(*env_, ctx, strict);
    ADD_FAILURE() << "the session should fail";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH) << e.what();
    EXPECT_NE(std::string(e.what()).find("EP_UNSUPPORTED"), std::string::npos) << e.what();
  }
}

TEST(OrtPluginEpBroken, EachIsSkippedSayingWhyAndTheHostSurvives) {
  TempDir dir;
  for (const char* variant : {"good", "crash_in_create", "null_factory", "asks_api31", "provider_bridge"})
    install_ort_plugin(dir, variant);
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{dir.path()});
  const json crash = report_entry(env, "libephost_test_ort_crash_in_create.so");
  EXPECT_FALSE(crash["loaded"].get<bool>());
  EXPECT_EQ(crash["probe_outcome"], "crashed") << crash.dump(2);
  const json null_factory = report_entry(env, "libephost_test_ort_null_factory.so");
  EXPECT_FALSE(null_factory["loaded"].get<bool>());
  EXPECT_NE(null_factory["reason"].get<std::string>().find("returned a NULL factory"), std::string::npos)
      << null_factory.dump(2);
  const json api31 = report_entry(env, "libephost_test_ort_asks_api31.so");
  EXPECT_FALSE(api31["loaded"].get<bool>());
  EXPECT_NE(api31["reason"].get<std::string>().find("it asked for ONNX Runtime API 31"), std::string::npos)
      << api31.dump(2);
  const json bridge = report_entry(env, "libephost_test_ort_provider_bridge.so");
  EXPECT_FALSE(bridge["loaded"].get<bool>());
  EXPECT_NE(bridge["reason"].get<std::string>().find("provider-bridge EP (it exports 'GetProvider')"),
            std::string::npos)
      << bridge.dump(2);
  // The good one beside them works.
  EXPECT_TRUE(report_entry(env, "libephost_test_ort_good.so")["loaded"].get<bool>());
  TempDir models;
  Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models));
  EXPECT_EQ(assignment(s)["add"], "ortadd");
  ephost_test::expect_chain_output(s, 2, 3);
}

// The report entries of `file`'s providers (an ONNX Runtime plugin EP library: one per factory), by name.
std::map<std::string, json> report_entries(const Ephost::Env& env, const std::string& file) {
  std::map<std::string, json> out;
  for (const auto& r : json::parse(env.plugin_report_json())) {
    const std::string path = r["path"];
    if (path.size() >= file.size() && path.compare(path.size() - file.size(), file.size(), file) == 0)
      out[r["name"]] = r;
  }
  return out;
}

constexpr const char* kTwoFactories = "libephost_test_ort_two_factories.so";

// A library whose CreateEpFactories answers two factories ("ortadd", "ortadd2"): one provider per factory,
// each with its own record, devices, options, EPContext source and compatibility key; the library loaded once.
TEST(OrtPluginEpFactories, EachFactoryIsAProviderWithItsDevices) {
  TempDir dir;
  install_ort_plugin(dir, "two_factories");
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  const auto entries = report_entries(env, kTwoFactories);
  ASSERT_EQ(entries.size(), 2u) << env.plugin_report_json();
  for (const char* name : {"ortadd", "ortadd2"}) {
    const json& r = entries.at(name);
    EXPECT_TRUE(r["loaded"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["vendor"], "ephost tests");
    EXPECT_EQ(r["context_source_keys"], json::array({name})) << r.dump(2);
    ASSERT_EQ(r["devices"].size(), 1u) << r.dump(2);  // each factory supports the CPU
    EXPECT_EQ(r["devices"][0]["label"], std::string(name) + ":0");
    EXPECT_EQ(r["devices"][0]["type"], "cpu");
  }
  // Both are probed by the scanner in one probe of the file, and loaded only when first needed.
  EXPECT_EQ(entries.at("ortadd2")["probed_by"], entries.at("ortadd")["probed_by"]);
  EXPECT_FALSE(entries.at("ortadd2")["in_process"].get<bool>());
  // Loading one loads its sibling from the same library: the devices then carry what the factory gave.
  TempDir models;
  {
    Ephost::SessionOptions options;
    options.append_provider_for_device("ortadd", 0);
    Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models), options);
  }
  const auto loaded = report_entries(env, kTwoFactories);
  for (const char* name : {"ortadd", "ortadd2"}) {
    EXPECT_TRUE(loaded.at(name)["in_process"].get<bool>()) << loaded.at(name).dump(2);
    EXPECT_EQ(loaded.at(name)["devices"][0]["ep_name"], name) << loaded.at(name).dump(2);
  }
}

// The second factory picked by name: its EP (created by its own factory) takes the nodes it claims, reads
// "ep.ortadd2.<key>" options, computes what the CPU plugin computes, and writes and reloads EPContext nodes
// under its own name.
TEST(OrtPluginEpFactories, TheSecondFactoryRunsItsNodesAndItsContexts) {
  TempDir dir, models;
  install_ort_plugin(dir, "two_factories");
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  const std::string model = ephost_test::chain_model(4, 6).save(models);
  const std::string log = models.file("compiles.txt");
  {
    Ephost::SessionOptions options;
    options.append_provider_for_device("ortadd2", 0, {{"skip_op", "Mul"}, {"compile_log", log}});
    options.add_config("ep.context_enable", "1");
    Ephost::Session s(env, model, options);
    auto a = assignment(s);
    EXPECT_EQ(a["add"], "ortadd2");
    EXPECT_EQ(a["relu"], "ortadd2");
    EXPECT_EQ(a["mul"], "cpu");
    const json report = json::parse(s.partition_report_json());
    for (const auto& n : report["graphs"][0]["nodes"])
      if (n["node"] == "add") EXPECT_EQ(n["device"], "ortadd2:0") << n.dump(2);
    ephost_test::expect_chain_output(s, 4, 6);
  }
  EXPECT_EQ(read_text(log), "graph\ngraph\n");  // add and relu, two groups around the CPU's Mul
  const std::string ctx = models.file("model_ctx.onnx");
  {
    onnx::ModelProto m;
    std::ifstream in(ctx, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
    size_t ours = 0;
    for (const auto& n : m.graph().node())
      for (const auto& attr : n.attribute())
        if (attr.name() == "source") ours += attr.s() == "ortadd2";
    EXPECT_EQ(ours, 2u) << "EPContext nodes with source ortadd2";
  }
  Ephost::SessionOptions options;
  options.append_provider_for_device("ortadd2", 0, {{"skip_op", "Mul"}, {"compile_log", log}});
  Ephost::Session loaded(env, ctx, options);
  EXPECT_EQ(read_text(log), "graph\ngraph\ncontext\ncontext\n");
  for (const auto& c : json::parse(loaded.ep_context_report_json())) EXPECT_TRUE(c["loaded"].get<bool>()) << c.dump(2);
  ephost_test::expect_chain_output(loaded, 4, 6);
}

// By default priority the first factory's provider takes every node it claims; the second is idle. Named
// alone, the second takes them; its options are its own (ortadd's skip_op does not reach ortadd2's EP).
TEST(OrtPluginEpFactories, PriorityPicksOneFactoryAndTheOtherIsIdle) {
  TempDir dir, models;
  install_ort_plugin(dir, "two_factories");
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  const std::string model = ephost_test::chain_model(4, 6).save(models);
  {
    Ephost::Session s(env, model);
    for (const auto& [node, provider] : assignment(s)) EXPECT_NE(provider, "ortadd2") << node;
    EXPECT_EQ(assignment(s)["add"], "ortadd");
    ephost_test::expect_chain_output(s, 4, 6);
  }
  Ephost::SessionOptions options;
  options.add_config("ep.ortadd.skip_op", "Add");
  options.append_provider_for_device("ortadd2", 0);
  Ephost::Session s(env, model, options);
  EXPECT_EQ(assignment(s)["add"], "ortadd2");
  EXPECT_EQ(assignment(s)["mul"], "ortadd2");
  ephost_test::expect_chain_output(s, 4, 6);
}

// A second env finds both factories in the registry cache (one entry for the file, both providers), admits
// both without loading the library, and a session on the second factory loads it and fills the first too.
TEST(OrtPluginEpFactories, LazyLoadFromTheRegistryCacheFillsBothFactories) {
  TempDir dir, models;
  install_ort_plugin(dir, "two_factories");
  { Ephost::Env probe(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()}); }
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  const auto cached = report_entries(env, kTwoFactories);
  ASSERT_EQ(cached.size(), 2u) << env.plugin_report_json();
  for (const auto& [name, r] : cached) {
    EXPECT_EQ(r["probed_by"], "registry") << r.dump(2);
    EXPECT_TRUE(r["loaded"].get<bool>()) << r.dump(2);
    EXPECT_FALSE(r["in_process"].get<bool>()) << r.dump(2);
    ASSERT_EQ(r["devices"].size(), 1u) << r.dump(2);
    EXPECT_EQ(r["devices"][0]["label"], name + ":0");
  }
  {
    Ephost::SessionOptions options;
    options.append_provider_for_device("ortadd2", 0);
    Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models), options);
    EXPECT_EQ(assignment(s)["add"], "ortadd2");
    ephost_test::expect_chain_output(s, 2, 3);
  }
  for (const auto& [name, r] : report_entries(env, kTwoFactories)) {
    EXPECT_TRUE(r["in_process"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["devices"][0]["ep_name"], name) << r.dump(2);
  }
  // The first factory's provider runs from the same load.
  Ephost::SessionOptions first;
  first.append_provider_for_device("ortadd", 0);
  Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models), first);
  EXPECT_EQ(assignment(s)["add"], "ortadd");
  ephost_test::expect_chain_output(s, 2, 3);
}

// A factory that supports none of the host's devices says why (GetHardwareDeviceIncompatibilityDetails,
// API 24): the report and `ephost plugins` list the device with its reasons, notes and error code, after a
// probe and from the registry cache alike; its sibling, which supports the CPU, is never asked.
TEST(OrtPluginEpFactories, AFactoryThatSupportsNoHostDeviceSaysWhy) {
  TempDir dir, cache;
  install_ort_plugin(dir, "second_refuses_cpu");
  const std::string registry = cache.file("registry.json");
  const std::string why = ": device incompatible, missing dependency: ortadd2 needs the test accelerator, not a "
                          "CPU (error 7)";
  for (int pass = 0; pass < 2; ++pass) {  // probed, then answered by the registry cache
    const std::vector<std::string> dirs{dir.path()};
    Ephost::Env env(EPHOST_LOG_ERROR, &dirs, {{kEphostEnvOptionsPluginRegistry, registry}});
    const auto entries = report_entries(env, "libephost_test_ort_second_refuses_cpu.so");
    ASSERT_EQ(entries.size(), 2u) << env.plugin_report_json();
    const json& refusing = entries.at("ortadd2");
    EXPECT_EQ(refusing.value("devices", json::array()).size(), 0u) << refusing.dump(2);
    ASSERT_EQ(refusing.value("unsupported_devices", json::array()).size(), 1u) << refusing.dump(2);
    const std::string line = refusing["unsupported_devices"][0];
    EXPECT_EQ(line.rfind("cpu '", 0), 0u) << line;
    EXPECT_NE(line.find(why), std::string::npos) << line;
    EXPECT_EQ(entries.at("ortadd").count("unsupported_devices"), 0u) << entries.at("ortadd").dump(2);
    EXPECT_EQ(refusing["probed_by"], pass == 0 ? "scanner" : "registry") << refusing.dump(2);
  }
  const ephost_test::CommandResult listing = ephost_test::run_command(
      "EPHOST_PLUGIN_PATH='" + dir.path() + "' EPHOST_PLUGIN_REGISTRY='" + registry + "' '" + EPHOST_CLI_PATH +
      "' plugins 2>&1");
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("devices not supported:\n  ortadd2: cpu '"), std::string::npos) << listing.output;
  EXPECT_NE(listing.output.find(why), std::string::npos) << listing.output;
}

// One factory's EP that cannot be created (CreateEp fails) fails the session that asked for it, naming
// that provider; the other factory of the same library goes on working.
TEST(OrtPluginEpFactories, OneFactorysFailureLeavesTheOtherWorking) {
  TempDir dir, models;
  install_ort_plugin(dir, "two_factories");
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{dir.path()});
  const std::string model = ephost_test::chain_model(2, 3).save(models);
  Ephost::SessionOptions failing;
  failing.append_provider_for_device("ortadd2", 0, {{"fail_create", "1"}});
  try {
    Ephost::Session s(env, model, failing);
    ADD_FAILURE() << "a session whose only provider's CreateEp fails was created";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(std::string(e.what()).find("ortadd2"), std::string::npos) << e.what();
  }
  Ephost::SessionOptions other;
  other.append_provider_for_device("ortadd", 0);
  Ephost::Session s(env, model, other);
  EXPECT_EQ(assignment(s)["add"], "ortadd");
  ephost_test::expect_chain_output(s, 2, 3);
  // And the failed factory itself, asked again without the failure.
  Ephost::SessionOptions again;
  again.append_provider_for_device("ortadd2", 0);
  Ephost::Session s2(env, model, again);
  EXPECT_EQ(assignment(s2)["add"], "ortadd2");
  ephost_test::expect_chain_output(s2, 2, 3);
}

// Registered explicitly (RegisterPluginLibrary): both factories' providers, loaded in process at once.
TEST(OrtPluginEpFactories, RegisteringTheLibraryRegistersEveryFactory) {
  TempDir dir, models;
  install_ort_plugin(dir, "two_factories");
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  env.register_plugin(dir.file(kTwoFactories));
  const auto entries = report_entries(env, kTwoFactories);
  ASSERT_EQ(entries.size(), 2u) << env.plugin_report_json();
  for (const auto& [name, r] : entries) {
    EXPECT_TRUE(r["in_process"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["devices"][0]["ep_name"], name) << r.dump(2);
  }
  // Registering the same file again is refused as already loaded: no third provider.
  try {
    env.register_plugin(dir.file(kTwoFactories));
  } catch (const Ephost::Exception&) {
  }
  size_t usable = 0;
  for (const auto& r : json::parse(env.plugin_report_json())) usable += r["loaded"].get<bool>() && r["name"] != "cpu";
  EXPECT_EQ(usable, 2u) << env.plugin_report_json();
  Ephost::SessionOptions options;
  options.append_provider_for_device("ortadd2", 0);
  Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models), options);
  EXPECT_EQ(assignment(s)["relu"], "ortadd2");
  ephost_test::expect_chain_output(s, 2, 3);
}

TEST(OrtPluginEpRegistration, RegisterPluginLibraryTakesAnOrtPluginEp) {
  TempDir dir;
  install_ort_plugin(dir, "good");
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{});
  env.register_plugin(dir.file("libephost_test_ort_good.so"));
  TempDir models;
  Ephost::Session s(env, ephost_test::chain_model(2, 3).save(models));
  EXPECT_EQ(assignment(s)["relu"], "ortadd");
  ephost_test::expect_chain_output(s, 2, 3);
}

}  // namespace
