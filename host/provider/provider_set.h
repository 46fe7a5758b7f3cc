// A session's providers as one set: the providers in the order they take nodes (registration
// priority, earlier first) and their names, with the two ways stages hand them on: to the
// partitioner as a claims query (each provider's get_capability, through the door) and to the
// compiler as plain pointers. How the set was chosen is provider_selection/'s job
// (provider_setup.h's SessionProviders adds the selection report to it).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "provider/provider.h"

namespace ephost {

struct ProviderSet {
  std::vector<std::unique_ptr<Provider>> instances;  // registration priority, earlier first
  std::vector<std::string> names;                    // same order

  // The providers, same order, owned by `instances` (valid while the set lives).
  std::vector<Provider*> pointers() const;
};

// Provider i's claims on a graph view, through its get_capability (Provider::claims). The result is
// partition/partition.h's CapabilityQuery (the same std::function type); it refers to `providers`,
// which must outlive it.
std::function<std::vector<EphostCapability::Claim>(size_t provider, const GraphView& view)> capability_query(
    const ProviderSet& providers);

}  // namespace ephost
