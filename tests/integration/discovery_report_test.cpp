// The discovery report through the C API: the built-in CPU plugin is listed, broken libraries are
// skipped with their reasons, and none of them stops discovery; each entry says where its verdict came
// from (the registry cache, how old, or why it was probed again).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "test_support.h"

namespace {

TEST(DiscoveryReport, BrokenPluginsAreSkippedWithReasonsAndGoodOnesLoad) {
  ephost_test::TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_alpha", "ephost_test_beta", "ephost_broken_no_entry",
                                     "ephost_broken_refuses", "ephost_broken_newer_abi", "ephost_broken_throws"});
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{dir.path()});
  auto report = nlohmann::json::parse(env.plugin_report_json());
  std::map<std::string, nlohmann::json> by_file;
  bool cpu_listed = false;
  for (const auto& r : report) {
    std::string path = r["path"];
    by_file[path.substr(path.find_last_of('/') + 1)] = r;
    if (r["name"].get<std::string>().find("cpu") != std::string::npos && r["loaded"].get<bool>()) cpu_listed = true;
  }
  EXPECT_TRUE(cpu_listed) << report.dump(2);
  EXPECT_TRUE(by_file["libephost_test_alpha.so"]["loaded"].get<bool>());
  EXPECT_TRUE(by_file["libephost_test_beta.so"]["loaded"].get<bool>());
  for (const char* broken : {"libephost_broken_no_entry.so", "libephost_broken_refuses.so",
                             "libephost_broken_newer_abi.so", "libephost_broken_throws.so"}) {
    ASSERT_TRUE(by_file.count(broken)) << broken;
    EXPECT_FALSE(by_file[broken]["loaded"].get<bool>()) << broken;
    EXPECT_FALSE(by_file[broken]["reason"].get<std::string>().empty()) << broken;
  }
  EXPECT_NE(by_file["libephost_broken_no_entry.so"]["reason"].get<std::string>().find("ephost_plugin_negotiate"),
            std::string::npos);
  EXPECT_NE(by_file["libephost_broken_newer_abi.so"]["reason"].get<std::string>().find("99"), std::string::npos);
  EXPECT_NE(by_file["libephost_broken_throws.so"]["reason"].get<std::string>().find("describe exploded"),
            std::string::npos);
  // The structured report agrees with the JSON.
  size_t loaded = 0;
  for (const auto& r : env.plugin_reports()) loaded += r.loaded ? 1 : 0;
  EXPECT_EQ(loaded, 3u);  // cpu, alpha, beta
}

TEST(DiscoveryReport, ExplicitRegistrationReportsFailure) {
  Ephost::Env env(EPHOST_LOG_FATAL, std::vector<std::string>{});
  EXPECT_THROW(env.register_plugin(ephost_test::test_plugin("ephost_broken_no_entry")), Ephost::Exception);
  env.register_plugin(ephost_test::test_plugin("ephost_test_alpha"));
  auto reports = env.plugin_reports();
  ASSERT_EQ(reports.size(), 3u);  // cpu, the broken one, alpha
}

// cached / probed_at / age_s / probed_again (discovery/report_json.h), and the env option that probes
// everything again (kEphostEnvOptionsPluginRescan).
TEST(DiscoveryReport, SaysWhereEachVerdictCameFrom) {
  ephost_test::TempDir dir, cache;
  ephost_test::install_plugins(dir, {"ephost_test_alpha", "ephost_broken_refuses"});
  const std::vector<std::string> dirs{dir.path()};
  auto report_of = [&](std::vector<std::pair<std::string, std::string>> options) {
    options.emplace_back(kEphostEnvOptionsPluginRegistry, cache.file("registry.json"));
    Ephost::Env env(EPHOST_LOG_FATAL, &dirs, options);
    std::map<std::string, nlohmann::json> by_file;
    for (const auto& r : nlohmann::json::parse(env.plugin_report_json())) {
      const std::string path = r["path"];
      by_file[r["builtin"] == true ? "builtin" : path.substr(path.find_last_of('/') + 1)] = r;
    }
    return by_file;
  };
  auto cold = report_of({});
  for (const char* file : {"libephost_test_alpha.so", "libephost_broken_refuses.so"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(cold[file]["cached"], false);
    EXPECT_TRUE(cold[file]["probed_at"].is_number_integer()) << cold[file].dump();
    EXPECT_LT(cold[file]["age_s"].get<int64_t>(), 60) << cold[file].dump();
    EXPECT_EQ(cold[file]["probed_again"], "");
  }
  EXPECT_TRUE(cold["builtin"]["probed_at"].is_null()) << cold["builtin"].dump();
  EXPECT_TRUE(cold["builtin"]["age_s"].is_null()) << cold["builtin"].dump();

  auto warm = report_of({});
  for (const char* file : {"libephost_test_alpha.so", "libephost_broken_refuses.so"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(warm[file]["cached"], true) << warm[file].dump();
    EXPECT_EQ(warm[file]["probed_at"], cold[file]["probed_at"]) << warm[file].dump();
    EXPECT_EQ(warm[file]["probed_again"], "");
  }

  auto rescanned = report_of({{kEphostEnvOptionsPluginRescan, "1"}});
  for (const char* file : {"libephost_test_alpha.so", "libephost_broken_refuses.so"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(rescanned[file]["cached"], false) << rescanned[file].dump();
    EXPECT_EQ(rescanned[file]["probed_by"], "scanner") << rescanned[file].dump();
    EXPECT_EQ(rescanned[file]["probed_again"], "a rescan was asked for") << rescanned[file].dump();
  }
  EXPECT_EQ(rescanned["libephost_test_alpha.so"]["loaded"], true);
  EXPECT_EQ(rescanned["libephost_broken_refuses.so"]["loaded"], false);
}

TEST(DiscoveryReport, AnInvalidRescanValueIsRefused) {
  const std::vector<std::string> dirs;
  try {
    Ephost::Env env(EPHOST_LOG_FATAL, &dirs, {{kEphostEnvOptionsPluginRescan, "yes"}});
    ADD_FAILURE() << "env.plugin_rescan=yes was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("env.plugin_rescan"), std::string::npos) << e.what();
  }
}

}  // namespace
