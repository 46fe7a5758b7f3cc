// The `ephost` command as a user runs it: plugins --json, run --report, test (pass and fail, random
// ops), bench --json.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.h"

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

}  // namespace
