// The env: logging level and the plugin registry (discovery runs once, when the env is created).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "discovery/plugin_registry.h"
#include "ephost/ephost_types.h"

namespace ephost {

class Env {
 public:
  // dirs == nullptr: EPHOST_PLUGIN_PATH then the default directory; otherwise exactly `*dirs`.
  Env(EphostLogLevel level, const std::vector<std::string>* dirs);
  PluginRegistry& registry() { return registry_; }
  const PluginRegistry& registry() const { return registry_; }

 private:
  PluginRegistry registry_;
};

}  // namespace ephost
