// The providers of one session: which plugins, in which registration-priority order, with which
// options (session stage "create providers"), and how the partitioner asks them for their claims.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "discovery/plugin_registry.h"
#include "partition/partition.h"
#include "provider/provider_instance.h"
#include "session/session_config.h"

namespace ephost {

struct SessionProviders {
  std::vector<std::unique_ptr<ProviderInstance>> instances;  // registration priority, earlier first
  std::vector<std::string> names;                            // same order
  bool cpu_fallback = true;                                  // the CPU plugin was appended last

  std::vector<ProviderInstance*> pointers() const;
};

// The user's list (config.providers), else every loaded plugin by default priority; then the CPU
// plugin unless session.disable_cpu_ep_fallback=1. Each provider gets its ep.<name>.<key> options and
// intra_op_num_threads. Throws INVALID_ARGUMENT for a provider listed twice or not available (naming
// the loaded ones, and why a plugin of that name was skipped). Warns about ep.<name>.<key> options
// naming a provider no plugin offers.
SessionProviders create_providers(const PluginRegistry& registry, const SessionConfig& config);

// Provider i's claims on a graph view, through its get_capability.
CapabilityQuery capability_query(const SessionProviders& providers);

}  // namespace ephost
