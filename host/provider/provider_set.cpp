#include "provider/provider_set.h"

namespace ephost {

std::vector<Provider*> ProviderSet::pointers() const {
  std::vector<Provider*> out;
  out.reserve(instances.size());
  for (const auto& p : instances) out.push_back(p.get());
  return out;
}

std::function<std::vector<EphostCapability::Claim>(size_t provider, const GraphView& view)> capability_query(
    const ProviderSet& providers) {
  return [&providers](size_t i, const GraphView& view) { return providers.instances[i]->claims(view); };
}

}  // namespace ephost
