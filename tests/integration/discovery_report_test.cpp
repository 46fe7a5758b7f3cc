// The discovery report through the C API: the built-in CPU plugin is listed, broken libraries are
// skipped with their reasons, and none of them stops discovery.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
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

}  // namespace
