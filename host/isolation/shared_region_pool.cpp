#include "isolation/shared_region_pool.h"

#include <atomic>

namespace ephost::isolation {

std::shared_ptr<SharedRegion> SharedRegionPool::take(size_t bytes) {
  for (auto it = regions_.begin(); it != regions_.end();) {
    // Held elsewhere: a value still lies there. Holders only ever let go of a region taken from here
    // (nothing can hold it anew but through take), so one count seen here stays one.
    if (it->use_count() != 1) {
      ++it;
      continue;
    }
    // The last holder's reads of the region happen before the provider host writes it again.
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((*it)->size() >= bytes && (*it)->size() / 2 <= bytes) return *it;
    it = regions_.erase(it);  // the wrong size for the value now: made again at its size
  }
  if (regions_.size() >= max_regions_) return nullptr;
  regions_.push_back(SharedRegion::create(bytes));
  return regions_.back();
}

}  // namespace ephost::isolation
