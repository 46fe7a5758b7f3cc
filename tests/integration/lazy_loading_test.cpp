// Lazy loading of plugins (discovery/plugin_registry.h): on a warm start, a library the registry cache
// knows as usable and unchanged is not loaded when the env is created; it is loaded the first time its
// code is needed (a session that uses it, a device that is used), once, whatever the number of threads
// asking. A library replaced on disk in between is probed again in the scanner, never loaded unprobed,
// and drops out with the reason while the session goes on without it.
//
// What a plugin did in this process is read from the call record (plugin_call_record.h, Vulkan-Loader's
// test-ICD habit): the test plugins record their negotiation, which only a load in process runs (the
// scanner probes in a child process, whose calls are not recorded here). dlopen(RTLD_NOLOAD) says
// whether a library is mapped at all.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/filesystem.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_env_options_keys.h"
#include "ephost/ephost_plugin.h"
#include "plugin_call_record.h"
#include "chain_check.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using ephost_test::PluginCall;
using json = nlohmann::json;
namespace fs = boost::filesystem;

constexpr int64_t kRows = 2, kCols = 3;

bool mapped(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return false;
  dlclose(handle);
  return true;
}

// The report's entry for `path`.
json report_entry(const Ephost::Env& env, const std::string& path) {
  for (const json& entry : json::parse(env.plugin_report_json()))
    if (entry["path"] == path) return entry;
  ADD_FAILURE() << "no report entry for " << path << ":\n" << env.plugin_report_json();
  return json::object();
}

class LazyLoading : public ::testing::Test {
 protected:
  // An env over the test's plugin folder with the test's own registry cache.
  std::unique_ptr<Ephost::Env> make_env() const {
    const std::vector<std::string> dirs{plugin_dir_.path()};
    return std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, &dirs,
                                         std::vector<std::pair<std::string, std::string>>{
                                             {kEphostEnvOptionsPluginRegistry, registry_dir_.file("registry.json")}});
  }
  // Installs `plugins`, lets a first (cold) env probe them and fill the registry cache, releases it,
  // and returns a second env: a warm start. since_ is the clock before the warm env was made.
  std::unique_ptr<Ephost::Env> warm_env(const std::vector<std::string>& plugins) {
    ephost_test::install_plugins(plugin_dir_, plugins);
    make_env().reset();  // cold: probed by the scanner, not loaded
    since_ = ephost_test::plugin_call_clock_tick();
    return make_env();
  }
  std::string library(const std::string& plugin) const { return plugin_dir_.file("lib" + plugin + ".so"); }

  // How often `plugin` was negotiated (= loaded) in this process since the warm env was made.
  size_t loads(const std::string& plugin) const { return count(plugin, "negotiate"); }
  size_t count(const std::string& plugin, const std::string& function) const {
    size_t n = 0;
    for (const PluginCall& c : record_.calls(plugin)) n += c.begin > since_ && c.function == function ? 1 : 0;
    return n;
  }

  std::unique_ptr<Ephost::Session> chain_session(const Ephost::Env& env, const Ephost::SessionOptions& options) {
    const std::string bytes = ephost_test::chain_model(kRows, kCols).bytes();
    return std::make_unique<Ephost::Session>(env, bytes.data(), bytes.size(), options);
  }

  ephost_test::PluginCallRecording record_;
  ephost_test::TempDir plugin_dir_;
  ephost_test::TempDir registry_dir_;
  uint64_t since_ = 0;
};

TEST_F(LazyLoading, WarmEnvCreationLoadsNoUsableLibrary) {
  auto env = warm_env({"ephost_test_alpha", "ephost_test_beta"});
  EXPECT_EQ(loads("alpha"), 0u);
  EXPECT_EQ(loads("beta"), 0u);
  EXPECT_TRUE(record_.calls("alpha").empty() || record_.calls("alpha").back().begin < since_)
      << "nothing of alpha ran in process since the warm env was made";
  for (const char* plugin : {"ephost_test_alpha", "ephost_test_beta"}) {
    SCOPED_TRACE(plugin);
    EXPECT_FALSE(mapped(library(plugin)));
    const json entry = report_entry(*env, library(plugin));
    EXPECT_EQ(entry["loaded"], true) << "usable";
    EXPECT_EQ(entry["in_process"], false) << "but not loaded yet";
    EXPECT_EQ(entry["probed_by"], "registry");
  }
  // The report carries what the registry cache knows, as a cold start would show it.
  const json alpha = report_entry(*env, library("ephost_test_alpha"));
  EXPECT_EQ(alpha["name"], "alpha");
  EXPECT_EQ(alpha["version"], "1.0.0");
  EXPECT_EQ(alpha["abi_version"], EPHOST_PLUGIN_ABI_VERSION);
  EXPECT_EQ(alpha["context_source_keys"], json::array({"ALPHA", "AlphaExecutionProvider"}));
  EXPECT_EQ(alpha["default_priority"], 100);
  // The C API's report says usable, with no reason.
  for (const EphostPluginReport& r : env->plugin_reports())
    if (std::string(r.name) == "alpha") {
      EXPECT_EQ(r.loaded, 1);
      EXPECT_STREQ(r.reason, "");
    }
  EXPECT_EQ(loads("alpha"), 0u) << "reading the report loads nothing";
}

// Cold starts (the scanner has just probed the library) defer the load as warm ones do: an isolated
// provider must never have its plugin in the host process. In-process probing (no probe to trust)
// loads usable libraries at env creation.
TEST_F(LazyLoading, ColdStartsDeferAndInProcessProbingLoadsEagerly) {
  ephost_test::install_plugins(plugin_dir_, {"ephost_test_alpha"});
  since_ = ephost_test::plugin_call_clock_tick();
  auto cold = make_env();
  EXPECT_EQ(loads("alpha"), 0u) << "the scanner's probe is trusted as the registry cache's is";
  EXPECT_EQ(report_entry(*cold, library("ephost_test_alpha"))["probed_by"], "scanner");
  EXPECT_EQ(report_entry(*cold, library("ephost_test_alpha"))["loaded"], true);
  EXPECT_EQ(report_entry(*cold, library("ephost_test_alpha"))["in_process"], false);
  cold.reset();

  since_ = ephost_test::plugin_call_clock_tick();
  const std::vector<std::string> dirs{plugin_dir_.path()};
  Ephost::Env in_process(EPHOST_LOG_ERROR, &dirs,
                         {{kEphostEnvOptionsPluginRegistry, registry_dir_.file("registry.json")},
                          {kEphostEnvOptionsPluginScan, "inprocess"}});
  EXPECT_EQ(loads("alpha"), 1u) << "the registry cache knows alpha, but in-process probing loads it";
  const json entry = report_entry(in_process, library("ephost_test_alpha"));
  EXPECT_EQ(entry["probed_by"], "in process");
  EXPECT_EQ(entry["in_process"], true);
}

TEST_F(LazyLoading, SessionUsingThePluginLoadsItAndRuns) {
  auto env = warm_env({"ephost_test_alpha"});
  ASSERT_EQ(loads("alpha"), 0u);
  auto session = chain_session(*env, Ephost::SessionOptions());  // default providers: alpha, then cpu
  EXPECT_EQ(loads("alpha"), 1u);
  EXPECT_TRUE(mapped(library("ephost_test_alpha")));
  EXPECT_EQ(report_entry(*env, library("ephost_test_alpha"))["in_process"], true);
  ephost_test::expect_chain_output(*session, kRows, kCols);
  EXPECT_GT(count("alpha", "kernel_compute"), 0u) << "alpha ran its nodes";
  // A second session finds it loaded.
  Ephost::SessionOptions listed;
  listed.append_provider("alpha");
  auto second = chain_session(*env, listed);
  ephost_test::expect_chain_output(*second, kRows, kCols);
  EXPECT_EQ(loads("alpha"), 1u);
}

TEST_F(LazyLoading, SessionWithOtherProvidersDoesNotLoadIt) {
  auto env = warm_env({"ephost_test_alpha", "ephost_test_beta"});
  Ephost::SessionOptions options;
  options.append_provider("beta");
  auto session = chain_session(*env, options);
  ephost_test::expect_chain_output(*session, kRows, kCols);
  EXPECT_EQ(loads("beta"), 1u);
  EXPECT_EQ(loads("alpha"), 0u);
  EXPECT_FALSE(mapped(library("ephost_test_alpha")));
  EXPECT_EQ(report_entry(*env, library("ephost_test_alpha"))["in_process"], false);
}

// The library is replaced between the env's creation and the session's by one of the same file name that
// crashes when negotiated: loading it on the strength of the old probe would take this process down.
TEST_F(LazyLoading, LibraryReplacedOnDiskIsProbedAgainAndSkippedWithTheReason) {
  auto env = warm_env({"ephost_test_alpha"});
  const std::string path = library("ephost_test_alpha");
  const std::string replacement = path + ".new";
  fs::copy_file(ephost_test::test_plugin("ephost_broken_negotiate_segfault"), replacement);
  fs::rename(replacement, path);  // as a package manager replaces a file

  auto session = chain_session(*env, Ephost::SessionOptions());  // alpha would come first
  ephost_test::expect_chain_output(*session, kRows, kCols);  // on the CPU plugin
  EXPECT_EQ(loads("alpha"), 0u);
  EXPECT_FALSE(mapped(path));
  const json entry = report_entry(*env, path);
  EXPECT_EQ(entry["loaded"], false);
  EXPECT_EQ(entry["in_process"], false);
  const std::string reason = entry["reason"];
  EXPECT_NE(reason.find("changed on disk"), std::string::npos) << reason;
  EXPECT_NE(reason.find("probed again: crashed during negotiation: killed by SIGSEGV"), std::string::npos) << reason;
  for (const EphostPluginReport& r : env->plugin_reports())
    if (std::string(r.path) == path) {
      EXPECT_EQ(r.loaded, 0);
      EXPECT_EQ(std::string(r.reason), reason);
    }
  // Listed by name, it is unavailable with the same reason.
  Ephost::SessionOptions listed;
  listed.append_provider("alpha");
  try {
    chain_session(*env, listed);
    ADD_FAILURE() << "a session listing a plugin that dropped out was created";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(std::string(e.what()).find("changed on disk"), std::string::npos) << e.what();
  }
  // The next start knows the new file from the re-probe: skipped without probing it again.
  session.reset();
  env.reset();
  auto next = make_env();
  const json again = report_entry(*next, path);
  EXPECT_EQ(again["loaded"], false);
  EXPECT_EQ(again["probed_by"], "registry");
  EXPECT_EQ(again["probe_outcome"], "crashed");
}

// A library rewritten in place with a clean build of the same plugin is probed again and then loaded.
TEST_F(LazyLoading, LibraryChangedButStillCleanIsProbedAgainAndLoaded) {
  auto env = warm_env({"ephost_test_alpha"});
  const std::string path = library("ephost_test_alpha");
  fs::last_write_time(path, fs::last_write_time(path) + 10);  // the same bytes, a new mtime
  auto session = chain_session(*env, Ephost::SessionOptions());
  ephost_test::expect_chain_output(*session, kRows, kCols);
  EXPECT_EQ(loads("alpha"), 1u);
  EXPECT_GT(count("alpha", "kernel_compute"), 0u);
  const json entry = report_entry(*env, path);
  EXPECT_EQ(entry["loaded"], true);
  EXPECT_EQ(entry["in_process"], true);
  // It was probed again (not loaded on the old probe): the registry cache knows the changed file.
  session.reset();
  env.reset();
  EXPECT_EQ(report_entry(*make_env(), path)["probed_by"], "registry");
}

TEST_F(LazyLoading, TwoThreadsCreatingSessionsLoadItOnce) {
  auto env = warm_env({"ephost_test_alpha", "ephost_test_beta"});
  ASSERT_EQ(loads("alpha") + loads("beta"), 0u) << "not loaded before the sessions";
  constexpr int kThreads = 4;
  std::atomic<int> waiting{kThreads};
  std::vector<std::unique_ptr<Ephost::Session>> sessions(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();  // all start together
      try {
        sessions[t] = chain_session(*env, Ephost::SessionOptions());
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ephost_test::expect_chain_output(*sessions[t], kRows, kCols);
  }
  EXPECT_EQ(loads("alpha"), 1u);
  EXPECT_EQ(loads("beta"), 1u);
  EXPECT_EQ(count("alpha", "describe"), 1u);
  // Every session got both plugins (none saw a half-loaded or dropped record).
  EXPECT_EQ(count("alpha", "provider_create"), static_cast<size_t>(kThreads));
  EXPECT_EQ(count("beta", "provider_create"), static_cast<size_t>(kThreads));
  for (const char* plugin : {"ephost_test_alpha", "ephost_test_beta"}) {
    const json entry = report_entry(*env, library(plugin));
    EXPECT_EQ(entry["loaded"], true) << plugin;
    EXPECT_EQ(entry["in_process"], true) << plugin;
  }
}

// ephost_broken_duplicate describes itself as "alpha" and sorts before libephost_test_alpha.so.
TEST_F(LazyLoading, DuplicateNamesAreSkippedWarmWithoutLoading) {
  auto env = warm_env({"ephost_test_alpha", "ephost_broken_duplicate"});
  const std::string first = library("ephost_broken_duplicate"), second = library("ephost_test_alpha");
  EXPECT_FALSE(mapped(first));
  EXPECT_FALSE(mapped(second));
  EXPECT_EQ(loads("alpha"), 0u);
  const json kept = report_entry(*env, first), dropped = report_entry(*env, second);
  EXPECT_EQ(kept["loaded"], true);
  EXPECT_EQ(kept["in_process"], false);
  EXPECT_EQ(dropped["loaded"], false);
  EXPECT_EQ(dropped["probed_by"], "registry");
  EXPECT_EQ(dropped["reason"], "duplicate plugin name 'alpha': already loaded from " + first);
}

// Plugin ABI 3 devices are listed from the registry cache without loading the plugin; using one loads it.
TEST_F(LazyLoading, DeviceListComesFromTheCacheAndUsingADeviceLoadsThePlugin) {
  ephost_test::install_plugins(plugin_dir_, {"ephost_test_fakedev"});
  std::vector<EphostDeviceReport> cold_devices;
  std::vector<std::string> cold_strings;  // copied while the cold env (which owns the reports' strings) lives
  {
    auto cold = make_env();
    cold_devices = cold->devices();
    for (const auto& d : cold_devices)
      cold_strings.push_back(std::string(d.plugin) + d.name + d.vendor + d.driver_version);
  }
  ASSERT_EQ(cold_devices.size(), 2u);
  auto env = make_env();
  const std::string path = library("ephost_test_fakedev");
  ASSERT_FALSE(mapped(path));
  const std::vector<EphostDeviceReport> devices = env->devices();
  ASSERT_EQ(devices.size(), 2u);
  for (size_t i = 0; i < devices.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(std::string(devices[i].plugin) + devices[i].name + devices[i].vendor + devices[i].driver_version,
              cold_strings[i]);
    EXPECT_EQ(devices[i].index, cold_devices[i].index);
    EXPECT_EQ(devices[i].device_type, cold_devices[i].device_type);
    EXPECT_EQ(devices[i].memory_bytes, cold_devices[i].memory_bytes);
    EXPECT_EQ(devices[i].host_memory_usable, cold_devices[i].host_memory_usable);
    EXPECT_EQ(devices[i].memory_kinds, cold_devices[i].memory_kinds);
  }
  EXPECT_FALSE(mapped(path)) << "listing devices loads nothing";
  const json entry = report_entry(*env, path);
  ASSERT_EQ(entry["devices"].size(), 2u);
  EXPECT_EQ(entry["devices"][1]["label"], std::string(devices[1].plugin) + ":1");

  Ephost::Tensor t = env->device_tensor(devices[0].plugin, 0, EPHOST_ELEMENT_FLOAT, {4});
  EXPECT_TRUE(t.on_device());
  EXPECT_TRUE(mapped(path));
  EXPECT_EQ(report_entry(*env, path)["in_process"], true);
}

// `ephost plugins` on a warm start prints from the registry: nothing loaded, each usable plugin shown so.
TEST_F(LazyLoading, PluginsCommandOnAWarmStartSaysNotYetLoaded) {
  ephost_test::install_plugins(plugin_dir_, {"ephost_test_alpha"});
  const std::string command = "EPHOST_PLUGIN_PATH='" + plugin_dir_.path() + "' EPHOST_PLUGIN_REGISTRY='" +
                              registry_dir_.file("registry.json") + "' '" + EPHOST_CLI_PATH + "' plugins 2>&1";
  // Cold or warm, `ephost plugins` loads nothing: the scanner's probe or the cache's answers.
  const ephost_test::CommandResult cold = ephost_test::run_command(command);
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  EXPECT_NE(cold.output.find("not yet loaded"), std::string::npos) << cold.output;
  EXPECT_NE(cold.output.find("probed now"), std::string::npos) << cold.output;
  const ephost_test::CommandResult warm = ephost_test::run_command(command);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_NE(warm.output.find("not yet loaded"), std::string::npos) << warm.output;
}

}  // namespace
