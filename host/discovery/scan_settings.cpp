#include "discovery/scan_settings.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_scanner.h"
#include "discovery/registry_cache.h"

namespace ephost {

bool parse_scan_mode(const std::string& value, const std::string& what) {
  if (value == "child") return false;
  if (value == "inprocess") return true;
  fail(EPHOST_INVALID_ARGUMENT, "{} is '{}'; expected 'child' (probe plugins in the scanner's child process, the "
       "default) or 'inprocess' (unsafe: a plugin that crashes while probed ends the process)", what, value);
}

std::chrono::milliseconds parse_scan_timeout(const std::string& value, const std::string& what) {
  constexpr long long kMax = 3600000;
  char* end = nullptr;
  errno = 0;
  const long long ms = value.empty() ? -1 : std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || ms < 1 || ms > kMax)
    fail(EPHOST_INVALID_ARGUMENT, "{} is '{}'; expected milliseconds from 1 to {}", what, value, kMax);
  return std::chrono::milliseconds(ms);
}

ScanSettings scan_settings_from_environment() {
  ScanSettings s;
  auto from_env = [](const char* name, auto parse) {
    const char* value = std::getenv(name);
    if (!value || !*value) return;
    try {
      parse(value);
    } catch (const Error& e) {
      log_warning(fmt::format("{}; using the default", e.what()));
    }
  };
  from_env(kPluginScanEnv, [&](const char* v) { s.in_process = parse_scan_mode(v, kPluginScanEnv); });
  from_env(kPluginScanTimeoutEnv, [&](const char* v) { s.timeout = parse_scan_timeout(v, kPluginScanTimeoutEnv); });
  s.registry_file = default_registry_file();
  s.scanner = default_scanner_path();
  return s;
}

}  // namespace ephost
