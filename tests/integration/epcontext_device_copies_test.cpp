// EPContext generation in a session whose plan has copy steps between devices (plugin ABI 3): the
// execution order then lists the host's copy steps after the compiled steps' ids, and generation must
// cache only the compiled groups (it once read the copy ids as compiled steps, past the end of the list).
// fakedev takes Add and Relu on its device, the example plugin compiles Mul and Sub into a fused group it
// caches: values cross between fakedev:0 and the host both ways.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "device_support.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_paths.h"

namespace {

using namespace ephost_test;
using json = nlohmann::json;

TEST(EpContextWithDeviceCopies, GenerationCachesTheCompiledGroupsAndTheCtxModelRunsTheSame) {
  unsetenv("FAKEDEV_UNPROTECTED");  // the trap stays armed: the host never touches device memory
  TempDir plugins, dir;
  install_plugins(plugins, {"ephost_test_fakedev"});
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{plugins.path(), EPHOST_EXAMPLE_PLUGIN_DIR});
  const std::string model = split_model().bytes();
  const std::string ctx = dir.file("split_ctx.onnx");
  std::vector<float> x = input_values(3);
  const std::vector<std::pair<std::string, std::string>> claims = {{"ep.fakedev.claim", "Add,Relu"}};

  std::vector<float> reference;
  {
    Ephost::Session cpu(env, model.data(), model.size(), options_with({"cpu"}));
    reference = cpu.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>();
  }
  {
    auto config = claims;
    config.emplace_back(kEphostSessionOptionsEpContextEnable, "1");
    config.emplace_back(kEphostSessionOptionsEpContextFilePath, ctx);
    Ephost::Session s(env, model.data(), model.size(), options_with({"fakedev", "example", "cpu"}, config));
    const json report = json::parse(s.partition_report_json());
    ASSERT_GT(report["copies_planned"].get<int>(), 0) << "the plan copies between fakedev:0 and the host";
    EXPECT_EQ(node_providers(report)["mul"], "example");
    EXPECT_EQ(node_providers(report)["add"], "fakedev");
    expect_same_floats(s.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>(), reference, "y");
  }
  ASSERT_TRUE(fs::exists(ctx));
  Ephost::Session loaded(env, ctx, options_with({"fakedev", "example", "cpu"}, claims));
  const json contexts = json::parse(loaded.ep_context_report_json());
  ASSERT_EQ(contexts.size(), 1u) << "one EPContext node: the example plugin's group; fakedev caches nothing";
  EXPECT_EQ(contexts[0]["verdict"], "optimal");
  expect_same_floats(loaded.run({"x"}, {host_tensor(x)}, {"y"})[0].to_vector<float>(), reference, "y");
}

}  // namespace
