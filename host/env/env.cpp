#include "env/env.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/error.h"
#include "core/log.h"
#include "core/plugin_fault.h"
#include "epcontext/context_schema.h"
#include "opsets/opsets.h"
#include "ephost/ephost_env_options_keys.h"
#include "ephost/ephost_plugin.h"

// The built-in CPU plugin (plugins/cpu), linked in and negotiated with like any discovered plugin.
extern "C" EphostStatus* ephost_cpu_plugin_negotiate(EphostPluginNegotiation* negotiation);

namespace ephost {

namespace {

// Milliseconds, 0 (off) to one day.
std::chrono::milliseconds parse_call_warning(const std::string& value, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long long ms = value.empty() ? -1 : std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || ms < 0 || ms > 86400000)
    fail(EPHOST_INVALID_ARGUMENT, "{} is '{}'; expected milliseconds from 0 (no warning) to 86400000", what, value);
  return std::chrono::milliseconds(ms);
}

}  // namespace

EnvConfig make_env_config(const std::vector<std::pair<std::string, std::string>>& options) {
  EnvConfig config;
  if (const char* env = std::getenv(kPluginCallWarningEnv); env && *env) {
    try {
      config.plugin_call_warning = parse_call_warning(env, kPluginCallWarningEnv);
    } catch (const Error& e) {
      log_warning(fmt::format("{}; using the default", e.what()));
    }
  }
  for (const auto& [key, value] : options) {
    const std::string what = fmt::format("env option '{}'", key);
    if (key == kEphostEnvOptionsPluginScan) {
      config.scan.in_process = parse_scan_mode(value, what);
    } else if (key == kEphostEnvOptionsPluginScanTimeoutMs) {
      config.scan.timeout = parse_scan_timeout(value, what);
    } else if (key == kEphostEnvOptionsPluginRegistry) {
      config.scan.registry_file = value;
    } else if (key == kEphostEnvOptionsPluginRescan) {
      if (value != "0" && value != "1")
        fail(EPHOST_INVALID_ARGUMENT, "{} is '{}'; expected '1' (probe every plugin library again, ignoring the "
             "registry cache's verdicts) or '0' (the default)", what, value);
      config.scan.rescan = value == "1";
    } else if (key == kEphostEnvOptionsPluginCallWarningMs) {
      config.plugin_call_warning = parse_call_warning(value, what);
    } else {
      fail(EPHOST_INVALID_ARGUMENT, "unknown env option '{}'; env options are {}, {}, {}, {} and {} "
           "(ephost/ephost_env_options_keys.h)", key, kEphostEnvOptionsPluginScan,
           kEphostEnvOptionsPluginScanTimeoutMs, kEphostEnvOptionsPluginRegistry, kEphostEnvOptionsPluginRescan,
           kEphostEnvOptionsPluginCallWarningMs);
    }
  }
  return config;
}

Env::Env(EphostLogLevel level, const std::vector<std::string>* dirs, const EnvConfig& config)
    : registry_(config.scan) {
  log_set_level(level);
  // From here on a plugin's own code runs in this process: a crash in it is at least named.
  install_plugin_fault_reporter();
  start_plugin_hang_watchdog(config.plugin_call_warning);
  // Models of this env are checked against the EPContext schema (com.microsoft), as ONNX Runtime does.
  epctx::register_schema();
  opsets::register_schemas();
  registry_.add_builtin(&ephost_cpu_plugin_negotiate);
  registry_.scan_directories(dirs ? *dirs : default_plugin_search_path());
  // A plugin that crashes or hangs in this process is remembered for the next one (isolation mode auto).
  set_plugin_fault_journal(plugin_fault_journal_path(registry_.scan_settings().registry_file));
}

Env::~Env() {
  // A weight-sharing group whose last session (ep.stop_share_ep_contexts=1) never came: its binary
  // was never written, and the ctx models written so far point at a missing file.
  auto lock = context_share_.lock();
  for (const std::string& plugin : context_share_.open_generations())
    log_warning(fmt::format("EPContext weight sharing for provider '{}' was never finished: '{}' was not written "
                            "(set ep.stop_share_ep_contexts=1 on the last session of the group)",
                            plugin, context_share_.generation(plugin)->bin_path));
}

}  // namespace ephost
