// How discovery probes candidate libraries: in the plugin scanner's child process (the default) or in
// the host process, under which timeout, with which registry cache. Defaults come from the
// environment; an Env's options override them (env/env.h).
#pragma once

#include <chrono>
#include <string>

namespace ephost {

// Environment variables: EPHOST_PLUGIN_SCAN=inprocess probes in the host process (for environments
// without fork or exec; unsafe: a plugin that crashes while it is probed takes the process with it);
// "child" is the default. EPHOST_PLUGIN_SCAN_TIMEOUT_MS: per library, default 10000.
inline constexpr const char* kPluginScanEnv = "EPHOST_PLUGIN_SCAN";
inline constexpr const char* kPluginScanTimeoutEnv = "EPHOST_PLUGIN_SCAN_TIMEOUT_MS";

struct ScanSettings {
  bool in_process = false;
  std::chrono::milliseconds timeout{10000};
  std::string registry_file;  // registry_cache.h; "" for none
  std::string scanner;        // scanner executable; "" when there is none (then probing is in process)
  // Probe every library again in the scanner, whatever the registry cache remembers, and store the
  // fresh verdicts (`ephost plugins --rescan`, env option env.plugin_rescan). No environment variable:
  // a rescan is asked for once, not for every process.
  bool rescan = false;
};

// From EPHOST_PLUGIN_SCAN, EPHOST_PLUGIN_SCAN_TIMEOUT_MS, EPHOST_PLUGIN_REGISTRY (or the default
// registry file) and EPHOST_PLUGIN_SCANNER (or the installed scanner). An invalid value is logged and
// the default used.
ScanSettings scan_settings_from_environment();

// "child" -> false, "inprocess" -> true; throws INVALID_ARGUMENT for anything else, naming `what`.
bool parse_scan_mode(const std::string& value, const std::string& what);
// A timeout in milliseconds, 1 to 3600000; throws INVALID_ARGUMENT naming `what`.
std::chrono::milliseconds parse_scan_timeout(const std::string& value, const std::string& what);

}  // namespace ephost
