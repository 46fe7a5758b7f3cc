// The EPContext tools as a user runs them, through the example compiling plugin (both SDK builds, each
// alone on EPHOST_PLUGIN_PATH: two plugins named `example` would clash): `ephost compile` (files, exit
// codes, refusing to overwrite, embed mode, prefix, several models), `ephost inspect` (nodes and each
// build's verdict), the INVALID_GRAPH diagnostic of `ephost run` and `ephost test`, and
// `ep_weight_sharing_ctx_gen` (N models give N+1 files).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "test_support.h"
#include "test_paths.h"

namespace {

using ephost_test::fs::exists;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;
using json = nlohmann::json;

using Result = ephost_test::CommandResult;
using ephost_test::write_tensor;

Result run_tool(const std::string& binary, const std::string& args, const std::string& plugin_dir,
                bool merge_stderr = true) {
  const std::string cmd = "EPHOST_PLUGIN_PATH='" + plugin_dir + "' '" + binary + "' " + args +
                          (merge_stderr ? " 2>&1" : " 2>/dev/null");
  return ephost_test::run_command(cmd);
}

const std::string kSdk1 = EPHOST_EXAMPLE_PLUGIN_DIR;
const std::string kSdk2 = EPHOST_EXAMPLE_SDK2_PLUGIN_DIR;

Result ephost(const std::string& args, const std::string& plugin_dir = kSdk1, bool merge_stderr = true) {
  return run_tool(EPHOST_CLI_PATH, args, plugin_dir, merge_stderr);
}
Result ctx_gen(const std::string& args, const std::string& plugin_dir = kSdk1) {
  return run_tool(EPHOST_CTX_GEN_PATH, args, plugin_dir);
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : ephost_test::fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// The chain model (Add, Mul, Relu, Sub, Sigmoid: every node the example plugin takes) over `cols`
// columns; its three weights have `cols` floats each.
std::string save_chain(const TempDir& dir, const std::string& file, int64_t cols = 3) {
  return ephost_test::chain_model(2, cols).save(dir, file);
}

// The "values:" line `ephost run` prints for output 0 (random inputs of seed 0).
std::string first_values(const std::string& run_output) {
  const size_t at = run_output.find("values:");
  if (at == std::string::npos) return "";
  return run_output.substr(at, run_output.find('\n', at) - at);
}


TEST(EpContextTools, CompileWritesTheCtxModelAndTheBinaryBesideTheModel) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  Result r = ephost("compile " + quoted(model) + " --providers example,cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(exists(dir.file("chain_ctx.onnx")));
  EXPECT_TRUE(exists(dir.file("chain_example.bin")));
  EXPECT_TRUE(contains(r.output, "wrote " + dir.file("chain_ctx.onnx"))) << r.output;
  EXPECT_TRUE(contains(r.output, "wrote " + dir.file("chain_example.bin"))) << r.output;
  EXPECT_TRUE(contains(r.output, "EPContext nodes: 1 (example: 1, holding 5 nodes)")) << r.output;
  EXPECT_TRUE(contains(r.output, "ordinary nodes: 0")) << r.output;
  EXPECT_TRUE(contains(r.output, "compiled in ")) << r.output;

  // The ctx model runs, from its context, with the source model's results.
  Result ctx = ephost("run " + quoted(dir.file("chain_ctx.onnx")));
  ASSERT_EQ(ctx.exit_code, 0) << ctx.output;
  EXPECT_FALSE(contains(ctx.output, "INVALID_GRAPH")) << ctx.output;
  Result source = ephost("run " + quoted(model) + " --providers cpu");
  ASSERT_EQ(source.exit_code, 0) << source.output;
  EXPECT_EQ(first_values(ctx.output), first_values(source.output));
  EXPECT_NE(first_values(ctx.output), "");
}

TEST(EpContextTools, CompileWithoutACompilingProviderWarnsThatNothingWasCached) {
  TempDir dir;
  Result r = ephost("compile " + quoted(save_chain(dir, "chain.onnx")) + " --providers cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "EPContext nodes: 0")) << r.output;
  EXPECT_TRUE(contains(r.output, "ordinary nodes: 5 (cpu: 5)")) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: no provider cached a compiled part of this model (providers: cpu)"))
      << r.output;
  EXPECT_EQ(files_in(dir.path()), (std::set<std::string>{"chain.onnx", "chain_ctx.onnx"}));
}

TEST(EpContextTools, CompileAgainWithoutForceFailsAndLeavesTheCtxModelUntouched) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  ASSERT_EQ(ephost("compile " + quoted(model)).exit_code, 0);
  const std::string ctx = dir.file("chain_ctx.onnx");
  const std::string before = read_file(ctx);
  const auto mtime = ephost_test::fs::last_write_time(ctx);

  Result again = ephost("compile " + quoted(model));
  EXPECT_NE(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "ephost: error: FAIL:")) << again.output;
  EXPECT_TRUE(contains(again.output, "exists already")) << again.output;
  EXPECT_TRUE(contains(again.output, "--force")) << again.output;
  EXPECT_EQ(read_file(ctx), before);
  EXPECT_EQ(ephost_test::fs::last_write_time(ctx), mtime);

  Result forced = ephost("compile " + quoted(model) + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_TRUE(contains(forced.output, "wrote " + ctx)) << forced.output;
}

TEST(EpContextTools, CompileEmbedsWithPrefixIntoTheNamedOutput) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  ephost_test::fs::create_directories(dir.file("out"));
  const std::string out = dir.file("out/compiled.onnx");
  Result r = ephost("compile " + quoted(model) + " --embed --prefix pre_ -o " + quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(exists(out));
  EXPECT_EQ(files_in(dir.file("out")), (std::set<std::string>{"compiled.onnx"}));  // embedded: no binary
  EXPECT_EQ(files_in(dir.path()), (std::set<std::string>{"chain.onnx", "out"}));

  Result inspect = ephost("inspect --json " + quoted(out), kSdk1, false);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  json report = json::parse(inspect.output);
  ASSERT_EQ(report["nodes"].size(), 1u) << inspect.output;
  EXPECT_EQ(report["nodes"][0]["name"].get<std::string>().rfind("pre_", 0), 0u) << inspect.output;
  EXPECT_EQ(report["nodes"][0]["embed_mode"], 1) << inspect.output;
}

TEST(EpContextTools, CompileSeveralModelsNumbersThemAndReportsEachFailure) {
  TempDir dir;
  const std::string a = save_chain(dir, "a.onnx"), b = save_chain(dir, "b.onnx");
  std::ofstream(dir.file("b_ctx.onnx")) << "in the way";
  Result r = ephost("compile " + quoted(a) + " " + quoted(b));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[1/2] " + a)) << r.output;
  EXPECT_TRUE(contains(r.output, "[2/2] " + b)) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 2 models compiled; failed: " + b)) << r.output;
  EXPECT_TRUE(exists(dir.file("a_ctx.onnx")));
  EXPECT_EQ(read_file(dir.file("b_ctx.onnx")), "in the way");

  Result one_output = ephost("compile " + quoted(a) + " " + quoted(b) + " -o " + quoted(dir.file("x.onnx")));
  EXPECT_EQ(one_output.exit_code, 2) << one_output.output;
  EXPECT_TRUE(contains(one_output.output, "INVALID_ARGUMENT")) << one_output.output;
}

TEST(EpContextTools, InspectShowsTheNodeAndTheVerdictOfTheBuildThatMadeIt) {
  TempDir dir;
  ASSERT_EQ(ephost("compile " + quoted(save_chain(dir, "chain.onnx"))).exit_code, 0);
  Result r = ephost("inspect " + quoted(dir.file("chain_ctx.onnx")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 EPContext node:")) << r.output;
  EXPECT_TRUE(contains(r.output, "EXAMPLE")) << r.output;
  EXPECT_TRUE(contains(r.output, "chain_example.bin")) << r.output;
  EXPECT_TRUE(contains(r.output, "chain.onnx")) << r.output;  // the source model, for fallback
  EXPECT_TRUE(contains(r.output, "example 1.0.0 (SDK 1.0.0)  optimal")) << r.output;
  EXPECT_TRUE(contains(r.output, "ep_compatibility_info.example")) << r.output;
}

TEST(EpContextTools, InspectWithTheOtherSdkBuildSaysUnsupportedNamingTheSdkVersion) {
  TempDir dir;
  ASSERT_EQ(ephost("compile " + quoted(save_chain(dir, "chain.onnx"))).exit_code, 0);
  Result r = ephost("inspect " + quoted(dir.file("chain_ctx.onnx")), kSdk2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(SDK 2.0.0)  unsupported")) << r.output;
  EXPECT_TRUE(contains(r.output, "ep_sdk_version")) << r.output;

  Result j = ephost("inspect --json " + quoted(dir.file("chain_ctx.onnx")), kSdk2, false);
  ASSERT_EQ(j.exit_code, 0) << j.output;
  json report = json::parse(j.output);
  ASSERT_EQ(report["nodes"][0]["verdicts"].size(), 1u) << j.output;
  EXPECT_EQ(report["nodes"][0]["verdicts"][0]["verdict"], "unsupported");
  EXPECT_EQ(report["nodes"][0]["ep_sdk_version"], "1.0.0");
}

TEST(EpContextTools, InspectOfAnOrdinaryModelFindsNoContextNodes) {
  TempDir dir;
  Result r = ephost("inspect " + quoted(save_chain(dir, "chain.onnx")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no EPContext nodes")) << r.output;
}

TEST(EpContextTools, RunPrintsTheInvalidGraphDiagnosticAndFallsBackUnlessDisabled) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  ASSERT_EQ(ephost("compile " + quoted(model), kSdk2).exit_code, 0);
  const std::string ctx = dir.file("chain_ctx.onnx");

  Result r = ephost("run " + quoted(ctx), kSdk1, false);  // stdout only: the CLI's own line, not the log
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "(source EXAMPLE, provider example): INVALID_GRAPH: ep_sdk_version 2.0.0"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "fell back to 5 node(s) on the next providers")) << r.output;
  Result source = ephost("run " + quoted(model) + " --providers cpu");
  EXPECT_EQ(first_values(r.output), first_values(source.output));

  Result strict = ephost("run " + quoted(ctx) + " --option session.disable_ep_context_fallback=1");
  EXPECT_NE(strict.exit_code, 0) << strict.output;
  EXPECT_TRUE(contains(strict.output, "ephost: error: INVALID_GRAPH:")) << strict.output;
  EXPECT_TRUE(contains(strict.output, "session.disable_ep_context_fallback=1")) << strict.output;
}

// An ONNX test case whose model.onnx is a ctx model compiled by the other SDK build: it passes on
// the fallback, and `ephost test` says why the context was not used.
TEST(EpContextTools, TestPrintsTheInvalidGraphDiagnosticOfACase) {
  TempDir root;
  const std::string case_dir = root.file("test_ctx_chain");
  ephost_test::fs::create_directories(case_dir + "/test_data_set_0");
  const std::string source = ephost_test::chain_model(2, 3).save(root, "test_ctx_chain/chain.onnx");
  ASSERT_EQ(ephost("compile " + quoted(source) + " -o " + quoted(case_dir + "/model.onnx"), kSdk2).exit_code, 0);
  const std::vector<float> x = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 2.0f};
  write_tensor(case_dir + "/test_data_set_0/input_0.pb", "x", {2, 3}, x);
  write_tensor(case_dir + "/test_data_set_0/output_0.pb", "y", {2, 3}, ephost_test::chain_expected(x, 3));

  Result r = ephost("test " + quoted(case_dir), kSdk1, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 passed, 0 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "WARN test_ctx_chain: EPContext node '")) << r.output;
  EXPECT_TRUE(contains(r.output, "INVALID_GRAPH: ep_sdk_version")) << r.output;
}

TEST(EpContextTools, WeightSharingToolGivesNPlusOneFilesWithTheWeightsOnce) {
  TempDir single, group;
  ASSERT_EQ(ephost("compile " + quoted(save_chain(single, "a.onnx", 1000))).exit_code, 0);
  const auto single_size = ephost_test::fs::file_size(single.file("a_example.bin"));

  const std::string a = save_chain(group, "a.onnx", 1000), b = save_chain(group, "b.onnx", 1000);
  Result r = ctx_gen("-e example " + quoted(a + "," + b));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(files_in(group.path()),
            (std::set<std::string>{"a.onnx", "b.onnx", "a_ctx.onnx", "b_ctx.onnx", "a_example.bin"}));
  EXPECT_TRUE(contains(r.output, "3 file(s) written")) << r.output;
  // Both models' weights are identical: the shared binary stores them once.
  const auto shared_size = ephost_test::fs::file_size(group.file("a_example.bin"));
  EXPECT_LT(shared_size, single_size + single_size / 2) << "single " << single_size << ", shared " << shared_size;

  for (const char* ctx : {"a_ctx.onnx", "b_ctx.onnx"}) {
    Result run = ephost("run " + quoted(group.file(ctx)));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_FALSE(contains(run.output, "INVALID_GRAPH")) << run.output;
  }
}

TEST(EpContextTools, WeightSharingToolRefusesExistingOutputsUnlessForced) {
  TempDir dir;
  const std::string models = quoted(save_chain(dir, "a.onnx") + "," + save_chain(dir, "b.onnx"));
  ASSERT_EQ(ctx_gen("-e example " + models).exit_code, 0);
  const std::string before = read_file(dir.file("a_example.bin"));

  Result again = ctx_gen("-e example " + models);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_TRUE(contains(again.output, "outputs exist already")) << again.output;
  EXPECT_TRUE(contains(again.output, "--force")) << again.output;
  EXPECT_EQ(read_file(dir.file("a_example.bin")), before);

  Result forced = ctx_gen("-e example --force " + models);
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
}

TEST(EpContextTools, WeightSharingToolPassesProviderOptionsToThePlugin) {
  TempDir dir;
  // claim= (empty): the example plugin takes no node, so there is nothing to share.
  Result r = ctx_gen("-e example -i 'claim|' " + quoted(save_chain(dir, "a.onnx") + "," + save_chain(dir, "b.onnx")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "cached no compiled part of these models")) << r.output;
  EXPECT_FALSE(exists(dir.file("a_example.bin")));
}

TEST(EpContextTools, WeightSharingToolWithModelsInTwoFoldersPrintsTheHostError) {
  TempDir one, two;
  Result r = ctx_gen("-e example " + quoted(save_chain(one, "a.onnx") + "," + save_chain(two, "b.onnx")));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "INVALID_ARGUMENT")) << r.output;
  EXPECT_TRUE(contains(r.output, "must write their ctx models into one folder")) << r.output;
}


// ---- what hostile ctx models and interrupted compiles leave behind (issue 12) ---------------------------

// A process id that is surely gone: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(EpContextTools, StaleTemporaryFilesAreRemovedWhenTheSameOutputIsWrittenAgain) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  // What a `kill -9` during an earlier compile left: temporaries of a writer that is gone, one of the
  // older naming (no process id) an hour old; and one of a writer still alive (this test), kept.
  const std::string stale_bin = dir.file(".chain_example.bin.tmp-" + std::to_string(dead_pid()) + "-AbC123");
  const std::string stale_ctx = dir.file(".chain_ctx.onnx.tmp-" + std::to_string(dead_pid()) + "-xYz789");
  const std::string old_style = dir.file(".chain_ctx.onnx.tmp-Q1w2E3");
  const std::string live = dir.file(".chain_ctx.onnx.tmp-" + std::to_string(getpid()) + "-LiVe00");
  for (const std::string& f : {stale_bin, stale_ctx, old_style, live}) std::ofstream(f) << std::string(4096, 'x');
  ephost_test::fs::last_write_time(old_style, std::time(nullptr) - 3600);
  Result r = ephost("compile " + quoted(model));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(exists(stale_bin));
  EXPECT_FALSE(exists(stale_ctx));
  EXPECT_FALSE(exists(old_style));
  EXPECT_TRUE(exists(live)) << "another writer's file in progress is left alone";
}

TEST(EpContextTools, OrphanBinaryIsReplacedWithoutForceAndABinaryInUseIsNot) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  const std::string ctx = dir.file("chain_ctx.onnx"), bin = dir.file("chain_example.bin");
  ASSERT_EQ(ephost("compile " + quoted(model)).exit_code, 0);
  // The ctx model records the checksum of the binary it uses.
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(read_file(ctx)));
  bool recorded = false;
  for (const auto& kv : written.metadata_props())
    recorded = recorded || (kv.key() == "ephost.context_binary_xxh64:chain_example.bin" && kv.value().size() == 16);
  EXPECT_TRUE(recorded);

  // Killed between the binary's rename and the model's: the binary belongs to no model.
  ASSERT_TRUE(ephost_test::fs::remove(ctx));
  Result again = ephost("compile " + quoted(model));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "belongs to no ctx model")) << again.output;
  EXPECT_TRUE(exists(ctx));

  // Another ctx model still uses it (a copy kept under another name): never replaced without --force.
  ephost_test::fs::copy_file(ctx, dir.file("kept_ctx.onnx"));
  ASSERT_TRUE(ephost_test::fs::remove(ctx));
  Result refused = ephost("compile " + quoted(model));
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_TRUE(contains(refused.output, "ctx model 'kept_ctx.onnx' uses it")) << refused.output;

  // ... unless the binary is no longer the one that model recorded (its checksum differs): an orphan.
  std::ofstream(bin, std::ios::binary | std::ios::app) << "changed";
  Result replaced = ephost("compile " + quoted(model));
  EXPECT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_TRUE(contains(replaced.output, "belongs to no ctx model")) << replaced.output;
}

TEST(EpContextTools, BinaryOfAnotherModelIsNeverTakenForThisOne) {
  // The .bin of one model replaced by another model's single-graph binary: the graph names differ, so
  // the context is refused (no single-graph guess), reported, and the source model runs instead.
  TempDir a, b;
  ASSERT_EQ(ephost("compile " + quoted(save_chain(a, "chain.onnx", 3))).exit_code, 0);
  // The same graph compiled from another file: its partitions are named after that model ("other_...").
  ASSERT_EQ(ephost("compile " + quoted(save_chain(b, "other.onnx", 3))).exit_code, 0);
  ephost_test::fs::copy_file(b.file("other_example.bin"), a.file("chain_example.bin"),
                             ephost_test::fs::copy_option::overwrite_if_exists);
  Result r = ephost("run " + quoted(a.file("chain_ctx.onnx")), kSdk1, false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "holds no graph")) << r.output;
  EXPECT_TRUE(contains(r.output, "fell back to")) << r.output;
  Result source = ephost("run " + quoted(a.file("chain.onnx")) + " --providers cpu");
  EXPECT_EQ(first_values(r.output), first_values(source.output));
}

TEST(EpContextTools, DuplicateEpContextNodeNamesAreRefusedAtLoad) {
  TempDir dir;
  ASSERT_EQ(ephost("compile " + quoted(save_chain(dir, "chain.onnx")) + " --embed").exit_code, 0);
  onnx::ModelProto ctx;
  ASSERT_TRUE(ctx.ParseFromString(read_file(dir.file("chain_ctx.onnx"))));
  // A second EPContext node with the first one's name, on a copy of the graph output.
  onnx::NodeProto copy = ctx.graph().node(0);
  for (auto& o : *copy.mutable_output()) o += "_copy";
  *ctx.mutable_graph()->add_node() = copy;
  std::ofstream(dir.file("dup_ctx.onnx"), std::ios::binary) << ctx.SerializeAsString();
  Result r = ephost("run " + quoted(dir.file("dup_ctx.onnx")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "INVALID_GRAPH")) << r.output;
  EXPECT_TRUE(contains(r.output, "are both named")) << r.output;
}

}  // namespace

namespace {

// `ephost run --dot` marks the EPContext node a provider loaded, and the nodes that stand in for one
// it rejected.
TEST(EpContextTools, DotMarksLoadedContextsAndFallbackNodes) {
  TempDir dir;
  const std::string model = save_chain(dir, "chain.onnx");
  ASSERT_EQ(ephost("compile " + quoted(model)).exit_code, 0);
  const std::string ctx = dir.file("chain_ctx.onnx");

  Result loaded = ephost("run " + quoted(ctx) + " --dot " + quoted(dir.file("loaded.dot")));
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  const std::string dot = read_file(dir.file("loaded.dot"));
  EXPECT_TRUE(contains(dot, "EPContext\\n(cached context)")) << dot;
  EXPECT_TRUE(contains(dot, "shape=box3d")) << dot;
  EXPECT_FALSE(contains(dot, "fallback for")) << dot;

  // The other SDK build rejects the context: the five source nodes run instead, each marked.
  Result rejected = ephost("run " + quoted(ctx) + " --dot " + quoted(dir.file("rejected.dot")), kSdk2);
  ASSERT_EQ(rejected.exit_code, 0) << rejected.output;
  const std::string fallback = read_file(dir.file("rejected.dot"));
  size_t marked = 0;
  for (size_t at = fallback.find("\\nfallback for "); at != std::string::npos; at = fallback.find("\\nfallback for ", at + 1))
    ++marked;
  EXPECT_EQ(marked, 5u) << fallback;
  EXPECT_TRUE(contains(fallback, "was rejected (INVALID_GRAPH)")) << fallback;
  EXPECT_FALSE(contains(fallback, "(cached context)")) << fallback;
}

}  // namespace
