#include "isolation/isolation_options.h"

#include <cstdlib>

#include "core/error.h"

namespace ephost {
namespace {

std::chrono::milliseconds parse_timeout(const std::string& value, const std::string& where) {
  char* end = nullptr;
  errno = 0;
  const long long ms = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || ms <= 0)
    fail(EPHOST_INVALID_ARGUMENT, "{} must be a positive number of milliseconds, not '{}'", where, value);
  return std::chrono::milliseconds(ms);
}

bool parse_switch(const std::string& value, const std::string& where) {
  if (value == "1") return true;
  if (value == "0") return false;
  fail(EPHOST_INVALID_ARGUMENT, "{} must be 1 or 0, not '{}'", where, value);
}

}  // namespace

const char* isolation_mode_name(IsolationMode mode) {
  switch (mode) {
    case IsolationMode::kInProcess: return "in_process";
    case IsolationMode::kProcess: return "process";
    case IsolationMode::kAuto: return "auto";
  }
  return "auto";
}

IsolationMode parse_isolation_mode(const std::string& value, const std::string& where) {
  for (IsolationMode m : {IsolationMode::kInProcess, IsolationMode::kProcess, IsolationMode::kAuto})
    if (value == isolation_mode_name(m)) return m;
  fail(EPHOST_INVALID_ARGUMENT, "{} is '{}'; use in_process (the plugin runs in the application's process), "
       "process (in a provider host process of its own) or auto (in process unless it crashed or hung before)",
       where, value);
}

IsolationSettings take_isolation_settings(std::vector<std::pair<std::string, std::string>>& options,
                                          const std::string& session_mode, const std::string& provider) {
  IsolationSettings s;
  if (!session_mode.empty()) {
    s.mode = parse_isolation_mode(session_mode, "session option 'session.provider_isolation'");
  } else if (const char* env = std::getenv(kProviderIsolationEnv); env && *env) {
    s.mode = parse_isolation_mode(env, std::string("environment variable ") + kProviderIsolationEnv);
  }
  std::vector<std::pair<std::string, std::string>> kept;
  for (auto& [key, value] : options) {
    const std::string where = "provider option 'ep." + provider + "." + key + "'";
    if (key == "isolation")
      s.mode = parse_isolation_mode(value, where);
    else if (key == "isolation_timeout_ms")
      s.call_timeout = parse_timeout(value, where);
    else if (key == "isolation_compile_timeout_ms")
      s.compile_timeout = parse_timeout(value, where);
    else if (key == "isolation_shared_outputs")
      s.shared_outputs = parse_switch(value, where);
    else
      kept.emplace_back(std::move(key), std::move(value));
  }
  options = std::move(kept);
  return s;
}

}  // namespace ephost
