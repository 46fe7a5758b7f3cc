// Shared memory for values that stay in it after a provider host wrote them (isolated_provider.h: an
// isolated provider's outputs; isolated_device.h: outputs copied from an isolated device): regions handed
// out to hold one value each and taken back for the next once nothing but the pool holds them any more
// (the value's last holder let it go), so that steady runs map no new memory. A few regions at most: an
// application that keeps more values than that gets null (the caller copies through the arena instead).
// Not synchronized: the caller holds its own lock.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "isolation/shared_region.h"

namespace ephost::isolation {

class SharedRegionPool {
 public:
  explicit SharedRegionPool(size_t max_regions) : max_regions_(max_regions) {}

  // A region of `bytes` to `2 * bytes` that only the pool holds, or a new one of `bytes` while the pool
  // holds fewer than its maximum (free regions of another size are let go first); null when every
  // region still holds a value. Throws FAIL when the system refuses the memory.
  std::shared_ptr<SharedRegion> take(size_t bytes);

 private:
  size_t max_regions_;
  std::vector<std::shared_ptr<SharedRegion>> regions_;
};

}  // namespace ephost::isolation
