// The `ephost` command as a user runs it: plugins --json (and where each verdict came from, --rescan),
// run --report, test (pass and fail, random ops), bench --json; and the conformance kit, which never
// trusts the user's plugin registry.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "test_support.h"
#include "test_paths.h"

namespace {

using ephost_test::ModelBuilder;
using ephost_test::TempDir;
using json = nlohmann::json;

using Result = ephost_test::CommandResult;
using ephost_test::write_tensor;

// Runs the command; stderr (logs, e.g. discovery warnings) is kept apart unless merge_stderr.
Result ephost(const std::string& args, const std::string& env = "", bool merge_stderr = true) {
  std::string cmd = env + " '" + std::string(EPHOST_CLI_PATH) + "' " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  return ephost_test::run_command(cmd);
}


// An ONNX backend test case: y = relu(x); `expected` is what output_0.pb claims.
void make_case(const TempDir& root, const std::string& name, const std::vector<float>& expected) {
  ephost_test::fs::create_directories(root.file(name + "/test_data_set_0"));
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {4}).output("y", onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  std::ofstream(root.file(name + "/model.onnx"), std::ios::binary) << m.bytes();
  write_tensor(root.file(name + "/test_data_set_0/input_0.pb"), "x", {4}, {-1, 2, -3, 4});
  write_tensor(root.file(name + "/test_data_set_0/output_0.pb"), "y", {4}, expected);
}

TEST(Cli, PluginsJsonListsTheBuiltInCpuPluginAndSkips) {
  TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_alpha", "ephost_broken_newer_abi"});
  Result r = ephost("plugins --json", "EPHOST_PLUGIN_PATH='" + dir.path() + "'", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json report = json::parse(r.output);
  bool cpu = false, alpha = false, broken_skipped = false;
  for (const auto& p : report) {
    std::string name = p["name"];
    if (name.find("cpu") != std::string::npos && p["loaded"].get<bool>()) cpu = true;
    if (name == "alpha" && p["loaded"].get<bool>()) alpha = true;
    if (p["path"].get<std::string>().find("broken_newer_abi") != std::string::npos)
      broken_skipped = !p["loaded"].get<bool>() && !p["reason"].get<std::string>().empty();
  }
  EXPECT_TRUE(cpu) << r.output;
  EXPECT_TRUE(alpha) << r.output;
  EXPECT_TRUE(broken_skipped) << r.output;
}

TEST(Cli, RunWithReportShowsThePartition) {
  TempDir dir, models;
  ephost_test::install_plugins(dir, {"ephost_test_alpha"});
  std::string model = ephost_test::chain_model(2, 3).save(models);
  Result r = ephost("run '" + model + "' --report", "EPHOST_PLUGIN_PATH='" + dir.path() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("alpha"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sigmoid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("y"), std::string::npos) << r.output;
}

TEST(Cli, RunWithUnknownProviderFailsClearly) {
  TempDir models;
  std::string model = ephost_test::chain_model(2, 3).save(models);
  Result r = ephost("run '" + model + "' --providers nosuch");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("INVALID_ARGUMENT"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nosuch"), std::string::npos) << r.output;
}

TEST(Cli, TestCountsPassesAndFailures) {
  TempDir root;
  make_case(root, "test_relu_good", {0, 2, 0, 4});
  make_case(root, "test_relu_bad", {0, 2, 0, 5});
  Result r = ephost("test '" + root.path() + "'");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 passed, 1 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test_relu_bad"), std::string::npos) << r.output;
  Result good = ephost("test '" + root.file("test_relu_good") + "'");
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("1 passed, 0 failed"), std::string::npos) << good.output;
}

// `ephost test` on a model file is no test case: refused (usage error) naming `ephost run`, never
// "0 passed, 1 skipped" with exit 0. A case's own model.onnx stands for its folder.
TEST(Cli, TestRefusesAModelFileAndFailsWhenNothingRan) {
  TempDir root, models;
  make_case(root, "test_relu_good", {0, 2, 0, 4});
  const std::string model = ephost_test::chain_model(2, 3).save(models);
  Result file = ephost("test '" + model + "'");
  EXPECT_EQ(file.exit_code, 2) << file.output;
  EXPECT_NE(file.output.find("is a file, not an ONNX test case"), std::string::npos) << file.output;
  EXPECT_NE(file.output.find("ephost run"), std::string::npos) << file.output;

  Result case_model = ephost("test '" + root.file("test_relu_good/model.onnx") + "'");
  EXPECT_EQ(case_model.exit_code, 0) << case_model.output;
  EXPECT_NE(case_model.output.find("1 passed, 0 failed"), std::string::npos) << case_model.output;

  // A case folder without test_data_set_* folders is skipped: nothing ran, which is a failure.
  ephost_test::fs::create_directories(root.file("no_data/test_empty"));
  ephost_test::fs::copy_file(model, root.file("no_data/test_empty/model.onnx"));
  Result skipped = ephost("test '" + root.file("no_data") + "'");
  EXPECT_EQ(skipped.exit_code, 1) << skipped.output;
  EXPECT_NE(skipped.output.find("0 passed, 0 failed, 1 skipped"), std::string::npos) << skipped.output;
  EXPECT_NE(skipped.output.find("no test case ran (1 skipped)"), std::string::npos) << skipped.output;
}

void write_bool(const std::string& path, const std::string& name, bool value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::BOOL);
  t.add_int32_data(value ? 1 : 0);
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

// y = Dropout(x, ratio 0, training_mode): fed as input `t` (nondeterministic), or an initializer
// holding false (deterministic). `expected` (of `dims`) is what output_0.pb claims.
void make_dropout_case(const TempDir& root, const std::string& name, bool training_is_input,
                       const std::vector<int64_t>& dims, const std::vector<float>& expected) {
  ephost_test::fs::create_directories(root.file(name + "/test_data_set_0"));
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {4});
  if (training_is_input) m.input("t", onnx::TensorProto::BOOL, {});
  m.output("y", onnx::TensorProto::FLOAT, {4}).initializer("ratio", {}, {0.0f});
  if (!training_is_input) {
    auto* off = m.proto().mutable_graph()->add_initializer();
    off->set_name("t");
    off->set_data_type(onnx::TensorProto::BOOL);
    off->add_int32_data(0);
  }
  m.node("Dropout", {"x", "ratio", "t"}, {"y"}, "dropout");
  std::ofstream(root.file(name + "/model.onnx"), std::ios::binary) << m.bytes();
  write_tensor(root.file(name + "/test_data_set_0/input_0.pb"), "x", {4}, {-1, 2, -3, 4});
  if (training_is_input) write_bool(root.file(name + "/test_data_set_0/input_1.pb"), "t", true);
  write_tensor(root.file(name + "/test_data_set_0/output_0.pb"), "y", dims, expected);
}

// Values of random ops cannot be reproduced: such models are judged by output type and shape.
TEST(Cli, TestComparesNondeterministicModelsByTypeAndShape) {
  TempDir root;
  make_dropout_case(root, "test_training_values_differ", true, {4}, {9, 9, 9, 9});
  make_dropout_case(root, "test_training_shape_differs", true, {2, 2}, {-1, 2, -3, 4});
  make_dropout_case(root, "test_inference_values_differ", false, {4}, {9, 9, 9, 9});
  Result r = ephost("test -v '" + root.path() + "'");
  EXPECT_NE(r.output.find("1 passed, 2 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PASS test_training_values_differ"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nondeterministic ops (Dropout): outputs compared by type and shape only"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("FAIL test_training_shape_differs: output 0 'y': shape"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAIL test_inference_values_differ: output 0 'y': max abs diff"), std::string::npos)
      << r.output;
}

TEST(Cli, BenchJsonHasTheTimings) {
  TempDir models;
  std::string model = ephost_test::chain_model(8, 8).save(models);
  Result r = ephost("bench '" + model + "' --repeat 5 --warmup 1 --threads 1 --json", "", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_TRUE(j.contains("session_create_ms"));
  EXPECT_TRUE(j.contains("run_ms_median"));
  EXPECT_GT(j["run_ms_median"].get<double>(), 0.0);
}

TEST(Cli, BenchTakesAFreeDimensionOverrideInPlaceOfShapes) {
  TempDir models;
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4}).output("y", onnx::TensorProto::FLOAT, {-1, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string model = m.save(models);
  Result symbolic = ephost("bench '" + model + "' --repeat 1 --warmup 0 --threads 1 --json");
  EXPECT_NE(symbolic.exit_code, 0) << "a symbolic dim needs --shape or an override: " << symbolic.output;
  Result r = ephost("bench '" + model + "' --repeat 1 --warmup 0 --threads 1 --json --option "
                    "session.free_dimension_override.N=3", "", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(json::parse(r.output)["run_ms_median"].get<double>(), 0.0);
}

// ---- where plugin verdicts come from (the registry cache: discovery/verdict_freshness.h) --------------

// Reads and writes a registry file as JSON.
json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}
void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(1); }

// The registry entry whose path ends with `file_name`.
json& registry_entry(json& registry, const std::string& file_name) {
  for (json& e : registry["libraries"]) {
    const std::string path = e["path"];
    if (path.size() >= file_name.size() && path.compare(path.size() - file_name.size(), file_name.size(), file_name) == 0)
      return e;
  }
  throw std::runtime_error("no registry entry for " + file_name + " in " + registry.dump(1));
}

// The report entry whose path ends with `file_name`.
json report_entry(const std::string& report_text, const std::string& file_name) {
  for (const json& e : json::parse(report_text)) {
    const std::string path = e["path"];
    if (path.size() >= file_name.size() && path.compare(path.size() - file_name.size(), file_name.size(), file_name) == 0)
      return e;
  }
  ADD_FAILURE() << "no report entry for " << file_name << ":\n" << report_text;
  return json::object();
}

// FNV-1a 64 as the registry writes a variable's value (discovery/probe_context.h).
std::string fnv1a64_hex(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Built beside the CLI: build/tools/cli/ephost -> build/tools/plugin_cts/.
std::string plugin_cts_file(const std::string& name) {
  return (ephost_test::fs::path(EPHOST_CLI_PATH).parent_path().parent_path() / "plugin_cts" / name).string();
}

TEST(Cli, PluginsSaysWhichVerdictsAreCachedAndHowOld) {
  TempDir dir, cache;
  ephost_test::install_plugins(dir, {"ephost_test_alpha", "ephost_broken_negotiate_segfault"});
  const std::string registry = cache.file("registry.json");
  const std::string env = "EPHOST_PLUGIN_PATH='" + dir.path() + "' EPHOST_PLUGIN_REGISTRY='" + registry + "'";
  Result cold = ephost("plugins", env, false);
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  EXPECT_NE(cold.output.find("probed now"), std::string::npos) << cold.output;
  EXPECT_EQ(cold.output.find("cached verdict"), std::string::npos) << cold.output;

  // Three hours later (the verdicts say so).
  json j = read_json(registry);
  const int64_t three_hours_ago = static_cast<int64_t>(std::time(nullptr)) - 3 * 3600 - 10;
  for (json& e : j["libraries"]) e["probed_at"] = three_hours_ago;
  write_json(registry, j);
  Result warm = ephost("plugins", env, false);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_NE(warm.output.find("cached, 3 h old"), std::string::npos) << warm.output;
  EXPECT_NE(warm.output.find("libephost_broken_negotiate_segfault.so: crashed during negotiation: killed by SIGSEGV "
                             "(segmentation fault) (cached verdict, 3 h old; `ephost plugins --rescan` probes again)"),
            std::string::npos)
      << warm.output;
  Result warm_json = ephost("plugins --json", env, false);
  ASSERT_EQ(warm_json.exit_code, 0) << warm_json.output;
  for (const char* file : {"libephost_test_alpha.so", "libephost_broken_negotiate_segfault.so"}) {
    const json e = report_entry(warm_json.output, file);
    EXPECT_EQ(e["cached"], true) << e.dump();
    EXPECT_EQ(e["probed_at"], three_hours_ago) << e.dump();
    EXPECT_GE(e["age_s"].get<int64_t>(), 3 * 3600) << e.dump();
    EXPECT_EQ(e["probed_again"], "") << e.dump();
  }
  // The built-in plugin was never probed.
  for (const json& e : json::parse(warm_json.output))
    if (e["builtin"] == true) {
      EXPECT_EQ(e["cached"], false) << e.dump();
      EXPECT_TRUE(e["probed_at"].is_null()) << e.dump();
      EXPECT_TRUE(e["age_s"].is_null()) << e.dump();
    }
}

TEST(Cli, PluginsRescanProbesEverythingAgainAndStoresTheFreshVerdicts) {
  TempDir dir, cache;
  ephost_test::install_plugins(dir, {"ephost_test_alpha", "ephost_broken_negotiate_segfault"});
  const std::string registry = cache.file("registry.json");
  const std::string env = "EPHOST_PLUGIN_PATH='" + dir.path() + "' EPHOST_PLUGIN_REGISTRY='" + registry + "'";
  ASSERT_EQ(ephost("plugins", env, false).exit_code, 0);
  json j = read_json(registry);
  const int64_t long_ago = static_cast<int64_t>(std::time(nullptr)) - 5 * 3600;
  for (json& e : j["libraries"]) e["probed_at"] = long_ago;
  write_json(registry, j);

  Result rescan = ephost("plugins --rescan", env, false);
  ASSERT_EQ(rescan.exit_code, 0) << rescan.output;
  EXPECT_NE(rescan.output.find("probed again:\n"), std::string::npos) << rescan.output;
  EXPECT_NE(rescan.output.find("libephost_test_alpha.so: a rescan was asked for"), std::string::npos) << rescan.output;
  EXPECT_NE(rescan.output.find("libephost_broken_negotiate_segfault.so: a rescan was asked for"), std::string::npos)
      << rescan.output;
  EXPECT_EQ(rescan.output.find("cached verdict"), std::string::npos) << rescan.output;
  // The fresh verdicts are stored: the next command finds them, new.
  json after = read_json(registry);
  for (const char* file : {"libephost_test_alpha.so", "libephost_broken_negotiate_segfault.so"})
    EXPECT_GT(registry_entry(after, file)["probed_at"].get<int64_t>(), long_ago) << file;
  Result next = ephost("plugins --json", env, false);
  const json alpha = report_entry(next.output, "libephost_test_alpha.so");
  EXPECT_EQ(alpha["cached"], true) << alpha.dump();
  EXPECT_LT(alpha["age_s"].get<int64_t>(), 600) << alpha.dump();
  Result rescan_json = ephost("plugins --json --rescan", env, false);
  const json again = report_entry(rescan_json.output, "libephost_test_alpha.so");
  EXPECT_EQ(again["cached"], false) << again.dump();
  EXPECT_EQ(again["probed_by"], "scanner") << again.dump();
  EXPECT_EQ(again["probed_again"], "a rescan was asked for") << again.dump();
}

// Issue 22: the conformance kit's observer refuses negotiation without EPHOST_CTS_TARGET. A discovery run
// over its folder without the variable recorded that refusal; it must not outlive its cause: with the
// variable set, the same file is probed again and accepted.
TEST(Cli, ObserverRefusedWithoutItsTargetIsAcceptedOnceTheTargetIsSet) {
  const std::string observer = plugin_cts_file("libephost_cts_observer.so");
  if (!ephost_test::fs::exists(observer)) GTEST_SKIP() << "the conformance kit's observer is not built: " << observer;
  TempDir dir, cache;
  ephost_test::fs::copy_file(observer, dir.file("libephost_cts_observer.so"));
  const std::string env = "env -u EPHOST_CTS_TARGET EPHOST_PLUGIN_PATH='" + dir.path() + "' EPHOST_PLUGIN_REGISTRY='" +
                          cache.file("registry.json") + "'";
  Result without = ephost("plugins --json", env, false);
  ASSERT_EQ(without.exit_code, 0) << without.output;
  const json refused = report_entry(without.output, "libephost_cts_observer.so");
  EXPECT_EQ(refused["loaded"], false) << refused.dump();
  EXPECT_EQ(refused["probe_outcome"], "refused") << refused.dump();
  EXPECT_NE(refused["reason"].get<std::string>().find("EPHOST_CTS_TARGET names no plugin"), std::string::npos)
      << refused.dump();
  // Still refused, from the cache, while nothing changed.
  const json cached = report_entry(ephost("plugins --json", env, false).output, "libephost_cts_observer.so");
  EXPECT_EQ(cached["cached"], true) << cached.dump();
  EXPECT_EQ(cached["loaded"], false) << cached.dump();

  const std::string with_target = env + " EPHOST_CTS_TARGET='" + ephost_test::test_plugin("ephost_test_alpha") + "'";
  Result text = ephost("plugins", with_target, false);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("probed again:\n  " + dir.file("libephost_cts_observer.so") +
                             ": the environment changed (EPHOST_CTS_TARGET)"),
            std::string::npos)
      << text.output;
  const json accepted = report_entry(ephost("plugins --json", with_target, false).output, "libephost_cts_observer.so");
  EXPECT_EQ(accepted["loaded"], true) << accepted.dump();
  EXPECT_EQ(accepted["name"], "alpha") << "the observer describes itself as its target: " << accepted.dump();
  EXPECT_EQ(accepted["cached"], true) << "the fresh verdict was stored: " << accepted.dump();
}

// The kit uses a registry of its own: a refusal of its observer in the user's registry, one a host with
// the kit's very environment would trust, does not fail the kit, and the kit writes nothing there.
TEST(Cli, PluginCtsIgnoresARefusalOfItsObserverInTheUsersRegistry) {
  const std::string kit = plugin_cts_file("ephost-plugin-cts");
  const std::string observer = plugin_cts_file("libephost_cts_observer.so");
  if (!ephost_test::fs::exists(kit) || !ephost_test::fs::exists(observer))
    GTEST_SKIP() << "the conformance kit is not built: " << kit;
  TempDir dir, cache, cases;
  ephost_test::fs::copy_file(observer, dir.file("libephost_cts_observer.so"));
  make_case(cases, "test_relu", {0, 2, 0, 4});
  const std::string user_registry = cache.file("user-registry.json");
  const std::string target = ephost_test::test_plugin("ephost_test_alpha");
  // The same environment for every command below (the variables of a probe's context).
  const std::string common = "env -u EPHOST_CTS_TARGET EPHOST_PLUGIN_PATH='" + dir.path() +
                             "' EPHOST_PLUGIN_REGISTRY='" + user_registry + "' EPHOST_CTS_OBSERVER='" +
                             dir.file("libephost_cts_observer.so") + "'";

  // Poison: a discovery run records the observer refused; the entry is then made to say it was refused
  // under the kit's own EPHOST_CTS_TARGET, so that only a private registry keeps the kit from it.
  ASSERT_EQ(ephost("plugins", common + " EPHOST_CTS_TARGET=/nonexistent/libnothing.so", false).exit_code, 0);
  json poisoned = read_json(user_registry);
  json& entry = registry_entry(poisoned, "libephost_cts_observer.so");
  ASSERT_EQ(entry["probe"]["outcome"], "refused") << entry.dump();
  entry["probe"]["reason"] = "poisoned: a refusal the conformance kit must not trust";
  entry["context"]["environment"]["EPHOST_CTS_TARGET"] = fnv1a64_hex(target);
  write_json(user_registry, poisoned);
  const std::string with_target = common + " EPHOST_CTS_TARGET='" + target + "'";
  const json trusted = report_entry(ephost("plugins --json", with_target, false).output, "libephost_cts_observer.so");
  ASSERT_EQ(trusted["cached"], true) << "the poison works on a host with the kit's environment: " << trusted.dump();
  ASSERT_EQ(trusted["loaded"], false) << trusted.dump();
  std::ifstream before_in(user_registry);
  const std::string before((std::istreambuf_iterator<char>(before_in)), std::istreambuf_iterator<char>());

  Result r = ephost_test::run_command(with_target + " '" + kit + "' '" + target + "' --section abi --cases '" +
                                      cases.path() + "' --timeout 60 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("poisoned"), std::string::npos) << r.output;
  std::ifstream after_in(user_registry);
  const std::string after((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, before) << "the kit wrote into the user's registry";
}

}  // namespace
