// Plugin discovery, hermetically: each test copies the test plugins it needs (tests/plugins, built into
// EPHOST_TEST_PLUGIN_DIR) into a fresh temporary directory, scans it, and asserts which loaded and the
// exact reason each skipped one was given.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"
#include "discovery/elf_probe.h"
#include "discovery/plugin_metadata.h"
#include "discovery/plugin_registry.h"
#include "discovery/search_path.h"
#include "plugin_dir.h"
#include "test_paths.h"


namespace ephost {
namespace {

// ---- a plugin linked into the test, standing in for the built-in CPU plugin -------------------------

const EphostHostApi* g_builtin_host = nullptr;

EphostStatus* builtin_describe(EphostPluginInfo* info) {
  info->name = "cpu-test";
  info->vendor = "ephost tests";
  info->version = "2.0.0-rc.1+build.5";
  info->device_type = EPHOST_DEVICE_CPU;
  info->default_priority = 1000;  // higher than any plugin: built-in must still come last
  return nullptr;
}
EphostStatus* builtin_provider_create(const char* const*, const char* const*, size_t, EphostProvider**) {
  return g_builtin_host->status_create(EPHOST_NOT_IMPLEMENTED, "no provider in this test");
}
void builtin_provider_release(EphostProvider*) {}
EphostStatus* builtin_get_capability(EphostProvider*, const EphostGraph*, EphostCapability*) { return nullptr; }

EphostStatus* builtin_negotiate(EphostPluginNegotiation* negotiation) {
  static const EphostPlugin table = [] {
    EphostPlugin t{};
    t.struct_size = sizeof(EphostPlugin);
    t.abi_version = 1;
    t.describe = &builtin_describe;
    t.provider_create = &builtin_provider_create;
    t.provider_release = &builtin_provider_release;
    t.get_capability = &builtin_get_capability;
    return t;
  }();
  g_builtin_host = negotiation->host_api;
  negotiation->plugin_abi_version = 1;
  negotiation->plugin = &table;
  return nullptr;
}

// ---- loading ----------------------------------------------------------------------------------------

TEST(Discovery, LoadsWellBehavedPluginsWithTheirMetadata) {
  PluginDir dir;
  std::string alpha_path = dir.add_plugin("ephost_test_alpha");
  std::string beta_path = dir.add_plugin("ephost_test_beta");
  PluginRegistry registry;
  registry.scan_directories({dir.path()});

  ASSERT_EQ(registry.records().size(), 2u);
  const PluginRecord& alpha = *registry.records()[0];  // file-name order
  EXPECT_EQ(alpha.path, alpha_path);
  EXPECT_TRUE(alpha.loaded);
  EXPECT_EQ(alpha.reason, "");
  EXPECT_EQ(alpha.abi_version, EPHOST_PLUGIN_ABI_VERSION);
  EXPECT_EQ(alpha.name, "alpha");
  EXPECT_EQ(alpha.vendor, "ephost tests");
  EXPECT_EQ(alpha.version, "1.0.0");
  EXPECT_EQ(alpha.device_type, "cpu");
  EXPECT_EQ(alpha.context_source_keys, (std::vector<std::string>{"ALPHA", "AlphaExecutionProvider"}));
  EXPECT_EQ(alpha.sdk_version, "1.0.0");
  EXPECT_EQ(alpha.hardware_architecture, "test-arch");
  EXPECT_EQ(alpha.driver_version, "");
  EXPECT_EQ(alpha.default_priority, 100);
  EXPECT_FALSE(alpha.builtin);
  // The scanner's probe told all the above; the library is loaded when its code is first needed.
  ASSERT_TRUE(registry.ensure_loaded(alpha)) << alpha.skip_reason();
  ASSERT_NE(alpha.plugin, nullptr);
  EXPECT_EQ(alpha.plugin->abi_version, EPHOST_PLUGIN_ABI_VERSION);
  ASSERT_NE(alpha.host_api, nullptr);
  EXPECT_EQ(alpha.host_api->abi_version, EPHOST_PLUGIN_ABI_VERSION);

  const PluginRecord& beta = *registry.records()[1];
  EXPECT_EQ(beta.path, beta_path);
  EXPECT_TRUE(beta.loaded);
  EXPECT_EQ(beta.name, "beta");
  EXPECT_EQ(beta.default_priority, 50);
  EXPECT_NE(alpha.host_api, beta.host_api) << "each plugin gets its own copy of the host table";

  EXPECT_EQ(registry.find_loaded("alpha"), &alpha);
  EXPECT_EQ(registry.find_loaded("beta"), &beta);
  EXPECT_EQ(registry.find_loaded("gamma"), nullptr);
}

TEST(Discovery, SkipsEachBrokenLibraryWithItsReasonAndKeepsGoing) {
  PluginDir dir;
  std::map<std::string, std::string> expected = {
      {"libephost_broken_no_entry.so", "no entry point: the library does not export 'ephost_plugin_negotiate'"},
      {"libephost_broken_refuses.so", "negotiation failed: NOT_IMPLEMENTED: refusing: this plugin needs ABI >= 7"},
      {"libephost_broken_newer_abi.so",
       "plugin answered ABI 99, host speaks 1.." + std::to_string(EPHOST_PLUGIN_ABI_VERSION)},
      {"libephost_broken_negotiate_throws.so", "negotiation threw an exception: negotiation exploded"},
      {"libephost_broken_null_table.so", "negotiation returned no function table (plugin is NULL)"},
      {"libephost_broken_table_abi_mismatch.so", "function table says ABI 2 but negotiation answered ABI 1"},
      {"libephost_broken_missing_member.so", "function table lacks required member 'get_capability'"},
      {"libephost_broken_throws.so", "describe threw an exception: describe exploded"},
      {"libephost_broken_describe_fails.so", "describe failed: EP_FAIL: no test device present"},
      {"libephost_broken_bad_name.so", "invalid metadata: name 'bad name!' has characters outside [A-Za-z0-9_.-]"},
      {"libephost_broken_bad_version.so", "invalid metadata: version '1.0' is not semver MAJOR.MINOR.PATCH"},
      {"libnot_a_plugin.so", "not a shared library: no ELF header"},
      {"libephost_elf32.so", "wrong ELF class: ELFCLASS32 library, host is 64-bit"},
  };
  // Reasons whose text depends on the platform: checked by prefix.
  std::map<std::string, std::string> expected_prefix = {
      {"libephost_broken_short_table.so", "function table too small: struct_size 16 bytes, ABI 1 needs at least "},
      {"libephost_broken_undefined_symbol.so", "dlopen failed: "},
      {"libephost_wrong_machine.so", "built for machine "},
  };
#if defined(__x86_64__)
  expected_prefix.erase("libephost_wrong_machine.so");
  expected["libephost_wrong_machine.so"] = "built for machine EM_AARCH64 (183), host is EM_X86_64 (62)";
#endif
  for (const auto& [file, reason] : expected) dir.add(file);
  for (const auto& [file, reason] : expected_prefix) dir.add(file);
  std::string alpha_path = dir.add_plugin("ephost_test_alpha");
  dir.write("README.txt", "not a candidate: wrong suffix");
  fs::create_directory(dir.file("folder.so"));

  PluginRegistry registry;
  registry.scan_directories({dir.path()});

  EXPECT_EQ(registry.records().size(), expected.size() + expected_prefix.size() + 1)
      << "README.txt and the folder are not candidates and get no record";
  EXPECT_EQ(loaded_names(registry), std::set<std::string>{"alpha"});
  ASSERT_NE(record_for(registry, alpha_path), nullptr);
  EXPECT_TRUE(record_for(registry, alpha_path)->loaded);
  for (const auto& [file, reason] : expected) {
    const PluginRecord* r = record_for(registry, dir.file(file));
    ASSERT_NE(r, nullptr) << file;
    EXPECT_FALSE(r->loaded) << file;
    EXPECT_EQ(r->reason, reason) << file;
    EXPECT_EQ(r->plugin, nullptr) << file;
    EXPECT_EQ(r->host_api, nullptr) << file;
  }
  for (const auto& [file, prefix] : expected_prefix) {
    const PluginRecord* r = record_for(registry, dir.file(file));
    ASSERT_NE(r, nullptr) << file;
    EXPECT_FALSE(r->loaded) << file;
    EXPECT_TRUE(starts_with(r->reason, prefix)) << file << ": " << r->reason;
  }
  EXPECT_NE(record_for(registry, dir.file("libephost_broken_undefined_symbol.so"))->reason.find(
                "undefined symbol: ephost_test_symbol_nothing_defines"),
            std::string::npos)
      << "dlerror's text is kept";
}

TEST(Discovery, RecordsWhatNegotiationAndDescribeGotBeforeTheFailure) {
  PluginDir dir;
  PluginRegistry registry;
  const PluginRecord& refused = registry.load_library(dir.add_plugin("ephost_broken_refuses"));
  EXPECT_EQ(refused.abi_version, 0u) << "negotiation failed";
  EXPECT_EQ(refused.name, "");

  const PluginRecord& bad_name = registry.load_library(dir.add_plugin("ephost_broken_bad_name"));
  EXPECT_EQ(bad_name.abi_version, 1u) << "negotiation succeeded, the metadata did not pass";
  EXPECT_EQ(bad_name.name, "bad name!") << "the report shows what the plugin said";
  EXPECT_EQ(bad_name.version, "0.1.0");
}

TEST(Discovery, SkippedLibraryIsNotKeptLoaded) {
  PluginDir dir;
  std::string bad = dir.add_plugin("ephost_broken_bad_name");
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string beta = dir.add_plugin("ephost_test_beta");
  {
    PluginRegistry registry;
    registry.scan_directories({dir.path()});
    ASSERT_FALSE(record_for(registry, bad)->loaded);
    ASSERT_TRUE(record_for(registry, alpha)->loaded);
    ASSERT_TRUE(record_for(registry, beta)->loaded);
    ASSERT_TRUE(registry.ensure_loaded(*record_for(registry, alpha)));
    ASSERT_TRUE(registry.ensure_loaded(*record_for(registry, beta)));
    EXPECT_FALSE(is_loaded_in_process(bad));
    EXPECT_TRUE(is_loaded_in_process(alpha));
    EXPECT_TRUE(is_loaded_in_process(beta));
  }
  EXPECT_FALSE(is_loaded_in_process(alpha)) << "destroying the registry unloads its plugins";
  EXPECT_FALSE(is_loaded_in_process(beta)) << "destroying the registry unloads its plugins";
}

TEST(Discovery, LogsEverySkipAtWarningLevelWithPathAndReason) {
  PluginDir dir;
  std::string path = dir.add_plugin("ephost_broken_newer_abi");
  EphostLogLevel previous = log_level();
  log_set_level(EPHOST_LOG_WARNING);
  testing::internal::CaptureStderr();
  {
    PluginRegistry registry;
    registry.load_library(path);
  }
  std::string logged = testing::internal::GetCapturedStderr();
  log_set_level(previous);
  EXPECT_NE(logged.find("[warning]"), std::string::npos) << logged;
  EXPECT_NE(logged.find(path), std::string::npos) << logged;
  EXPECT_NE(logged.find("plugin answered ABI 99, host speaks 1.." + std::to_string(EPHOST_PLUGIN_ABI_VERSION)),
            std::string::npos)
      << logged;
}

TEST(Discovery, DuplicateNameKeepsTheFirstLoaded) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string duplicate = dir.add_plugin("ephost_broken_duplicate");
  PluginRegistry registry;
  registry.load_library(alpha);
  const PluginRecord& skipped = registry.load_library(duplicate);
  EXPECT_FALSE(skipped.loaded);
  EXPECT_EQ(skipped.name, "alpha");
  EXPECT_EQ(skipped.reason, "duplicate plugin name 'alpha': already loaded from " + alpha);
  ASSERT_NE(registry.find_loaded("alpha"), nullptr);
  EXPECT_EQ(registry.find_loaded("alpha")->path, alpha);
  EXPECT_FALSE(is_loaded_in_process(duplicate));
}

TEST(Discovery, DuplicateNameInOneScanFirstFileNameWins) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string duplicate = dir.add_plugin("ephost_broken_duplicate");  // sorts before ..._test_alpha
  PluginRegistry registry;
  registry.scan_directories({dir.path()});
  ASSERT_EQ(registry.records().size(), 2u);
  EXPECT_EQ(registry.records()[0]->path, duplicate);
  EXPECT_TRUE(registry.records()[0]->loaded);
  EXPECT_EQ(registry.records()[1]->reason, "duplicate plugin name 'alpha': already loaded from " + duplicate);
}

TEST(Discovery, SameFileTwiceIsLoadedOnce) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string link = dir.file("libalpha_link.so");
  fs::create_symlink(alpha, link);
  PluginRegistry registry;
  EXPECT_TRUE(registry.load_library(alpha).loaded);
  const PluginRecord& again = registry.load_library(alpha);
  EXPECT_FALSE(again.loaded);
  EXPECT_EQ(again.reason, "already loaded from " + alpha);
  const PluginRecord& through_link = registry.load_library(link);
  EXPECT_FALSE(through_link.loaded);
  EXPECT_EQ(through_link.reason, "already loaded from " + alpha);
  EXPECT_EQ(loaded_names(registry), std::set<std::string>{"alpha"});
}

TEST(Discovery, ScanningTwiceAddsNothingLoaded) {
  PluginDir dir;
  dir.add_plugin("ephost_test_alpha");
  PluginRegistry registry;
  registry.scan_directories({dir.path(), dir.path()});
  ASSERT_EQ(registry.records().size(), 2u);
  EXPECT_TRUE(registry.records()[0]->loaded);
  EXPECT_TRUE(starts_with(registry.records()[1]->reason, "already loaded from "));
}

TEST(Discovery, ConcurrentLoadsOfOneFileLoadItOnce) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  PluginRegistry registry;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) threads.emplace_back([&] { registry.load_library(alpha); });
  std::thread reader([&] {
    for (int i = 0; i < 100; ++i) registry.report_json();
  });
  for (auto& t : threads) t.join();
  reader.join();
  std::vector<const PluginRecord*> records = registry.snapshot();
  ASSERT_EQ(records.size(), 8u);
  int loaded = 0;
  for (const PluginRecord* r : records) {
    loaded += r->loaded ? 1 : 0;
    if (!r->loaded) {
      EXPECT_EQ(r->reason, "already loaded from " + alpha);
    }
  }
  EXPECT_EQ(loaded, 1);
}

TEST(Discovery, MissingDirectoryIsSkippedQuietly) {
  PluginDir dir;
  PluginRegistry registry;
  registry.scan_directories({dir.file("does-not-exist"), dir.path()});
  EXPECT_TRUE(registry.records().empty());
}

TEST(Discovery, DanglingSymlinkIsReported) {
  PluginDir dir;
  fs::create_symlink(dir.file("gone.so"), dir.file("libdangling.so"));
  PluginRegistry registry;
  registry.scan_directories({dir.path()});
  ASSERT_EQ(registry.records().size(), 1u);
  EXPECT_TRUE(starts_with(registry.records()[0]->reason, "cannot open file: ")) << registry.records()[0]->reason;
}

// ---- built-in plugin and priority --------------------------------------------------------------------

TEST(Discovery, BuiltinPluginIsRecordedAsBuiltin) {
  PluginRegistry registry;
  registry.add_builtin(&builtin_negotiate);
  ASSERT_EQ(registry.records().size(), 1u);
  const PluginRecord& cpu = *registry.records()[0];
  EXPECT_EQ(cpu.path, "<built-in>");
  EXPECT_TRUE(cpu.builtin);
  EXPECT_TRUE(cpu.loaded);
  EXPECT_EQ(cpu.name, "cpu-test");
  EXPECT_EQ(cpu.version, "2.0.0-rc.1+build.5");
  EXPECT_EQ(cpu.abi_version, 1u);
  EXPECT_EQ(cpu.host_api, g_builtin_host) << "the plugin was handed the record's host table";
}

TEST(Discovery, BuiltinWithoutEntryPointIsSkipped) {
  PluginRegistry registry;
  registry.add_builtin(nullptr);
  ASSERT_EQ(registry.records().size(), 1u);
  EXPECT_FALSE(registry.records()[0]->loaded);
  EXPECT_EQ(registry.records()[0]->reason, "no entry point: the negotiation function is NULL");
}

TEST(Discovery, LoadedByPriorityHighestFirstBuiltinLast) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string beta = dir.add_plugin("ephost_test_beta");
  std::string broken = dir.add_plugin("ephost_broken_refuses");
  PluginRegistry registry;
  registry.add_builtin(&builtin_negotiate);  // priority 1000, yet last
  registry.load_library(beta);               // priority 50, discovered before alpha
  registry.load_library(broken);             // skipped: not listed
  registry.load_library(alpha);              // priority 100
  std::vector<std::string> order;
  for (const PluginRecord* r : registry.loaded_by_priority()) order.push_back(r->name);
  EXPECT_EQ(order, (std::vector<std::string>{"alpha", "beta", "cpu-test"}));
}

// ---- report -------------------------------------------------------------------------------------------

TEST(Discovery, ReportJsonHasOneObjectPerRecordWithEveryField) {
  PluginDir dir;
  std::string alpha = dir.add_plugin("ephost_test_alpha");
  std::string refuses = dir.add_plugin("ephost_broken_refuses");
  PluginRegistry registry;
  registry.add_builtin(&builtin_negotiate);
  registry.scan_directories({dir.path()});

  nlohmann::json report = nlohmann::json::parse(registry.report_json());
  ASSERT_TRUE(report.is_array());
  ASSERT_EQ(report.size(), 3u);
  const std::set<std::string> fields = {"path", "name", "vendor", "version", "device_type", "context_source_keys",
                                        "sdk_version", "hardware_architecture", "driver_version",
                                        "default_priority", "abi_version", "loaded", "in_process", "reason", "builtin",
                                        "probed_by", "probe_outcome", "cached", "probed_at", "age_s",
                                        "probed_again"};
  for (const auto& entry : report) {
    std::set<std::string> keys;
    for (const auto& item : entry.items()) keys.insert(item.key());
    EXPECT_EQ(keys, fields);
  }
  EXPECT_EQ(report[0]["path"], "<built-in>");
  EXPECT_EQ(report[0]["builtin"], true);

  const auto& a = report[2];  // after the built-in; libephost_broken_refuses sorts first
  EXPECT_EQ(a["path"], alpha);
  EXPECT_EQ(a["name"], "alpha");
  EXPECT_EQ(a["vendor"], "ephost tests");
  EXPECT_EQ(a["version"], "1.0.0");
  EXPECT_EQ(a["device_type"], "cpu");
  EXPECT_EQ(a["context_source_keys"], nlohmann::json::array({"ALPHA", "AlphaExecutionProvider"}));
  EXPECT_EQ(a["sdk_version"], "1.0.0");
  EXPECT_EQ(a["hardware_architecture"], "test-arch");
  EXPECT_EQ(a["driver_version"], "");
  EXPECT_EQ(a["default_priority"], 100);
  EXPECT_EQ(a["abi_version"], EPHOST_PLUGIN_ABI_VERSION) << "SDK plugins speak the newest ABI";
  EXPECT_EQ(a["loaded"], true);
  EXPECT_EQ(a["reason"], "");
  EXPECT_EQ(a["builtin"], false);

  const auto& r = report[1];
  EXPECT_EQ(r["path"], refuses);
  EXPECT_EQ(r["loaded"], false);
  EXPECT_EQ(r["abi_version"], 0);
  EXPECT_EQ(r["reason"], "negotiation failed: NOT_IMPLEMENTED: refusing: this plugin needs ABI >= 7");
  EXPECT_EQ(report[0]["probed_by"], "") << "the built-in plugin is linked in, never probed";
  EXPECT_EQ(r["probed_by"], "scanner") << "the tests run with the scanner (tests/test_environment.cpp)";
  EXPECT_EQ(r["probe_outcome"], "refused");
  EXPECT_EQ(a["probe_outcome"], "usable");
}

// ---- search path ------------------------------------------------------------------------------------

TEST(DiscoverySearchPath, SplitsOnColonDroppingEmptyAndRepeatedEntries) {
  EXPECT_EQ(split_plugin_path("/a:/b::/c:/a:"), (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(split_plugin_path(""), std::vector<std::string>{});
  EXPECT_EQ(split_plugin_path(":"), std::vector<std::string>{});
  EXPECT_EQ(split_plugin_path("relative/dir"), std::vector<std::string>{"relative/dir"});
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(DiscoverySearchPath, EnvironmentDirectoriesThenTheDirectoryBesideLibephost) {
  // In this test executable the host is linked statically, so "beside libephost" is beside the test.
  fs::path beside = fs::canonical("/proc/self/exe").parent_path() / "ephost" / "plugins";
  {
    ScopedEnv env("EPHOST_PLUGIN_PATH", "/opt/one:/opt/two::/opt/one");
    EXPECT_EQ(default_plugin_search_path(), (std::vector<std::string>{"/opt/one", "/opt/two", beside.string()}));
  }
  {
    ScopedEnv env("EPHOST_PLUGIN_PATH", nullptr);
    EXPECT_EQ(default_plugin_search_path(), std::vector<std::string>{beside.string()});
    EXPECT_EQ(default_plugin_directory(), beside.string());
  }
}

TEST(DiscoverySearchPath, CandidatesAreSharedLibrariesSortedByName) {
  PluginDir dir;
  dir.write("libz.so", "");
  dir.write("liba.so", "");
  dir.write("libm.so.1", "");
  dir.write("notes.txt", "");
  dir.write(".so", "");
  EXPECT_EQ(list_plugin_candidates(dir.path()), (std::vector<std::string>{dir.file("liba.so"), dir.file("libz.so")}));
  EXPECT_TRUE(is_plugin_candidate_name("libx.so"));
  EXPECT_FALSE(is_plugin_candidate_name("libx.so.1"));
  EXPECT_FALSE(is_plugin_candidate_name("libx.dll"));
}

// ---- metadata and ELF checks --------------------------------------------------------------------------

TEST(DiscoveryMetadata, PluginNames) {
  EXPECT_TRUE(is_valid_plugin_name("alpha"));
  EXPECT_TRUE(is_valid_plugin_name("My_EP-2.0"));
  EXPECT_FALSE(is_valid_plugin_name(""));
  EXPECT_FALSE(is_valid_plugin_name("bad name!"));
  EXPECT_FALSE(is_valid_plugin_name("a/b"));
}

TEST(DiscoveryMetadata, SemanticVersions) {
  for (const char* ok : {"0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0+build.7",
                         "1.0.0-rc.1+sha.5114f85"})
    EXPECT_TRUE(is_semver(ok)) << ok;
  for (const char* bad : {"", "1", "1.0", "1.0.0.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0-a..b", " 1.0.0"})
    EXPECT_FALSE(is_semver(bad)) << bad;
}

TEST(DiscoveryElf, AcceptsRealPluginRejectsTruncatedHeader) {
  PluginDir dir;
  EXPECT_EQ(elf_incompatibility(dir.add_plugin("ephost_test_alpha")), "");
  EXPECT_EQ(elf_incompatibility(dir.write("libshort.so", std::string("\x7f" "ELF\x02\x01", 6))),
            "not a shared library: truncated ELF header (6 bytes)");
  EXPECT_EQ(elf_incompatibility(dir.write("libempty.so", "")), "not a shared library: no ELF header");
  EXPECT_TRUE(starts_with(elf_incompatibility(dir.file("libmissing.so")), "cannot open file: "));
  EXPECT_EQ(elf_machine_name(62), "EM_X86_64 (62)");
  EXPECT_EQ(elf_machine_name(183), "EM_AARCH64 (183)");
  EXPECT_EQ(elf_machine_name(4242), "machine 4242");
}

TEST(DiscoveryElf, ExecutableIsNotASharedLibrary) {
  PluginDir dir;
  std::string path = dir.add_plugin("ephost_test_alpha");
  {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(5);  // EI_DATA
    bool big_endian = file.get() == 2;
    file.seekp(16);  // e_type := ET_EXEC
    if (big_endian) file.put(0).put(2);
    else file.put(2).put(0);
  }
  EXPECT_EQ(elf_incompatibility(path), "not a shared library: ELF type ET_EXEC (2), expected ET_DYN");
}

}  // namespace
}  // namespace ephost
