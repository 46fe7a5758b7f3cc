#include "session/provider_fallback.h"

#include <fmt/format.h>

namespace ephost {

void ProviderFallback::watch(const ProviderSet& providers, const IsolatedProvider::HealthCallback& application) {
  for (const auto& p : providers.instances) {
    auto* isolated = dynamic_cast<IsolatedProvider*>(p.get());
    if (!isolated) continue;
    // Called once with kFallenBack: a provider that fell back never changes state again.
    isolated->set_health_callback(
        [this, isolated, application](const std::string& provider, const IsolatedProviderHealth& h) {
          if (h.state == IsolatedProviderState::kFallenBack && plans_again_for(*isolated))
            seen_.fetch_add(1, std::memory_order_acq_rel);
          if (application) application(provider, h);
        });
  }
}

void ProviderFallback::plan_again_for(const IsolatedProvider* provider) {
  std::lock_guard<std::mutex> lock(also_mutex_);
  also_.insert(provider);
}

bool ProviderFallback::plans_again_for(const IsolatedProvider& provider) const {
  if (provider.values_on_device()) return true;
  std::lock_guard<std::mutex> lock(also_mutex_);
  return also_.count(&provider) > 0;
}

std::vector<std::string> ProviderFallback::fallen_providers(const ProviderSet& providers) const {
  std::vector<std::string> left_out(providers.instances.size());
  for (size_t i = 0; i < providers.instances.size(); ++i) {
    const auto* isolated = dynamic_cast<const IsolatedProvider*>(providers.instances[i].get());
    if (!isolated || !plans_again_for(*isolated)) continue;
    const IsolatedProviderHealth h = isolated->health();
    if (h.state != IsolatedProviderState::kFallenBack) continue;
    left_out[i] = fmt::format("provider '{}' fell back after {} failures of its provider host process: its nodes go "
                              "to the providers after it, with the placement planned again (last failure: {})",
                              providers.names[i], h.failures, h.last_failure);
  }
  return left_out;
}

void ProviderFallback::plan_again_if_pending(
    const ProviderSet& providers, const std::function<void(const std::vector<std::string>& left_out)>& replan) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Read before the providers' states: a fallback noticed after this is planned for by the next run.
  const uint64_t seen = seen_.load(std::memory_order_acquire);
  if (seen == handled_.load(std::memory_order_acquire)) return;  // planned while this caller waited
  replan(fallen_providers(providers));
  handled_.store(seen, std::memory_order_release);
}

}  // namespace ephost
