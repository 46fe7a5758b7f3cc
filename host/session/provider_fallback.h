// The fallback of an isolated provider whose values live in its device's memory (isolation/
// isolated_device.h). A host-memory provider that fails too often falls back unit by unit: the CPU
// plugin runs each of its units in place (isolation/fallback_group.h). A device provider cannot: the
// plan put the run's values and the constant initializers on its device, in a process that is gone, and
// the copies between host and device are planned around it. So the session plans again without it: its
// nodes go to the providers after it, ending with the CPU plugin, and placement, copies and memory are
// planned anew (the session's own stages, session_stages.h), then the new plan is swapped in
// (session_plan.h). Runs in flight on the old plan fail with EP_FAIL (their provider fell back); the runs
// that start once the fallback is known wait for the new plan and run on it. The old plan, and with it
// the device buffers it held, goes when its last run returns.
//
// A host-memory provider that loaded an EPContext node is planned again likewise: the node's context is
// the plugin's own, so its partition runs from the source model's nodes instead
// (session/context_source_fallback.h), which a new plan places.
//
// This class notices the fallback through each such provider's state callback (the application's own
// callback, when it set one, is still called) and decides when to plan again: at the start of the next
// run, once per fallback. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "isolation/isolated_provider.h"
#include "provider/provider_set.h"

namespace ephost {

class ProviderFallback {
 public:
  // Sets the state callback of every isolated provider of `providers`: `application` (may be empty),
  // and for a device provider, a note of its fallback first.
  void watch(const ProviderSet& providers, const IsolatedProvider::HealthCallback& application);

  // Also plans again when `provider` (an isolated provider of the set watched, in host memory) falls back:
  // it loaded an EPContext node. Call before its first run.
  void plan_again_for(const IsolatedProvider* provider);

  // Whether a device provider fell back since the plan was last made (an atomic read: every run asks).
  bool pending() const { return seen_.load(std::memory_order_acquire) != handled_.load(std::memory_order_acquire); }

  // When pending: calls `replan` with the providers to leave out (by index, each with why; "" for the
  // others), once for every fallback noticed so far, while other callers wait. A `replan` that throws
  // leaves the fallback pending: the next run tries again.
  void plan_again_if_pending(const ProviderSet& providers,
                             const std::function<void(const std::vector<std::string>& left_out)>& replan);

  // The providers left out so far, by index, each with why ("" for the others).
  std::vector<std::string> fallen_providers(const ProviderSet& providers) const;

 private:
  std::atomic<uint64_t> seen_{0};     // fallbacks noticed
  std::atomic<uint64_t> handled_{0};  // fallbacks the current plan takes into account
  std::mutex mutex_;                  // one replan at a time
  // Whether a provider that fell back is planned again without: a device provider, or one of these.
  bool plans_again_for(const IsolatedProvider& provider) const;
  mutable std::mutex also_mutex_;
  std::set<const IsolatedProvider*> also_;  // plan_again_for
};

}  // namespace ephost
