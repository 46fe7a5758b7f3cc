// The env: logging level, the plugin registry (discovery runs once, when the env is created), and
// what sessions of one env share (EPContext weight-sharing workspaces). A Session refers to its Env,
// which must outlive it: the C API's session handles share ownership of the Env (host/app_api), so an
// application may release its env before its sessions.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "discovery/plugin_registry.h"
#include "epcontext/share_workspace.h"
#include "ephost/ephost_types.h"

namespace ephost {

// What an env is created with besides its plugin directories: the environment's settings, overridden
// by env options (ephost_env_options_keys.h).
struct EnvConfig {
  ScanSettings scan = scan_settings_from_environment();
  // A plugin call running longer than this is logged (core/plugin_fault.h); 0 disables.
  std::chrono::milliseconds plugin_call_warning{10000};
};

// Environment variable for EnvConfig::plugin_call_warning.
inline constexpr const char* kPluginCallWarningEnv = "EPHOST_PLUGIN_CALL_WARNING_MS";

// The environment's settings with `options` (key, value) applied in order. Throws INVALID_ARGUMENT
// for an unknown key (naming the known ones) or an invalid value.
EnvConfig make_env_config(const std::vector<std::pair<std::string, std::string>>& options);

class Env {
 public:
  // dirs == nullptr: EPHOST_PLUGIN_PATH then the default directory; otherwise exactly `*dirs`.
  Env(EphostLogLevel level, const std::vector<std::string>* dirs, const EnvConfig& config = make_env_config({}));
  PluginRegistry& registry() { return registry_; }
  const PluginRegistry& registry() const { return registry_; }
  // Weight-sharing workspaces of EPContext generation and loading (ep.share_ep_contexts).
  ContextShareRegistry& context_share() { return context_share_; }
  ~Env();

 private:
  PluginRegistry registry_;
  ContextShareRegistry context_share_;
};

}  // namespace ephost
