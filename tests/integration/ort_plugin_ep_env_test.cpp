// What an ONNX Runtime plugin EP relies on beyond partitioning and compute, end to end through the C API,
// with the test EP "ortvirt" (tests/plugins/ort_ep, build "virtual"):
//  - a hardware device it describes itself (OrtEpApi::CreateHardwareDevice, a virtual GPU) is offered in
//    the device list, selectable as "ortvirt:0", and the EP is created on it and runs its nodes;
//  - why it passes over the CPU (its factory's GetHardwareDeviceIncompatibilityDetails) reaches the plugin
//    report and `ephost plugins`, and is what an application-side question through OrtApi's env
//    (CreateEnv, GetHardwareDeviceEpIncompatibilityDetails) answers inside the plugin;
//  - its profiler's events (OrtEp::CreateProfiler, OrtEpApi's profiling events) appear in the session's
//    profile with their names, times and arguments;
//  - the source model of a weightless EPContext model (ep.context_source_model_path) reaches it through
//    SessionOptionsGetWeightlessSourceModelBuffer.
// The plugin itself checks that bad arguments give ORT_INVALID_ARGUMENT statuses (CreateEp or
// StartProfiling fail, and these tests with them, when one does not).
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "chain_check.h"
#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "ort_test_plugins.h"
#include "test_paths.h"
#include "test_support.h"

using json = nlohmann::json;
using ephost_test::TempDir;

namespace {

using ephost_test::assignment;
using ephost_test::install_ort_plugin;
using ephost_test::read_text;

const char* const kCpuRefusal = "device incompatible: ortvirt runs on its virtual GPU only (error 11)";

json report_entry(const Ephost::Env& env, const std::string& name) {
  for (const auto& r : json::parse(env.plugin_report_json()))
    if (r.value("name", "") == name) return r;
  return json();
}

class OrtPluginEpEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    install_ort_plugin(plugins_, "virtual");
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    model_path_ = ephost_test::chain_model(4, 6).save(models_);
  }
  // Options picking the virtual GPU, the plugin writing what the environment answered to env_log().
  Ephost::SessionOptions on_virtual_gpu() const {
    Ephost::SessionOptions options;
    options.append_provider_for_device("ortvirt", 0);
    options.add_config("ep.ortvirt.env_log", env_log());
    return options;
  }
  std::string env_log() const { return models_.file("env.log"); }
  // Runs the model twice with the session profiling (and `isolation`), and checks the EP's own events in the
  // trace against the host's.
  void expect_eps_events_in_profile(const std::string& isolation);

  TempDir plugins_, models_;
  std::unique_ptr<Ephost::Env> env_;
  std::string model_path_;
};

TEST_F(OrtPluginEpEnv, AVirtualDeviceThePluginDescribesIsOfferedAndUsed) {
  const json r = report_entry(*env_, "ortvirt");
  ASSERT_FALSE(r.is_null()) << env_->plugin_report_json();
  EXPECT_EQ(r["probe_outcome"], "usable") << r.dump(2);
  ASSERT_EQ(r.value("devices", json::array()).size(), 1u) << r.dump(2);  // the virtual GPU, not the host's CPU
  EXPECT_EQ(r["devices"][0]["type"], "gpu") << r.dump(2);
  EXPECT_EQ(r["devices"][0]["label"], "ortvirt:0") << r.dump(2);
  EXPECT_NE(r.dump().find("ortvirt virtual GPU"), std::string::npos) << r.dump(2);

  Ephost::Session s(*env_, model_path_, on_virtual_gpu());
  auto a = assignment(s);
  EXPECT_EQ(a["add"].rfind("ortvirt", 0), 0u) << a["add"];
  EXPECT_EQ(a["relu"].rfind("ortvirt", 0), 0u) << a["relu"];
  EXPECT_EQ(a["sub"], "cpu");
  ephost_test::expect_chain_output(s, 4, 6);
}

TEST_F(OrtPluginEpEnv, WhyItPassesOverTheCpuReachesTheReportAndTheEnvQuery) {
  const json r = report_entry(*env_, "ortvirt");
  ASSERT_EQ(r.value("unsupported_devices", json::array()).size(), 1u) << r.dump(2);
  const std::string line = r["unsupported_devices"][0];
  EXPECT_EQ(line.rfind("cpu '", 0), 0u) << line;
  EXPECT_NE(line.find(kCpuRefusal), std::string::npos) << line;

  // Inside CreateEp the plugin asks the environment, as an application would; its factory's answer comes back.
  Ephost::Session s(*env_, model_path_, on_virtual_gpu());
  const std::string log = read_text(env_log());
  EXPECT_NE(log.find("cpu reasons=2 error=11 notes=ortvirt runs on its virtual GPU only\n"), std::string::npos) << log;
  EXPECT_NE(log.find("virtual reasons=0 error=0 notes=(none)\n"), std::string::npos) << log;
  EXPECT_NE(log.find("weightless bytes=0\n"), std::string::npos) << log;

  const ephost_test::CommandResult listing = ephost_test::run_command(
      "EPHOST_PLUGIN_PATH='" + plugins_.path() + "' EPHOST_PLUGIN_REGISTRY='" + models_.file("registry.json") +
      "' '" + EPHOST_CLI_PATH + "' plugins 2>&1");
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("ortvirt: cpu '"), std::string::npos) << listing.output;
  EXPECT_NE(listing.output.find(kCpuRefusal), std::string::npos) << listing.output;
}

TEST_F(OrtPluginEpEnv, TheSourceModelOfAWeightlessContextReachesTheEp) {
  Ephost::SessionOptions options = on_virtual_gpu();
  options.add_config(kEphostSessionOptionsEpContextSourceModelPath, model_path_);
  Ephost::Session s(*env_, model_path_, options);
  const auto size = boost::filesystem::file_size(model_path_);
  const std::string log = read_text(env_log());
  EXPECT_NE(log.find("weightless bytes=" + std::to_string(size) + "\n"), std::string::npos) << log;
}

std::vector<json> events_of(const json& trace, const std::string& category) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e.value("cat", "") == category) out.push_back(e);
  return out;
}

TEST_F(OrtPluginEpEnv, TheSourceModelReachesAnIsolatedEpToo) {
  Ephost::SessionOptions options = on_virtual_gpu();
  options.add_config(kEphostSessionOptionsEpContextSourceModelPath, model_path_)
      .add_config("session.provider_isolation", "process");
  Ephost::Session s(*env_, model_path_, options);
  bool isolated = false;
  for (const auto& p : s.provider_states())
    if (p.provider == "ortvirt") isolated = p.state != EPHOST_PROVIDER_IN_PROCESS;
  ASSERT_TRUE(isolated) << "ortvirt should run in a provider host";
  const auto size = boost::filesystem::file_size(model_path_);
  const std::string log = read_text(env_log());
  EXPECT_NE(log.find("weightless bytes=" + std::to_string(size) + "\n"), std::string::npos) << log;
}

TEST_F(OrtPluginEpEnv, ItsProfilersEventsAppearInTheSessionsProfile) { expect_eps_events_in_profile(""); }

// In a provider host the EP's profiler is asked the same, and its events come back into the host's profile.
TEST_F(OrtPluginEpEnv, AnIsolatedEpsProfilerEventsAppearInTheSessionsProfile) {
  expect_eps_events_in_profile("process");
}

void OrtPluginEpEnv::expect_eps_events_in_profile(const std::string& isolation) {
  Ephost::SessionOptions options = on_virtual_gpu();
  if (!isolation.empty()) options.add_config("session.provider_isolation", isolation);
  options.add_config(kEphostSessionOptionsEnableProfiling, "1")
      .add_config(kEphostSessionOptionsProfileFilePrefix, models_.file("trace"));
  Ephost::Session s(*env_, model_path_, options);
  for (const auto& p : s.provider_states())
    if (p.provider == "ortvirt") EXPECT_EQ(p.state != EPHOST_PROVIDER_IN_PROCESS, !isolation.empty());
  ephost_test::expect_chain_output(s, 4, 6);
  ephost_test::expect_chain_output(s, 4, 6);
  std::ifstream in(s.end_profiling());
  std::stringstream text;
  text << in.rdbuf();
  const json trace = json::parse(text.str(), nullptr, false);
  ASSERT_TRUE(trace.is_object()) << text.str();

  // The host's node events of the EP's fused groups, by name.
  std::map<std::string, int> host_runs;
  for (const json& e : events_of(trace, "node"))
    if (e["args"].value("provider", "").rfind("ortvirt", 0) == 0) ++host_runs[e["name"]];
  ASSERT_FALSE(host_runs.empty()) << text.str();

  // One kernel event of the EP's per host event, named after it, with the EP's arguments and the provider.
  std::map<std::string, int> ep_runs;
  std::set<std::string> correlation_ids;
  for (const json& e : events_of(trace, "kernel")) {
    const std::string name = e["name"];
    ASSERT_EQ(name.rfind("ortvirt:", 0), 0u) << e.dump();
    const json& args = e["args"];
    EXPECT_EQ(args.value("ort_event", ""), name.substr(8)) << e.dump();
    EXPECT_EQ(args.value("ort_provider", "").rfind("ortvirt", 0), 0u) << e.dump();
    EXPECT_EQ(args.value("ort_category", ""), "1") << e.dump();  // the host's event is a NODE event
    EXPECT_EQ(args.value("provider", "").rfind("ortvirt", 0), 0u) << e.dump();
    EXPECT_GE(e["ts"].get<int64_t>(), 0) << e.dump();
    EXPECT_GE(e["dur"].get<int64_t>(), 0) << e.dump();
    correlation_ids.insert(args.value("correlation_id", ""));
    ++ep_runs[name.substr(8)];
  }
  EXPECT_EQ(ep_runs, host_runs) << text.str();
  size_t total = 0;
  for (const auto& [name, runs] : ep_runs) total += static_cast<size_t>(runs);
  EXPECT_EQ(correlation_ids.size(), total) << "one correlation id per compute";

  // The EP's session event, saying how many it reported.
  bool summary = false;
  for (const json& e : events_of(trace, "session"))
    if (e["name"] == "ortvirt profile") {
      summary = true;
      EXPECT_EQ(e["args"].value("events", ""), std::to_string(total)) << e.dump();
    }
  EXPECT_TRUE(summary) << text.str();
}

// The same through the CLI: `--providers ortvirt:0` picks the virtual device, and `--profile` writes a trace
// holding the EP's own events.
TEST_F(OrtPluginEpEnv, TheCliPicksTheVirtualDeviceAndItsTraceHoldsTheEpsEvents) {
  const std::string trace_path = models_.file("cli_trace.json");
  const ephost_test::CommandResult run = ephost_test::run_command(
      "EPHOST_PLUGIN_PATH='" + plugins_.path() + "' EPHOST_PLUGIN_REGISTRY='" + models_.file("registry.json") +
      "' '" + EPHOST_CLI_PATH + "' run --providers ortvirt:0,cpu --report --shape x=4,6 --profile '" + trace_path +
      "' '" + model_path_ + "' 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("ortvirt"), std::string::npos) << run.output;
  std::ifstream in(trace_path);
  std::stringstream text;
  text << in.rdbuf();
  const json trace = json::parse(text.str(), nullptr, false);
  ASSERT_TRUE(trace.is_object()) << run.output << text.str();
  EXPECT_FALSE(events_of(trace, "kernel").empty()) << text.str();
}

}  // namespace
