// One home for options: the public key header, the host's list of known keys and README's option
// table agree; misspelled host keys fail with the closest known key; values are checked once;
// provider options are forwarded and unknown providers warned about.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ephost/ephost_session_options_keys.h"
#include "model_builders.h"
#include "env/env.h"
#include "graph/graph.h"
#include "options/option_keys.h"
#include "provider_selection/provider_setup.h"
#include "options/session_config.h"
#include "test_paths.h"

using namespace ephost;
using namespace ephost_test;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(EPHOST_SOURCE_DIR) + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> header_keys() {
  // static const char* const kEphost... = "key";  (possibly with the string on the next line)
  const std::string text = read_source("plugin_api/include/ephost/ephost_session_options_keys.h");
  std::set<std::string> keys;
  std::regex constant(R"(static const char\* const kEphostSessionOptions\w+\s*=\s*"([^"]+)\";)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), constant); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1]);
  return keys;
}

std::set<std::string> readme_keys() {
  // Rows of the "### Session options" table: | `key`[, `key`] | meaning |
  const std::string text = read_source("README.md");
  const size_t start = text.find("### Session options");
  EXPECT_NE(start, std::string::npos);
  std::set<std::string> keys;
  std::istringstream lines(text.substr(start));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (line.rfind("#", 0) == 0) break;
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first_column = line.substr(0, line.find('|', 1));
    std::regex key("`([^`]+)`");
    for (auto it = std::sregex_iterator(first_column.begin(), first_column.end(), key); it != std::sregex_iterator(); ++it)
      keys.insert((*it)[1]);
  }
  return keys;
}

}  // namespace

TEST(SessionConfig, HeaderKnownKeysAndReadmeAgree) {
  std::set<std::string> known;
  for (const OptionKey& k : known_option_keys()) known.insert(k.key);
  std::set<std::string> header = header_keys();
  ASSERT_TRUE(header.erase(kEphostSessionOptionsProviderOptionPrefix)) << "the provider option prefix";
  ASSERT_TRUE(header.erase(kEphostSessionOptionsFreeDimensionOverridePrefix)) << "a prefix of keys";
  ASSERT_TRUE(header.erase(kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix)) << "a prefix of keys";
  EXPECT_EQ(header, known) << "every key of ephost_session_options_keys.h is one the host knows, and back";
  std::set<std::string> readme = readme_keys();
  ASSERT_TRUE(readme.erase("ep.<provider>.<key>")) << "README documents provider options";
  ASSERT_TRUE(readme.erase(std::string(kEphostSessionOptionsFreeDimensionOverridePrefix) + "<name>"));
  ASSERT_TRUE(readme.erase(std::string(kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix) + "<denotation>"));
  EXPECT_EQ(readme, known) << "README.md's option table lists exactly the known keys";
}

TEST(SessionConfig, MisspelledHostKeyFailsWithTheClosestKnownKey) {
  SessionOptions options;
  expect_error([&] { options.set("session.disable_cpu_ep_fallbak", "1"); }, EPHOST_INVALID_ARGUMENT,
               {"unknown session option 'session.disable_cpu_ep_fallbak'", "did you mean 'session.disable_cpu_ep_fallback'"});
  expect_error([&] { options.set("ep.context_embedmode", "1"); }, EPHOST_INVALID_ARGUMENT,
               {"'ep.context_embed_mode'"});
  expect_error([&] { options.set("ep.share_ep_context", "1"); }, EPHOST_INVALID_ARGUMENT, {"'ep.share_ep_contexts'"});
  expect_error([&] { options.set("ep.stop_share_ep_context", "1"); }, EPHOST_INVALID_ARGUMENT,
               {"'ep.stop_share_ep_contexts'"});
  // Far from every known key: refused, without a misleading suggestion.
  expect_error([&] { options.set("session.something_else_entirely_xyz", "1"); }, EPHOST_INVALID_ARGUMENT,
               {"unknown session option"});
  EXPECT_EQ(closest_option_key("session.something_else_entirely_xyz"), "");
  EXPECT_TRUE(options.config.empty()) << "nothing refused was stored";

  // A struct filled in by hand is checked when parsed.
  SessionOptions by_hand;
  by_hand.config["session.enable_mem_patern"] = "0";
  expect_error([&] { parse_session_config(by_hand); }, EPHOST_INVALID_ARGUMENT, {"'session.enable_mem_pattern'"});
}

TEST(SessionConfig, EveryKnownKeyIsAccepted) {
  SessionOptions options;
  for (const OptionKey& k : known_option_keys()) EXPECT_NO_THROW(options.set(k.key, "0")) << k.key;
}

TEST(SessionConfig, ValuesAreParsedOnceIntoTypedFields) {
  SessionOptions options;
  options.set(kEphostSessionOptionsDisableCpuEpFallback, "1");
  options.set(kEphostSessionOptionsEnableMemPattern, "0");
  options.set(kEphostSessionOptionsGraphOptimizationLevel, "1");
  options.set(kEphostSessionOptionsIntraOpNumThreads, "3");
  options.set(kEphostSessionOptionsEpContextEnable, "1");
  options.set(kEphostSessionOptionsEpContextNodeNamePrefix, "pre_");
  options.set(kEphostSessionOptionsDisableEpContextFallback, "1");
  options.set("ep.example.block_size", "64");
  options.set("ep.Example.mode", "fast");
  const SessionConfig c = parse_session_config(options);
  EXPECT_FALSE(c.cpu_fallback);
  EXPECT_FALSE(c.mem_pattern);
  EXPECT_TRUE(c.mem_reuse);
  EXPECT_EQ(c.optimization_level, 1);
  EXPECT_EQ(c.threads, 3);
  EXPECT_TRUE(c.ep_context.enable);
  EXPECT_EQ(c.ep_context.node_prefix, "pre_");
  EXPECT_TRUE(c.ep_context.disable_fallback);
  ASSERT_EQ(c.provider_entries.size(), 2u);
  EXPECT_EQ(c.provider_entries[0].provider, "Example");
  EXPECT_EQ(c.provider_entries[0].key, "mode");
  EXPECT_EQ(c.provider_entries[1].provider, "example");
  EXPECT_EQ(c.provider_entries[1].value, "64");
}

TEST(SessionConfig, BadValuesNameTheKey) {
  auto parse_one = [](const char* key, const char* value) {
    SessionOptions options;
    options.set(key, value);
    return parse_session_config(options);
  };
  expect_error([&] { parse_one(kEphostSessionOptionsEnableMemReuse, "yes"); }, EPHOST_INVALID_ARGUMENT,
               {"session.enable_mem_reuse", "\"0\" or \"1\"", "\"yes\""});
  expect_error([&] { parse_one(kEphostSessionOptionsGraphOptimizationLevel, "3"); }, EPHOST_INVALID_ARGUMENT,
               {"0, 1, 2 or 99", "\"3\""});
  expect_error([&] { parse_one(kEphostSessionOptionsIntraOpNumThreads, "2x"); }, EPHOST_INVALID_ARGUMENT,
               {"must be an integer", "\"2x\""});
  expect_error([&] { parse_one(kEphostSessionOptionsIntraOpNumThreads, "-1"); }, EPHOST_INVALID_ARGUMENT, {">= 0"});
  expect_error([&] { parse_one("ep.nodot", "1"); }, EPHOST_INVALID_ARGUMENT, {"'ep.nodot'", "ep.<provider>.<key>"});
}

TEST(SessionConfig, ProviderOptionsForAnUnknownProviderAreWarnedAbout) {
  std::vector<std::string> no_plugin_dirs;
  Env env(EPHOST_LOG_WARNING, &no_plugin_dirs);
  SessionOptions options;
  options.set("ep.nosuch.level", "3");
  options.set("ep.CPU.something", "1");  // the CPU plugin, named in another case: forwarded, no warning
  testing::internal::CaptureStderr();
  Graph graph;  // asked about only by max_coverage's dry run
  SessionProviders providers = create_providers(env.registry(), parse_session_config(options), graph);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("'ep.nosuch.level' names provider 'nosuch', which no loaded plugin offers"), std::string::npos)
      << err;
  EXPECT_NE(err.find("loaded providers: cpu"), std::string::npos) << err;
  EXPECT_EQ(err.find("CPU"), std::string::npos) << err;
  ASSERT_EQ(providers.names, std::vector<std::string>{"cpu"});
}
