// Crash-isolated probing (discovery/plugin_scanner.h) and the registry cache (discovery/registry_cache.h):
// every broken plugin that crashes, aborts, exits, overflows its stack or hangs while it is probed is
// skipped with that reason, the host process (this test) survives it, and the verdict is remembered
// until the library changes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/device.h"
#include "core/log.h"
#include "discovery/plugin_probe.h"
#include "discovery/plugin_probe_json.h"
#include "discovery/plugin_registry.h"
#include "discovery/plugin_scanner.h"
#include "discovery/probe_context.h"
#include "discovery/registry_cache.h"
#include "discovery/scan_settings.h"
#include "plugin_dir.h"
#include "saved_env.h"
#include "test_paths.h"

namespace ephost {
namespace {

using std::chrono::milliseconds;

// The kinds of plugin that cannot be probed in process and survived: the reason each is skipped with.
struct FatalKind {
  const char* target;
  const char* outcome;
  const char* reason;  // a prefix
};
const FatalKind kFatalKinds[] = {
    {"ephost_broken_negotiate_segfault", "crashed", "crashed during negotiation: killed by SIGSEGV (segmentation fault)"},
    {"ephost_broken_negotiate_abort", "crashed",
     "crashed during negotiation: killed by SIGABRT (aborted); its last output: \"broken plugin: giving up in "
     "negotiation\""},
    {"ephost_broken_negotiate_stack_overflow", "crashed",
     "crashed during negotiation: killed by SIGSEGV (segmentation fault)"},
    {"ephost_broken_negotiate_sigkill", "crashed", "crashed during negotiation: killed by SIGKILL"},
    {"ephost_broken_negotiate_sleep", "timed_out",
     "timed out during negotiation: no answer within 1500 ms (the plugin scanner killed it)"},
    {"ephost_broken_negotiate_exit0", "exited", "exited with status 0 during negotiation"},
    {"ephost_broken_negotiate_exit3", "exited", "exited with status 3 during negotiation"},
    {"ephost_broken_static_abort", "crashed",
     "crashed during loading the library (static constructors): killed by SIGABRT (aborted)"},
    {"ephost_broken_static_segfault", "crashed",
     "crashed during loading the library (static constructors): killed by SIGSEGV (segmentation fault)"},
    {"ephost_broken_describe_segfault", "crashed", "crashed during describe: killed by SIGSEGV (segmentation fault)"},
    {"ephost_broken_devices_segfault", "crashed",
     "crashed during device enumeration: killed by SIGSEGV (segmentation fault)"},
};

// Scan settings for one test: the scanner the tests run with (tests/test_environment.cpp), a short
// timeout, and a registry of the test's own.
ScanSettings test_settings(const PluginDir& dir, milliseconds timeout = milliseconds(1500)) {
  ScanSettings s = scan_settings_from_environment();
  s.in_process = false;
  s.timeout = timeout;
  s.registry_file = dir.file("registry/plugin-registry.json");
  return s;
}

// Sets a file's modification time `seconds` later than it is: the same file, changed.
void touch_later(const std::string& path, int seconds) {
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += seconds;
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

std::string read_text(const std::string& path) { return read_whole_file(path, "test file"); }

TEST(PluginScanner, EveryFatalKindIsSkippedWithItsReasonAndTheHostSurvives) {
  PluginDir dir;
  for (const FatalKind& k : kFatalKinds) dir.add_plugin(k.target);
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const std::string refuses = dir.add_plugin("ephost_broken_refuses");
  PluginRegistry registry(test_settings(dir));
  registry.scan_directories({dir.path()});

  for (const FatalKind& k : kFatalKinds) {
    const PluginRecord* r = record_for(registry, dir.file(library_file(k.target)));
    ASSERT_NE(r, nullptr) << k.target;
    EXPECT_FALSE(r->loaded) << k.target;
    EXPECT_TRUE(starts_with(r->reason, k.reason)) << k.target << ": " << r->reason;
    EXPECT_EQ(r->probe_outcome, k.outcome) << k.target;
    EXPECT_EQ(r->probed_by, "scanner") << k.target;
    EXPECT_FALSE(is_loaded_in_process(r->path)) << k.target << " never entered the host process";
  }
  // The scanner goes on after each death: the libraries sorted after them were probed too.
  ASSERT_TRUE(record_for(registry, alpha)->loaded) << record_for(registry, alpha)->reason;
  EXPECT_EQ(record_for(registry, alpha)->probe_outcome, "usable");
  EXPECT_EQ(record_for(registry, refuses)->reason,
            "negotiation failed: NOT_IMPLEMENTED: refusing: this plugin needs ABI >= 7");
  EXPECT_EQ(record_for(registry, refuses)->probe_outcome, "refused");
}

// Plugin ABI 3: the scanner's child enumerates the devices too, and they reach the parent and the
// registry; the host then loads the plugin in process with the same devices.
TEST(PluginScanner, DevicesOfAnAbi3PluginAreEnumeratedInTheScanner) {
  PluginDir dir;
  const std::string fakedev = dir.add_plugin("ephost_test_fakedev");
  const std::vector<ProbeResult> results =
      probe_in_scanner({fakedev}, ScannerOptions{test_settings(dir).scanner, milliseconds(5000)});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome, ProbeOutcome::kUsable) << results[0].reason;
  EXPECT_EQ(results[0].stage, kProbeStageDevices);
  ASSERT_EQ(results[0].devices.size(), 2u);
  EXPECT_FALSE(results[0].devices[0].name.empty());
  EXPECT_NE(results[0].devices[0].name, results[0].devices[1].name);

  PluginRegistry registry(test_settings(dir));
  registry.scan_directories({dir.path()});
  const PluginRecord* r = record_for(registry, fakedev);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->loaded) << r->reason;
  EXPECT_EQ(r->probed_by, "scanner");
  ASSERT_EQ(r->probed_devices.size(), 2u) << "what the scanner saw, before the library is loaded here";
  EXPECT_EQ(r->probed_devices[1].name, results[0].devices[1].name);
  ASSERT_TRUE(registry.ensure_loaded(*r)) << r->skip_reason();
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[1]->name(), results[0].devices[1].name);
}

TEST(PluginScanner, SkipIsLoggedWithPathAndReason) {
  PluginDir dir;
  const std::string path = dir.add_plugin("ephost_broken_negotiate_segfault");
  EphostLogLevel previous = log_level();
  log_set_level(EPHOST_LOG_WARNING);
  testing::internal::CaptureStderr();
  {
    PluginRegistry registry(test_settings(dir));
    registry.load_library(path);
  }
  std::string logged = testing::internal::GetCapturedStderr();
  log_set_level(previous);
  EXPECT_NE(logged.find("plugin " + path + " skipped: crashed during negotiation: killed by SIGSEGV"),
            std::string::npos)
      << logged;
}

TEST(PluginScanner, ExplicitlyRegisteredLibrariesAreProbedToo) {
  PluginDir dir;
  PluginRegistry registry(test_settings(dir));
  const PluginRecord& crashed = registry.load_library(dir.add_plugin("ephost_broken_static_segfault"));
  EXPECT_FALSE(crashed.loaded);
  EXPECT_EQ(crashed.probed_by, "scanner");
  EXPECT_EQ(crashed.probe_outcome, "crashed");
  const PluginRecord& alpha = registry.load_library(dir.add_plugin("ephost_test_alpha"));
  EXPECT_TRUE(alpha.loaded);
  EXPECT_EQ(alpha.probed_by, "scanner");
}

TEST(PluginScanner, TimeoutIsConfigurable) {
  PluginDir dir;
  const std::string sleeper = dir.add_plugin("ephost_broken_negotiate_sleep");
  PluginRegistry registry(test_settings(dir, milliseconds(300)));
  const auto start = std::chrono::steady_clock::now();
  const PluginRecord& r = registry.load_library(sleeper);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.reason, "timed out during negotiation: no answer within 300 ms (the plugin scanner killed it)");
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(PluginScanner, ScanSettingsComeFromTheEnvironment) {
  SavedEnv scan(kPluginScanEnv), timeout(kPluginScanTimeoutEnv);
  setenv(kPluginScanEnv, "inprocess", 1);
  setenv(kPluginScanTimeoutEnv, "1234", 1);
  ScanSettings s = scan_settings_from_environment();
  EXPECT_TRUE(s.in_process);
  EXPECT_EQ(s.timeout, milliseconds(1234));
  setenv(kPluginScanEnv, "sometimes", 1);
  setenv(kPluginScanTimeoutEnv, "-5", 1);
  s = scan_settings_from_environment();  // logged, and the defaults kept
  EXPECT_FALSE(s.in_process);
  EXPECT_EQ(s.timeout, milliseconds(10000));
}

TEST(PluginScanner, InProcessProbingLoadsWithoutAChild) {
  PluginDir dir;
  ScanSettings settings = test_settings(dir);
  settings.in_process = true;
  settings.scanner = "/nonexistent/scanner";  // never started
  PluginRegistry registry(settings);
  const PluginRecord& alpha = registry.load_library(dir.add_plugin("ephost_test_alpha"));
  EXPECT_TRUE(alpha.loaded);
  EXPECT_EQ(alpha.probed_by, "in process");
  EXPECT_EQ(alpha.probe_outcome, "");
  EXPECT_FALSE(fs::exists(settings.registry_file)) << "probing in process uses no registry";
}

TEST(PluginScanner, MissingScannerFallsBackToProbingInProcess) {
  PluginDir dir;
  ScanSettings settings = test_settings(dir);
  settings.scanner = dir.file("no-such-scanner");
  PluginRegistry registry(settings);
  const PluginRecord& alpha = registry.load_library(dir.add_plugin("ephost_test_alpha"));
  EXPECT_TRUE(alpha.loaded);
  EXPECT_EQ(alpha.probed_by, "in process");
}

TEST(PluginScanner, ScannerThatBreaksItsProtocolSkipsWithoutBlamingTheLibrary) {
  PluginDir dir;
  ScanSettings settings = test_settings(dir);
  settings.scanner = "/bin/true";  // exits at once, without a handshake
  PluginRegistry registry(settings);
  const PluginRecord& alpha = registry.load_library(dir.add_plugin("ephost_test_alpha"));
  EXPECT_FALSE(alpha.loaded);
  EXPECT_EQ(alpha.probe_outcome, "scanner_failed");
  EXPECT_TRUE(starts_with(alpha.reason, "the plugin scanner (/bin/true) exited with status 0 before probing this "
                                        "library"))
      << alpha.reason;
  // Not remembered: the next env with a working scanner probes it again.
  PluginRegistry again(test_settings(dir));
  const PluginRecord& reprobed = again.load_library(alpha.path);
  EXPECT_TRUE(reprobed.loaded) << reprobed.reason;
  EXPECT_EQ(reprobed.probed_by, "scanner");
}

// ---- the registry cache ------------------------------------------------------------------------------

TEST(PluginRegistryCache, NextStartProbesOnlyWhatChanged) {
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const std::string crasher = dir.add_plugin("ephost_broken_negotiate_segfault");
  const ScanSettings settings = test_settings(dir);
  {
    PluginRegistry first(settings);
    first.scan_directories({dir.path()});
    EXPECT_EQ(record_for(first, alpha)->probed_by, "scanner");
    EXPECT_EQ(record_for(first, crasher)->probed_by, "scanner");
  }
  ASSERT_TRUE(fs::exists(settings.registry_file));
  // The next start needs no scanner at all: nothing changed.
  ScanSettings no_scanner = settings;
  no_scanner.scanner = "/bin/false";
  {
    PluginRegistry second(no_scanner);
    second.scan_directories({dir.path()});
    EXPECT_EQ(record_for(second, alpha)->probed_by, "registry");
    EXPECT_TRUE(record_for(second, alpha)->loaded);
    EXPECT_EQ(record_for(second, crasher)->probed_by, "registry");
    EXPECT_FALSE(record_for(second, crasher)->loaded) << "a library that crashed stays skipped";
    EXPECT_TRUE(starts_with(record_for(second, crasher)->reason, "crashed during negotiation: killed by SIGSEGV"));
  }
  // A library whose file changed is probed again; the others still come from the registry.
  touch_later(crasher, 10);
  {
    PluginRegistry third(settings);
    third.scan_directories({dir.path()});
    EXPECT_EQ(record_for(third, crasher)->probed_by, "scanner");
    EXPECT_EQ(record_for(third, alpha)->probed_by, "registry");
  }
  // Replaced by a good library under the same name: it loads.
  fs::copy_file(fs::path(EPHOST_TEST_PLUGIN_DIR) / library_file("ephost_test_beta"), crasher,
                fs::copy_options::overwrite_existing);
  touch_later(crasher, 20);
  PluginRegistry fourth(settings);
  fourth.scan_directories({dir.path()});
  EXPECT_TRUE(record_for(fourth, crasher)->loaded) << record_for(fourth, crasher)->reason;
  EXPECT_EQ(record_for(fourth, crasher)->name, "beta");
}

TEST(PluginRegistryCache, CorruptFileIsIgnoredAndRewritten) {
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const ScanSettings settings = test_settings(dir);
  fs::create_directories(fs::path(settings.registry_file).parent_path());
  for (const std::string& garbage :
       {std::string("{\"format\": \"ephost-plugin-registry\", \"libr"), std::string("\x00\x01\x02 binary", 10),
        std::string(100, '['), std::string("[]")}) {
    std::ofstream(settings.registry_file, std::ios::binary) << garbage;
    PluginRegistry registry(settings);
    const PluginRecord& r = registry.load_library(alpha);
    EXPECT_TRUE(r.loaded);
    EXPECT_EQ(r.probed_by, "scanner") << "a corrupt registry is never trusted";
    auto entries = RegistryCache::parse(read_text(settings.registry_file));  // rewritten: valid again
    EXPECT_EQ(entries.size(), 1u);
  }
}

TEST(PluginRegistryCache, ForeignFileIsIgnoredAndRewritten) {
  PluginDir dir;
  const std::string crasher = dir.add_plugin("ephost_broken_negotiate_segfault");
  const ScanSettings settings = test_settings(dir);
  { PluginRegistry(settings).load_library(crasher); }
  // Another host version wrote it (or someone edited it to trust the crasher): not used.
  nlohmann::json j = nlohmann::json::parse(read_text(settings.registry_file));
  j["host"]["ephost_version"] = "99.0.0";
  j["libraries"][0]["probe"]["outcome"] = "usable";
  j["libraries"][0]["probe"]["reason"] = "";
  std::ofstream(settings.registry_file) << j.dump();
  EXPECT_THROW(RegistryCache::parse(j.dump()), std::runtime_error);
  PluginRegistry registry(settings);
  const PluginRecord& r = registry.load_library(crasher);
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.probed_by, "scanner");
  EXPECT_EQ(RegistryCache::parse(read_text(settings.registry_file)).size(), 1u);
}

TEST(PluginRegistryCache, ParsingIsStrict) {
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const ScanSettings settings = test_settings(dir);
  { PluginRegistry(settings).load_library(alpha); }
  const nlohmann::json good = nlohmann::json::parse(read_text(settings.registry_file));
  EXPECT_EQ(RegistryCache::parse(good.dump()).size(), 1u);
  auto broken = [&](auto edit) {
    nlohmann::json j = good;
    edit(j);
    EXPECT_THROW(RegistryCache::parse(j.dump()), std::runtime_error) << j.dump();
  };
  broken([](nlohmann::json& j) { j["libraries"].push_back(j["libraries"][0]); });  // listed twice
  broken([](nlohmann::json& j) { j["libraries"][0]["size"] = -1; });
  broken([](nlohmann::json& j) { j["libraries"][0]["path"] = "relative.so"; });
  broken([](nlohmann::json& j) { j["libraries"][0].erase("inode"); });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["outcome"] = "fine"; });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["outcome"] = "scanner_failed"; });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["reason"] = "usable with a reason?"; });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["stage"] = "somewhere"; });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["abi_version"] = "2"; });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["devices"] = nlohmann::json::object(); });
  broken([](nlohmann::json& j) { j["format_version"] = 1; });  // before device memory facts: rewritten
  broken([](nlohmann::json& j) { j["format_version"] = 2; });  // before verdicts knew their context and age
  broken([](nlohmann::json& j) { j["format_version"] = 3; });  // before usable verdicts knew their context
  broken([](nlohmann::json& j) { j["format_version"] = 4; });  // one provider per file: re-probed, not misread
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"].erase("siblings"); });
  broken([](nlohmann::json& j) { j["libraries"][0]["probe"]["siblings"] = nlohmann::json::object(); });
  broken([](nlohmann::json& j) {  // a further provider out of its library's factory order
    nlohmann::json sibling = j["libraries"][0]["probe"];
    sibling.erase("outcome"), sibling.erase("stage"), sibling.erase("reason"), sibling.erase("siblings");
    sibling["factory"] = 2;
    j["libraries"][0]["probe"]["siblings"].push_back(sibling);
  });
  broken([](nlohmann::json& j) { j["libraries"][0].erase("probed_at"); });
  broken([](nlohmann::json& j) { j["libraries"][0]["probed_at"] = "yesterday"; });
  // A usable verdict carries its context (its devices may depend on it) and no repeats (it never ages).
  broken([](nlohmann::json& j) { j["libraries"][0]["repeats"] = 0; });
  broken([](nlohmann::json& j) { j["libraries"][0].erase("context"); });
  broken([](nlohmann::json& j) { j["libraries"][0]["context"] = nlohmann::json::object(); });
  broken([](nlohmann::json& j) { j.erase("host"); });
}

// A library with several providers (an ONNX Runtime plugin EP's factories): the probe result lists the
// further ones in order, each with its description and devices, and reads back the same.
TEST(PluginRegistryCache, ALibrarysFurtherProvidersRoundTrip) {
  ProbeResult r;
  r.outcome = ProbeOutcome::kUsable;
  r.stage = kProbeStageNegotiate;
  r.description.name = "first";
  r.devices.push_back(ProbedDevice{"cpu", "v", "host", "", "", 0, true, 0});
  for (const char* name : {"second", "third"}) {
    ProbedProvider p;
    p.description.name = name;
    p.description.context_source_keys = {name};
    p.devices.push_back(ProbedDevice{"gpu", "v", std::string(name) + " device", "", "", 1024, false, 2});
    r.siblings.push_back(p);
  }
  const ProbeResult back = probe_result_from_json(probe_result_to_json(r));
  ASSERT_EQ(back.siblings.size(), 2u);
  EXPECT_EQ(back.description.name, "first");
  EXPECT_EQ(back.siblings[1].description.name, "third");
  EXPECT_EQ(back.siblings[1].description.context_source_keys, std::vector<std::string>{"third"});
  ASSERT_EQ(back.siblings[1].devices.size(), 1u);
  EXPECT_EQ(back.siblings[1].devices[0].name, "third device");
  EXPECT_EQ(back.siblings[1].devices[0].memory_bytes, 1024u);
  EXPECT_EQ(probe_result_to_json(back), probe_result_to_json(r));
  // A refusal has no further providers.
  nlohmann::json refused = probe_result_to_json(r);
  refused["outcome"] = "refused";
  refused["reason"] = "no";
  EXPECT_THROW(probe_result_from_json(refused), std::runtime_error);
}

// An ONNX Runtime plugin EP library with two factories is two records sharing one load: the first lazy
// load (of either) fills both, with one OrtEpLibrary and one library handle; the file under another name
// is the same plugin, skipped as already loaded (no third provider).
TEST(PluginRegistryFactories, OneLoadServesEveryFactoryOfTheLibrary) {
  PluginDir dir, other;
  const std::string file = "libephost_test_ort_two_factories.so";
  std::filesystem::copy_file(std::filesystem::path(EPHOST_TEST_PLUGIN_DIR) / "ort_ep" / "two_factories" / file,
                             dir.file(file));
  PluginRegistry registry(test_settings(dir));
  registry.scan_directories({dir.path()});
  const PluginRecord* first = registry.find_loaded("ortadd");
  const PluginRecord* second = registry.find_loaded("ortadd2");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(first->in_process.load());
  EXPECT_FALSE(second->in_process.load());
  ASSERT_EQ(second->probed_devices.size(), 1u);
  ASSERT_TRUE(registry.ensure_loaded(*second));
  EXPECT_TRUE(first->in_process.load()) << "filled from the second's load";
  EXPECT_NE(first->ort, nullptr);
  EXPECT_EQ(first->ort, second->ort);
  EXPECT_NE(first->library, nullptr);
  EXPECT_EQ(first->library, second->library);
  EXPECT_EQ(first->ort_factory, 0u);
  EXPECT_EQ(second->ort_factory, 1u);
  ASSERT_EQ(second->devices.size(), 1u);
  EXPECT_EQ(second->devices[0]->label(), "ortadd2:0");
  EXPECT_EQ(first->devices[0]->label(), "ortadd:0");
  std::filesystem::create_symlink(dir.file(file), other.file(file));
  const PluginRecord& again = registry.load_library(other.file(file));
  EXPECT_FALSE(again.loaded.load());
  EXPECT_NE(again.skip_reason().find("already loaded from"), std::string::npos) << again.skip_reason();
  size_t usable = 0;
  for (const PluginRecord* r : registry.snapshot()) usable += r->loaded.load() && !r->builtin;
  EXPECT_EQ(usable, 2u);
}

TEST(PluginRegistryCache, WrittenAtomicallyWithNothingLeftBeside) {
  PluginDir dir;
  const ScanSettings settings = test_settings(dir);
  { PluginRegistry(settings).load_library(dir.add_plugin("ephost_test_alpha")); }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(settings.registry_file).parent_path()))
    files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"plugin-registry.json"});
}

TEST(PluginRegistryCache, EntriesOfVanishedLibrariesArePruned) {
  PluginDir dir;
  const std::string alpha = dir.add_plugin("ephost_test_alpha");
  const std::string beta = dir.add_plugin("ephost_test_beta");
  const ScanSettings settings = test_settings(dir);
  { PluginRegistry(settings).scan_directories({dir.path()}); }
  EXPECT_EQ(RegistryCache::parse(read_text(settings.registry_file)).size(), 2u);
  fs::remove(beta);
  fs::copy_file(alpha, dir.file("libalpha_copy.so"));
  { PluginRegistry(settings).load_library(dir.file("libalpha_copy.so")); }
  auto entries = RegistryCache::parse(read_text(settings.registry_file));
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.count(fs::weakly_canonical(beta).string()), 0u);
}

TEST(PluginRegistryCache, DefaultFileFollowsXdgCacheHome) {
  SavedEnv registry(kRegistryFileEnv), xdg("XDG_CACHE_HOME"), home("HOME");
  unsetenv(kRegistryFileEnv);
  setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  EXPECT_TRUE(starts_with(default_registry_file(), "/tmp/xdg-cache/ephost/plugin-registry-"));
  setenv("XDG_CACHE_HOME", "relative/is/ignored", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_TRUE(starts_with(default_registry_file(), "/home/someone/.cache/ephost/plugin-registry-"));
  setenv(kRegistryFileEnv, "", 1);
  EXPECT_EQ(default_registry_file(), "") << "EPHOST_PLUGIN_REGISTRY= disables the cache";
}

TEST(PluginRegistryCache, ProbeResultsRoundTripWithTheirDevices) {
  ProbeResult r;
  r.outcome = ProbeOutcome::kUsable;
  r.stage = kProbeStageDevices;
  r.description.name = "npu0";
  r.description.abi_version = 2;
  r.description.context_source_keys = {"A", "B"};
  r.devices.push_back({"npu", "Contoso", "NPU 9000", "1.2.3", "v9", 1ull << 34, true, 5u});
  LibraryIdentity id{"/opt/lib/libnpu.so", 1234, 5678, 9, 10};
  RegistryEntry entry;
  entry.identity = id;
  entry.result = r;
  entry.probed_at = 1700000000;
  entry.context = capture_probe_context();  // a usable verdict's devices depend on it (format 4)
  auto entries = RegistryCache::parse(RegistryCache::serialize({{id.path, entry}}));
  ASSERT_EQ(entries.size(), 1u);
  const LibraryIdentity& back_id = entries.begin()->second.identity;
  const ProbeResult& back = entries.begin()->second.result;
  EXPECT_TRUE(back_id == id);
  EXPECT_EQ(entries.begin()->second.probed_at, 1700000000);
  EXPECT_TRUE(entries.begin()->second.context == entry.context);
  EXPECT_EQ(back.description.context_source_keys, r.description.context_source_keys);
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].name, "NPU 9000");
  EXPECT_EQ(back.devices[0].memory_bytes, 1ull << 34);
  // Format 2: what the device list shows of a plugin that is not loaded yet (lazy loading).
  EXPECT_TRUE(back.devices[0].host_memory_usable);
  EXPECT_EQ(back.devices[0].memory_kinds, 5u);
}

}  // namespace
}  // namespace ephost
