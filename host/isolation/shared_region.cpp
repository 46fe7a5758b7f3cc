#include "isolation/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "core/error.h"

namespace ephost::isolation {
namespace {

constexpr size_t kPage = 4096;

// Every live region of this process, by its mapping's address (for find_shared_region) and by id.
struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, std::weak_ptr<SharedRegion>> by_base;
  std::unordered_set<uint64_t> ids;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: regions may outlive static destruction
  return *r;
}

std::atomic<uint64_t> next_region_id{1};

}  // namespace

std::shared_ptr<SharedRegion> SharedRegion::create(size_t bytes) {
  const size_t size = bytes == 0 ? kPage : (bytes + kPage - 1) / kPage * kPage;
  if (size < bytes) fail(EPHOST_INVALID_ARGUMENT, "shared tensor memory of {} bytes is too large", bytes);
  std::shared_ptr<SharedRegion> region(new SharedRegion);
  region->fd_ = ::memfd_create("ephost-shared-tensor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (region->fd_ < 0) fail(EPHOST_FAIL, "cannot create shared tensor memory: memfd_create: {}", std::strerror(errno));
  if (::ftruncate(region->fd_, static_cast<off_t>(size)) != 0)
    fail(EPHOST_FAIL, "cannot make shared tensor memory of {} bytes: {}", size, std::strerror(errno));
  // Fixed at its size: a provider host can neither shrink it under this process's mapping (a read past
  // the end would be SIGBUS) nor grow it.
  if (::fcntl(region->fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    fail(EPHOST_FAIL, "cannot seal shared tensor memory: {}", std::strerror(errno));
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, region->fd_, 0);
  if (p == MAP_FAILED) fail(EPHOST_FAIL, "cannot map {} bytes of shared tensor memory: {}", size, std::strerror(errno));
  region->base_ = static_cast<char*>(p);
  region->size_ = size;
  region->id_ = next_region_id.fetch_add(1);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_base[reinterpret_cast<uintptr_t>(region->base_)] = region;
  r.ids.insert(region->id_);
  return region;
}

SharedRegion::~SharedRegion() {
  if (base_) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.by_base.erase(reinterpret_cast<uintptr_t>(base_));
    r.ids.erase(id_);
  }
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

bool SharedRegion::alive(uint64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.ids.count(id) != 0;
}

std::optional<RegionSpan> find_shared_region(const void* data, size_t bytes) {
  if (!data || bytes == 0) return std::nullopt;
  const auto at = reinterpret_cast<uintptr_t>(data);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_base.upper_bound(at);
  if (it == r.by_base.begin()) return std::nullopt;
  --it;
  std::shared_ptr<SharedRegion> region = it->second.lock();
  if (!region || at >= it->first + region->size()) return std::nullopt;
  const uint64_t offset = at - it->first;
  if (bytes > region->size() - offset)
    fail(EPHOST_INVALID_ARGUMENT, "a buffer of {} bytes starts {} bytes into a shared tensor's memory of {} bytes "
         "and runs past its end: a tensor over shared memory must lie within the shared tensor it was taken from",
         bytes, offset, region->size());
  return RegionSpan{std::move(region), offset};
}

ServedRegions::~ServedRegions() {
  for (const auto& [id, m] : mappings_) ::munmap(m.base, m.size);
}

void ServedRegions::attach(uint64_t id, int fd, uint64_t size) {
  struct stat st {};
  const bool fits = ::fstat(fd, &st) == 0 && st.st_size >= 0 && static_cast<uint64_t>(st.st_size) >= size && size > 0;
  void* p = fits ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (p == MAP_FAILED)
    fail(EPHOST_EP_FAIL, "provider host: cannot map shared tensor memory {} of {} bytes", id, size);
  detach(id);
  mappings_[id] = Mapping{static_cast<char*>(p), size};
}

void ServedRegions::detach(uint64_t id) {
  auto it = mappings_.find(id);
  if (it == mappings_.end()) return;
  ::munmap(it->second.base, it->second.size);
  mappings_.erase(it);
}

char* ServedRegions::span(uint64_t id, uint64_t offset, uint64_t bytes) const {
  auto it = mappings_.find(id);
  if (it == mappings_.end()) fail(EPHOST_EP_FAIL, "provider host: shared tensor memory {} was never passed", id);
  const Mapping& m = it->second;
  if (offset > m.size || bytes > m.size - offset)
    fail(EPHOST_EP_FAIL, "provider host: {} bytes at offset {} lie outside shared tensor memory {} ({} bytes)", bytes,
         offset, id, m.size);
  return m.base + offset;
}

}  // namespace ephost::isolation
