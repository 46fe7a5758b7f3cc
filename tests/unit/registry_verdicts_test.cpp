// No verdict of the plugin registry cache outlives its cause (discovery/verdict_freshness.h): a refusal or
// a timeout records the context it was probed under (discovery/probe_context.h) and is probed again when
// the environment or the device list changed, or once it is older than its backoff; a crash stays cached
// until the file changes; a rescan probes everything again; the report says where each verdict came from.
// The test plugin ephost_broken_needs_env refuses negotiation unless EPHOST_TEST_PLUGIN_READY is set, as
// the conformance kit's observer refuses without EPHOST_CTS_TARGET. Every test has its own registry file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "discovery/probe_context.h"
#include "discovery/plugin_registry.h"
#include "discovery/registry_cache.h"
#include "discovery/report_json.h"
#include "discovery/scan_settings.h"
#include "discovery/verdict_freshness.h"
#include "plugin_dir.h"
#include "saved_env.h"
#include "env/env.h"

namespace ephost {
namespace {

using json = nlohmann::json;
constexpr const char* kReady = "EPHOST_TEST_PLUGIN_READY";

ScanSettings test_settings(const PluginDir& dir) {
  ScanSettings s = scan_settings_from_environment();
  s.in_process = false;
  s.timeout = std::chrono::milliseconds(1500);
  s.registry_file = dir.file("registry/plugin-registry.json");
  return s;
}

std::string read_text(const std::string& path) { return read_whole_file(path, "test file"); }

// The registry file's entry for `library`, edited by `edit` and written back.
void edit_entry(const ScanSettings& settings, const std::string& library, const std::function<void(json&)>& edit) {
  json j = json::parse(read_text(settings.registry_file));
  const std::string canonical = fs::canonical(library).string();
  bool found = false;
  for (json& e : j["libraries"])
    if (e["path"] == canonical) {
      edit(e);
      found = true;
    }
  ASSERT_TRUE(found) << "no registry entry for " << canonical << " in " << j.dump(1);
  std::ofstream(settings.registry_file) << j.dump(1);
}

RegistryEntry entry_for(const ScanSettings& settings, const std::string& library) {
  const auto entries = RegistryCache::parse(read_text(settings.registry_file));
  auto it = entries.find(fs::canonical(library).string());
  if (it == entries.end()) throw std::runtime_error("no registry entry for " + library);
  return it->second;
}

// One discovery of `dir` with `settings`; the record of `library` as a copy of what the test reads.
struct Seen {
  bool loaded = false;
  std::string reason, probed_by, probe_outcome, reprobe_reason;
  int64_t probed_at = 0;
};
Seen discover(const ScanSettings& settings, const PluginDir& dir, const std::string& library) {
  PluginRegistry registry(settings);
  registry.scan_directories({dir.path()});
  const PluginRecord* r = record_for(registry, library);
  if (r == nullptr) throw std::runtime_error("no record for " + library);
  return {r->loaded.load(), r->skip_reason(), r->probed_by, r->probe_outcome, r->reprobe_reason, r->probed_at};
}

// ---- the context ---------------------------------------------------------------------------------------

TEST(ProbeContext, Fnv1a64MatchesTheReferenceValues) {
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a64_hex("foobar"), "85944171f73967e8");
  EXPECT_TRUE(is_fnv1a64_hex(fnv1a64_hex("x")));
  EXPECT_FALSE(is_fnv1a64_hex("85944171F73967E8"));
  EXPECT_FALSE(is_fnv1a64_hex("85944171f73967e"));
}

TEST(ProbeContext, HoldsAHashOfEveryVariableButTheVolatileOnes) {
  for (const char* noise : {"PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES", "SSH_CONNECTION",
                            "SSH_AUTH_SOCK", "TMUX", "TMUX_PANE", "EPHOST_PLUGIN_REGISTRY"})
    EXPECT_TRUE(is_volatile_variable(noise)) << noise;
  for (const char* input : {"PATH", "LD_LIBRARY_PATH", "HOME", "EPHOST_CTS_TARGET", "CUDA_VISIBLE_DEVICES",
                            "EPHOST_PLUGIN_SCAN_TIMEOUT_MS", "TERMINFO"})
    EXPECT_FALSE(is_volatile_variable(input)) << input;
  SavedEnv secret("EPHOST_TEST_VERDICT_SECRET"), pwd("PWD");
  setenv("EPHOST_TEST_VERDICT_SECRET", "hunter2", 1);
  setenv("PWD", "/somewhere/else", 1);
  const ProbeContext context = capture_probe_context();
  ASSERT_EQ(context.environment.count("EPHOST_TEST_VERDICT_SECRET"), 1u);
  EXPECT_EQ(context.environment.at("EPHOST_TEST_VERDICT_SECRET"), fnv1a64_hex("hunter2"));
  EXPECT_EQ(context.environment.count("PWD"), 0u);
  EXPECT_FALSE(context.host_version.empty());
  EXPECT_TRUE(is_fnv1a64_hex(context.devices));
  const std::vector<std::string> nodes = accelerator_device_nodes();
  EXPECT_TRUE(std::is_sorted(nodes.begin(), nodes.end()));
}

TEST(ProbeContext, ChangesNameWhatChanged) {
  ProbeContext then;
  then.host_version = "0.1.0";
  then.devices = fnv1a64_hex("");
  then.environment = {{"A", fnv1a64_hex("1")}, {"B", fnv1a64_hex("2")}, {"GONE", fnv1a64_hex("3")}};
  EXPECT_EQ(describe_context_change(then, then), "");
  ProbeContext now = then;
  now.environment["A"] = fnv1a64_hex("changed");
  now.environment.erase("GONE");
  now.environment["NEW"] = fnv1a64_hex("");
  EXPECT_EQ(describe_context_change(then, now), "the environment changed (A, GONE, NEW)");
  for (char c = 'C'; c <= 'J'; ++c) now.environment[std::string("V") + c] = fnv1a64_hex("x");
  EXPECT_EQ(describe_context_change(then, now), "the environment changed (A, GONE, NEW, VC, VD and 6 more)");
  ProbeContext devices = then;
  devices.devices = fnv1a64_hex("/dev/dri/renderD128\n");
  EXPECT_EQ(describe_context_change(then, devices), "the device list changed");
  devices.host_version = "0.2.0";
  EXPECT_EQ(describe_context_change(then, devices),
            "the device list changed; the host version changed (0.1.0 -> 0.2.0)");
}

// ---- when a cached verdict holds -----------------------------------------------------------------------

TEST(VerdictFreshness, BackoffDoublesFrom15MinutesUpTo24Hours) {
  EXPECT_EQ(reprobe_interval_s(0), 15 * 60);
  EXPECT_EQ(reprobe_interval_s(1), 30 * 60);
  EXPECT_EQ(reprobe_interval_s(2), 60 * 60);
  EXPECT_EQ(reprobe_interval_s(6), 16 * 60 * 60);
  EXPECT_EQ(reprobe_interval_s(7), 24 * 60 * 60);
  EXPECT_EQ(reprobe_interval_s(64), 24 * 60 * 60);
  EXPECT_EQ(reprobe_interval_s(UINT32_MAX), 24 * 60 * 60);
}

TEST(VerdictFreshness, OnlyRefusalsAndTimeoutsAgeOrDependOnTheirContext) {
  const ProbeContext now = capture_probe_context();
  ProbeContext other = now;
  other.environment["EPHOST_CTS_TARGET"] = fnv1a64_hex("/x/libmyep.so");
  const int64_t t = 1700000000;
  RegistryEntry e;
  e.result.reason = "a reason";
  e.probed_at = t - 30 * 24 * 3600;  // a month old, under another environment
  e.context = other;
  for (ProbeOutcome outcome : {ProbeOutcome::kCrashed, ProbeOutcome::kExited}) {
    e.result.outcome = outcome;
    EXPECT_EQ(reprobe_reason(e, now, t), "") << probe_outcome_name(outcome) << " holds until the file changes";
  }
  // A usable verdict holds however old while its context is the same (its devices may depend on it).
  e.result.outcome = ProbeOutcome::kUsable;
  e.result.reason.clear();
  EXPECT_EQ(reprobe_reason(e, now, t), "the environment changed (EPHOST_CTS_TARGET)");
  e.context = now;
  EXPECT_EQ(reprobe_reason(e, now, t), "") << "a month old, same context";
  for (ProbeOutcome outcome : {ProbeOutcome::kRefused, ProbeOutcome::kTimedOut}) {
    SCOPED_TRACE(probe_outcome_name(outcome));
    e.result.outcome = outcome;
    e.result.reason = "a reason";
    e.context = other;
    e.probed_at = t - 60;
    EXPECT_EQ(reprobe_reason(e, now, t), "the environment changed (EPHOST_CTS_TARGET)");
    e.context = now;
    EXPECT_EQ(reprobe_reason(e, now, t), "") << "a minute old, same context";
    e.probed_at = t - 15 * 60;
    EXPECT_EQ(reprobe_reason(e, now, t), "the verdict was 15 min old (its backoff: 15 min)");
    e.repeats = 2;  // the same verdict twice more: an hour
    EXPECT_EQ(reprobe_reason(e, now, t), "");
    e.probed_at = t - 2 * 3600;
    EXPECT_EQ(reprobe_reason(e, now, t), "the verdict was 2 h old (its backoff: 1 h)");
    e.repeats = 0;
    e.probed_at = t + 3600;
    EXPECT_EQ(reprobe_reason(e, now, t), "the verdict was recorded in the future (the clock was set back)");
  }
}

// ---- through discovery ---------------------------------------------------------------------------------

TEST(RegistryVerdicts, ARefusalIsProbedAgainWhenTheEnvironmentChanges) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  PluginDir dir;
  const std::string library = dir.add_plugin("ephost_broken_needs_env");
  const ScanSettings settings = test_settings(dir);
  const auto identity = identify_library(fs::canonical(library).string());

  Seen first = discover(settings, dir, library);
  EXPECT_FALSE(first.loaded);
  EXPECT_EQ(first.probed_by, "scanner");
  EXPECT_EQ(first.probe_outcome, "refused");
  EXPECT_NE(first.reason.find("EPHOST_TEST_PLUGIN_READY is not set"), std::string::npos) << first.reason;
  Seen second = discover(settings, dir, library);
  EXPECT_EQ(second.probed_by, "registry") << "nothing changed: the refusal holds";
  EXPECT_EQ(second.reprobe_reason, "");
  EXPECT_EQ(second.probed_at, first.probed_at);

  // The plugin's driver is ready now: same file, another environment.
  setenv(kReady, "s3cret-token-value", 1);
  Seen third = discover(settings, dir, library);
  EXPECT_TRUE(third.loaded) << third.reason;
  EXPECT_EQ(third.probed_by, "scanner");
  EXPECT_EQ(third.reprobe_reason, "the environment changed (EPHOST_TEST_PLUGIN_READY)");
  EXPECT_TRUE(identify_library(fs::canonical(library).string()) == identity) << "the file did not change";
  const std::string text = read_text(settings.registry_file);
  EXPECT_EQ(text.find("s3cret-token-value"), std::string::npos) << "the cache holds no value:\n" << text;

  // A usable verdict holds while its context does: unchanged, it is served from the cache; once the
  // variable is gone again the plugin is probed again (and refuses, as it would when loaded).
  Seen fourth = discover(settings, dir, library);
  EXPECT_EQ(fourth.probed_by, "registry");
  EXPECT_TRUE(fourth.loaded);
  unsetenv(kReady);
  Seen fifth = discover(settings, dir, library);
  EXPECT_EQ(fifth.probed_by, "scanner");
  EXPECT_EQ(fifth.reprobe_reason, "the environment changed (EPHOST_TEST_PLUGIN_READY)");
  EXPECT_FALSE(fifth.loaded);
}

TEST(RegistryVerdicts, TheRecordedContextNamesVariablesNeverValues) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  SavedEnv secret("EPHOST_TEST_VERDICT_SECRET");
  setenv("EPHOST_TEST_VERDICT_SECRET", "correct horse battery staple", 1);
  PluginDir dir;
  const std::string library = dir.add_plugin("ephost_broken_needs_env");
  const ScanSettings settings = test_settings(dir);
  discover(settings, dir, library);
  const std::string text = read_text(settings.registry_file);
  EXPECT_EQ(text.find("correct horse battery staple"), std::string::npos) << text;
  const RegistryEntry entry = entry_for(settings, library);
  EXPECT_EQ(entry.result.outcome, ProbeOutcome::kRefused);
  EXPECT_EQ(entry.context.environment.at("EPHOST_TEST_VERDICT_SECRET"), fnv1a64_hex("correct horse battery staple"));
  EXPECT_EQ(entry.context.environment.count(kReady), 0u);
  EXPECT_EQ(entry.repeats, 0u);
  EXPECT_NEAR(static_cast<double>(entry.probed_at), static_cast<double>(unix_now_s()), 60.0);
}

TEST(RegistryVerdicts, ARefusalOlderThanItsBackoffIsProbedAgainAndTheBackoffDoubles) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  PluginDir dir;
  const std::string library = dir.add_plugin("ephost_broken_needs_env");
  const ScanSettings settings = test_settings(dir);
  discover(settings, dir, library);
  const int64_t now = unix_now_s();
  edit_entry(settings, library, [&](json& e) { e["probed_at"] = now - 2 * 3600 - 5; });
  Seen aged = discover(settings, dir, library);
  EXPECT_EQ(aged.probed_by, "scanner");
  EXPECT_EQ(aged.reprobe_reason, "the verdict was 2 h old (its backoff: 15 min)");
  EXPECT_FALSE(aged.loaded);
  RegistryEntry entry = entry_for(settings, library);
  EXPECT_EQ(entry.repeats, 1u) << "the same refusal again: the backoff doubles";
  EXPECT_GE(entry.probed_at, now);

  // 20 minutes old: within the doubled backoff (30 min), still cached.
  edit_entry(settings, library, [&](json& e) { e["probed_at"] = unix_now_s() - 20 * 60; });
  EXPECT_EQ(discover(settings, dir, library).probed_by, "registry");
  // 40 minutes old: beyond it; probed again, and the backoff doubles again.
  edit_entry(settings, library, [&](json& e) { e["probed_at"] = unix_now_s() - 40 * 60; });
  Seen again = discover(settings, dir, library);
  EXPECT_EQ(again.probed_by, "scanner");
  EXPECT_EQ(again.reprobe_reason, "the verdict was 40 min old (its backoff: 30 min)");
  EXPECT_EQ(entry_for(settings, library).repeats, 2u);
}

TEST(RegistryVerdicts, ARefusalIsProbedAgainWhenTheDeviceListChanged) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  PluginDir dir;
  const std::string library = dir.add_plugin("ephost_broken_needs_env");
  const ScanSettings settings = test_settings(dir);
  discover(settings, dir, library);
  // Probed when the machine had other accelerator device nodes (a driver loaded since, say).
  edit_entry(settings, library, [&](json& e) { e["context"]["devices"] = fnv1a64_hex("/dev/nvidia0\n"); });
  Seen seen = discover(settings, dir, library);
  EXPECT_EQ(seen.probed_by, "scanner");
  EXPECT_EQ(seen.reprobe_reason, "the device list changed");
}

TEST(RegistryVerdicts, ACrashStaysCachedWhateverTheEnvironmentAndAge) {
  SavedEnv ready(kReady), other("EPHOST_TEST_VERDICT_OTHER");
  unsetenv(kReady);
  PluginDir dir;
  const std::string crasher = dir.add_plugin("ephost_broken_negotiate_segfault");
  const ScanSettings settings = test_settings(dir);
  Seen first = discover(settings, dir, crasher);
  EXPECT_EQ(first.probe_outcome, "crashed");
  const json entry = [&] {
    const json registry = json::parse(read_text(settings.registry_file));  // outlives the loop over its member
    for (const json& e : registry["libraries"]) return e;
    return json();
  }();
  EXPECT_FALSE(entry.contains("context")) << "a crash does not depend on a context: " << entry.dump();
  EXPECT_FALSE(entry.contains("repeats")) << entry.dump();
  setenv(kReady, "1", 1);
  setenv("EPHOST_TEST_VERDICT_OTHER", "changed", 1);
  edit_entry(settings, crasher, [&](json& e) { e["probed_at"] = unix_now_s() - 30 * 24 * 3600; });
  Seen later = discover(settings, dir, crasher);
  EXPECT_EQ(later.probed_by, "registry") << "a crash is skipped until the file changes";
  EXPECT_EQ(later.probe_outcome, "crashed");
  EXPECT_EQ(later.reprobe_reason, "");
  EXPECT_FALSE(later.loaded);
}

TEST(RegistryVerdicts, RescanProbesEveryLibraryAgainAndStoresTheFreshVerdicts) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const std::string crasher = dir.add_plugin("ephost_broken_negotiate_segfault");
  const std::string refuser = dir.add_plugin("ephost_broken_needs_env");
  ScanSettings settings = test_settings(dir);
  discover(settings, dir, alpha);
  const int64_t long_ago = unix_now_s() - 3600;
  for (const std::string& library : {alpha, crasher})
    edit_entry(settings, library, [&](json& e) { e["probed_at"] = long_ago; });
  for (const std::string& library : {alpha, crasher, refuser})
    EXPECT_EQ(discover(settings, dir, library).probed_by, "registry") << library;

  settings.rescan = true;
  setenv(kReady, "1", 1);  // the refusal would be probed again anyway; the others only because of the rescan
  PluginRegistry registry(settings);
  registry.scan_directories({dir.path()});
  for (const std::string& library : {alpha, crasher, refuser}) {
    SCOPED_TRACE(library);
    const PluginRecord* r = record_for(registry, library);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->probed_by, "scanner");
    EXPECT_EQ(r->reprobe_reason, "a rescan was asked for");
    EXPECT_GT(entry_for(settings, library).probed_at, long_ago) << "the fresh verdict is stored";
  }
  EXPECT_TRUE(record_for(registry, refuser)->loaded) << record_for(registry, refuser)->skip_reason();
  EXPECT_TRUE(record_for(registry, alpha)->loaded);
  EXPECT_FALSE(record_for(registry, alpha)->in_process) << "probed now, and loaded only when first needed";

  // The env option that asks for it (ephost plugins --rescan).
  EXPECT_TRUE(make_env_config({{"env.plugin_rescan", "1"}}).scan.rescan);
  EXPECT_FALSE(make_env_config({{"env.plugin_rescan", "0"}}).scan.rescan);
  EXPECT_FALSE(make_env_config({}).scan.rescan);
  try {
    make_env_config({{"env.plugin_rescan", "yes"}});
    ADD_FAILURE() << "an invalid value is refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("expected '1'"), std::string::npos) << e.what();
  }
}

TEST(RegistryVerdicts, TheReportSaysWhereEachVerdictCameFromAndHowOld) {
  SavedEnv ready(kReady);
  unsetenv(kReady);
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const std::string refuser = dir.add_plugin("ephost_broken_needs_env");
  const ScanSettings settings = test_settings(dir);
  {
    PluginRegistry cold(settings);
    cold.scan_directories({dir.path()});
    for (const json& r : json::parse(cold.report_json())) {
      if (r["path"] != alpha && r["path"] != refuser) continue;
      EXPECT_EQ(r["cached"], false) << r.dump();
      EXPECT_TRUE(r["probed_at"].is_number_integer()) << r.dump();
      EXPECT_LE(r["age_s"].get<int64_t>(), 60) << r.dump();
      EXPECT_EQ(r["probed_again"], "") << r.dump();
    }
  }
  const int64_t three_hours_ago = unix_now_s() - 3 * 3600;
  edit_entry(settings, alpha, [&](json& e) { e["probed_at"] = three_hours_ago; });
  {
    // Same context: both verdicts come from the cache, alpha's however old.
    PluginRegistry warm(settings);
    warm.scan_directories({dir.path()});
    for (const json& r : json::parse(warm.report_json())) {
      if (r["path"] == alpha) {
        EXPECT_EQ(r["cached"], true) << r.dump();
        EXPECT_EQ(r["probed_by"], "registry") << r.dump();
        EXPECT_EQ(r["probed_at"], three_hours_ago) << r.dump();
        EXPECT_GE(r["age_s"].get<int64_t>(), 3 * 3600) << r.dump();
        EXPECT_LT(r["age_s"].get<int64_t>(), 3 * 3600 + 60) << r.dump();
        EXPECT_EQ(r["probed_again"], "") << r.dump();
      } else if (r["path"] == refuser) {
        EXPECT_EQ(r["cached"], true) << r.dump();
        EXPECT_EQ(r["loaded"], false) << r.dump();
      }
    }
  }
  // Another context: both are probed again, and the report says why.
  setenv(kReady, "1", 1);
  PluginRegistry changed(settings);
  changed.scan_directories({dir.path()});
  for (const json& r : json::parse(changed.report_json())) {
    if (r["path"] != alpha && r["path"] != refuser) continue;
    EXPECT_EQ(r["cached"], false) << r.dump();
    EXPECT_EQ(r["loaded"], true) << r.dump();
    EXPECT_LE(r["age_s"].get<int64_t>(), 60) << r.dump();
    EXPECT_EQ(r["probed_again"], "the environment changed (EPHOST_TEST_PLUGIN_READY)") << r.dump();
  }
}

}  // namespace
}  // namespace ephost
