// ephost plugins: what discovery found (EPHOST_PLUGIN_PATH, the default folder, the built-in CPU plugin),
// where each verdict came from (the registry cache, and how old it is, or a probe just now, and why a
// cached verdict was not used), and with --rescan every library probed again.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iostream>
#include <memory>

#include "commands.h"
#include "ephost/ephost_env_options_keys.h"
#include "text_table.h"

namespace ephost_cli {

namespace {

struct PluginsArgs {
  bool json = false;
  bool rescan = false;
  std::vector<std::string> libraries;
};

std::string str(const char* s) { return s && *s ? s : "-"; }

// "45 s", "12 min", "3 h", "2 d" (rounded down), as the library words verdict ages.
std::string age_text(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds < 0 ? 0 : seconds) + " s";
  if (seconds < 3600) return std::to_string(seconds / 60) + " min";
  if (seconds < 86400) return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " d";
}

// What the JSON report says of one record's verdict (report_json.h) that the structured report lacks.
struct Verdict {
  bool in_process = true;
  bool cached = false;
  int64_t age_s = -1;  // -1: never probed (the built-in plugin, a file skipped before any probe)
  std::string probed_again;
  std::vector<std::string> unsupported_devices;  // host devices the plugin cannot use, and why
  // "cached, 3 h old", "probed now", "probed again", "-".
  std::string column() const {
    if (age_s < 0) return "-";
    if (cached) return "cached, " + age_text(age_s) + " old";
    return probed_again.empty() ? "probed now" : "probed again";
  }
};

int plugins_command(const PluginsArgs& args, const GlobalArgs& global) {
  std::vector<std::pair<std::string, std::string>> env_options;
  if (args.rescan) env_options.emplace_back(kEphostEnvOptionsPluginRescan, "1");
  Ephost::Env env = create_env(global, env_options);
  for (const std::string& lib : args.libraries) {
    try {
      env.register_plugin(lib);
    } catch (const Ephost::Exception&) {
      // The attempt lands in the report either way, with this error as the reason shown there.
    }
  }
  if (args.json) {
    std::cout << with_context("plugin report", [&] { return env.plugin_report_json(); }) << std::endl;
    return 0;
  }
  const std::vector<EphostPluginReport> reports = with_context("plugin report", [&] { return env.plugin_reports(); });
  // Lazy loading: a usable plugin the registry cache answered for is not loaded until a session needs it;
  // the JSON report says which ("in_process"), and where each verdict came from. Nothing here loads one.
  std::vector<Verdict> verdicts(reports.size());
  try {
    const nlohmann::json report = nlohmann::json::parse(env.plugin_report_json());
    for (size_t i = 0; i < reports.size() && i < report.size(); ++i) {
      Verdict& v = verdicts[i];
      v.in_process = report[i].value("in_process", true);
      v.cached = report[i].value("cached", false);
      const nlohmann::json age = report[i].value("age_s", nlohmann::json());
      if (age.is_number_integer()) v.age_s = age.get<int64_t>();
      v.probed_again = report[i].value("probed_again", "");
      v.unsupported_devices = report[i].value("unsupported_devices", std::vector<std::string>{});
    }
  } catch (const std::exception&) {
    // The report's status column then just says "loaded", and the verdict column "-".
  }
  const size_t n = reports.size();
  TextTable table({"name", "version", "device", "status", "verdict", "abi", "sdk", "source keys", "path"});
  std::vector<std::string> skipped, probed_again, unsupported;
  for (size_t i = 0; i < n; ++i) {
    const EphostPluginReport& r = reports[i];
    const Verdict& v = verdicts[i];
    std::string status = !r.loaded ? "skipped" : v.in_process ? "loaded" : "not yet loaded";
    if (!r.loaded) {
      std::string line = str(r.path) + ": " + str(r.reason);
      if (v.cached) line += " (cached verdict, " + age_text(v.age_s) + " old; `ephost plugins --rescan` probes again)";
      skipped.push_back(line);
    }
    if (!v.probed_again.empty()) probed_again.push_back(str(r.path) + ": " + v.probed_again);
    for (const std::string& line : v.unsupported_devices) unsupported.push_back(str(r.name) + ": " + line);
    table.add_row({str(r.name), str(r.version), str(r.device_type), status, v.column(),
                   r.abi_version ? std::to_string(r.abi_version) : "-", str(r.sdk_version), str(r.source_keys),
                   str(r.path)});
  }
  std::cout << n << (n == 1 ? " plugin" : " plugins") << " considered:\n";
  table.print(std::cout, "  ", 60);
  // Plugin ABI 3: the devices the loaded plugins drive, named as --providers takes them.
  const std::vector<EphostDeviceReport> devices = with_context("device list", [&] { return env.devices(); });
  if (!devices.empty()) {
    static const char* kTypes[] = {"cpu", "gpu", "npu", "accelerator"};
    TextTable device_table({"device", "type", "name", "vendor", "driver", "architecture", "memory", "memory_mib"});
    for (const EphostDeviceReport& d : devices) {
      const std::string type = d.device_type >= 0 && d.device_type <= 3 ? kTypes[d.device_type] : "?";
      device_table.add_row({std::string(d.plugin) + ":" + std::to_string(d.index), type, str(d.name), str(d.vendor),
                            str(d.driver_version), str(d.hardware_architecture),
                            d.host_memory_usable ? "host" : "device",
                            d.memory_bytes ? std::to_string(d.memory_bytes >> 20) : "-"});
    }
    std::cout << devices.size() << (devices.size() == 1 ? " device:\n" : " devices:\n");
    device_table.print(std::cout, "  ", 60);
  }
  // Why a provider cannot use a host device, as its plugin said (ONNX Runtime plugin EPs).
  if (!unsupported.empty()) {
    std::cout << "devices not supported:\n";
    for (const auto& s : unsupported) std::cout << "  " << s << "\n";
  }
  if (!skipped.empty()) {
    std::cout << "skipped:\n";
    for (const auto& s : skipped) std::cout << "  " << s << "\n";
  }
  // Libraries whose cached verdict no longer held (the registry cache: a refusal or timeout whose
  // environment, device list or age changed, or --rescan).
  if (!probed_again.empty()) {
    std::cout << "probed again:\n";
    for (const auto& s : probed_again) std::cout << "  " << s << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace

Command add_plugins_command(CLI::App& app) {
  auto args = std::make_shared<PluginsArgs>();
  CLI::App* cmd = app.add_subcommand("plugins", "Show the plugins discovery found, loaded or skipped and why");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->add_flag("--rescan", args->rescan,
                "Probe every plugin library again, ignoring the verdicts the plugin registry cache remembers, and "
                "store the fresh ones");
  add_repeatable(cmd, "--load", args->libraries, "Also try to load this plugin library (repeatable)");
  return {cmd, [args](const GlobalArgs& g) { return plugins_command(*args, g); }};
}

}  // namespace ephost_cli
