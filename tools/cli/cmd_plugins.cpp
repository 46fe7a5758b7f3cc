// ephost plugins: what discovery found (EPHOST_PLUGIN_PATH, the default folder, the built-in CPU plugin).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "commands.h"
#include "text_table.h"

namespace ephost_cli {

namespace {

struct PluginsArgs {
  bool json = false;
  std::vector<std::string> libraries;
};

std::string str(const char* s) { return s && *s ? s : "-"; }

int plugins_command(const PluginsArgs& args, const GlobalArgs& global) {
  Ephost::Env env = create_env(global);
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
  // the JSON report says which ("in_process"). Nothing here loads one.
  std::vector<bool> in_process(reports.size(), true);
  try {
    const nlohmann::json report = nlohmann::json::parse(env.plugin_report_json());
    for (size_t i = 0; i < reports.size() && i < report.size(); ++i)
      in_process[i] = report[i].value("in_process", true);
  } catch (const std::exception&) {
    // The report's status column then just says "loaded".
  }
  const size_t n = reports.size();
  TextTable table({"name", "version", "device", "status", "abi", "sdk", "source keys", "path"});
  std::vector<std::string> skipped;
  for (size_t i = 0; i < n; ++i) {
    const EphostPluginReport& r = reports[i];
    std::string status = !r.loaded ? "skipped" : in_process[i] ? "loaded" : "not yet loaded";
    if (!r.loaded) skipped.push_back(str(r.path) + ": " + str(r.reason));
    table.add_row({str(r.name), str(r.version), str(r.device_type), status,
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
  if (!skipped.empty()) {
    std::cout << "skipped:\n";
    for (const auto& s : skipped) std::cout << "  " << s << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace

Command add_plugins_command(CLI::App& app) {
  auto args = std::make_shared<PluginsArgs>();
  CLI::App* cmd = app.add_subcommand("plugins", "Show the plugins discovery found, loaded or skipped and why");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  add_repeatable(cmd, "--load", args->libraries, "Also try to load this plugin library (repeatable)");
  return {cmd, [args](const GlobalArgs& g) { return plugins_command(*args, g); }};
}

}  // namespace ephost_cli
