// The providers of one session: which plugins, in which registration-priority order, with which
// options (session stage "create providers"), and why (the selection report). The set itself and how
// stages ask it for claims are provider/provider_set.h's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "discovery/plugin_registry.h"
#include "partition/partition.h"
#include "provider/provider.h"
#include "provider/provider_set.h"
#include "options/session_config.h"

namespace ephost {

// Why the providers are in their order (session.ep_selection_policy): one entry per provider the
// policy ranked, in the final order, for the partition report.
struct ProviderSelection {
  std::string policy;  // "" (by default priority), "prefer_gpu", ..., "max_coverage", or "listed"
  struct Candidate {
    std::string provider;  // "<name>" or "<name>:<device>"
    std::string device_type;
    int32_t priority = 0;
    int64_t claimed_nodes = -1;  // max_coverage: nodes the dry run claimed (-1 when not asked)
    size_t graph_nodes = 0;      // max_coverage: nodes of the main graph
    std::string reason;          // why it got its place, or why it was skipped
    bool skipped = false;        // its provider could not be created: left out of the session
  };
  std::vector<Candidate> candidates;
};

// The created providers (instances, names, pointers(), and capability_query() from provider_set.h),
// with how they were chosen.
struct SessionProviders : ProviderSet {
  bool cpu_fallback = true;  // the CPU plugin was appended last
  ProviderSelection selection;
};

// The user's list (config.providers, "<name>" or "<name>:<device>"), else every loaded plugin ordered
// by config.selection_policy (default priority when none); then the CPU plugin unless
// session.disable_cpu_ep_fallback=1. A plugin that drives devices gets a provider on the device the
// request names, else the one the policy prefers, else its device 0. Each provider gets its
// ep.<name>.<key> options and intra_op_num_threads. `main` (the session's IR, main graph, before
// EPContext fallback and function expansion edit it) is what max_coverage's dry run asks the
// candidates about. Throws INVALID_ARGUMENT for a provider listed
// twice or not available (naming the loaded ones, and why a plugin of that name was skipped) or a
// device the plugin does not have. Warns about ep.<name>.<key> options naming a provider no plugin
// offers. A provider the user listed (or the CPU plugin) that cannot be created fails the session with
// the plugin's error; one the policy chose (no providers listed) is skipped with a warning and the
// reason in `selection`, and the session goes on with the others.
SessionProviders create_providers(const PluginRegistry& registry, const SessionConfig& config, const Graph& main);

}  // namespace ephost
