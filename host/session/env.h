// The env: logging level, the plugin registry (discovery runs once, when the env is created), and
// what sessions of one env share (EPContext weight-sharing workspaces).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "discovery/plugin_registry.h"
#include "epcontext/share_workspace.h"
#include "ephost/ephost_types.h"

namespace ephost {

class Env {
 public:
  // dirs == nullptr: EPHOST_PLUGIN_PATH then the default directory; otherwise exactly `*dirs`.
  Env(EphostLogLevel level, const std::vector<std::string>* dirs);
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
