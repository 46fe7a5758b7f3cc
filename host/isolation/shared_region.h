// Shared tensor memory the application holds (ephost_c_api.h, CreateSharedTensor): one sealed memfd per
// tensor, mapped in this process for as long as any tensor, binding or run refers to it, and mapped by a
// provider host process the first time a request names it. An isolated provider then passes a region
// and an offset instead of copying the bytes through its process's arena (isolated_provider.h): a
// compute reads an input in place and writes an output bound to a shared tensor in place, and a copy
// between such a tensor and an isolated device goes straight between the region and the device.
//
// Lifetimes: the region belongs to this process. A provider host that dies takes only its own mapping
// with it; the application's tensors stay valid, and the next process maps the region again when a
// request names it. The memfd is sealed at its size (no shrink, no growth, no new seals), so nothing a
// provider host does can make a mapping here reach past the memfd's end. A region released here is
// unmapped in each provider host process that mapped it when that process next maps another region
// (kDetachRegion, sent ahead), or when the process ends.
//
// The provider host's side (ServedRegions) maps what the host passed, checking the size against the
// memfd, and hands out spans only within a mapped region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

namespace ephost::isolation {

// Outputs left in shared memory the host allocates for them (isolated_provider.h, isolated_device.h)
// are no smaller than this: below a page the copy through the arena costs less than a mapping and a
// descriptor of their own.
inline constexpr size_t kSharedOutputMinBytes = 4096;

class SharedRegion {
 public:
  // A new zero-filled region of at least `bytes` (whole pages), registered so that find_shared_region
  // finds pointers into it. Throws FAIL when the system refuses (memfd, seals, mapping).
  static std::shared_ptr<SharedRegion> create(size_t bytes);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  uint64_t id() const { return id_; }  // never reused in this process
  int fd() const { return fd_; }
  char* base() const { return base_; }
  size_t size() const { return size_; }
  // Whether region `id` is still alive (held by some tensor).
  static bool alive(uint64_t id);

 private:
  SharedRegion() = default;
  uint64_t id_ = 0;
  int fd_ = -1;
  char* base_ = nullptr;
  size_t size_ = 0;
};

// Where bytes [data, data + bytes) lie in a live shared region.
struct RegionSpan {
  std::shared_ptr<const SharedRegion> region;
  uint64_t offset = 0;
};

// The region holding all of [data, data + bytes), if any (bytes 0: never). Starting inside a region and
// running past its end is an INVALID_ARGUMENT error naming both sizes (a wrong size for shared memory).
std::optional<RegionSpan> find_shared_region(const void* data, size_t bytes);

// The provider host's mappings of the regions the host passed it, by region id.
class ServedRegions {
 public:
  ServedRegions() = default;
  ~ServedRegions();
  ServedRegions(const ServedRegions&) = delete;
  ServedRegions& operator=(const ServedRegions&) = delete;

  // Maps region `id` from `fd` (taken over), which must hold at least `size` bytes. Throws EP_FAIL.
  void attach(uint64_t id, int fd, uint64_t size);
  void detach(uint64_t id);
  // The bytes [offset, offset + bytes) of region `id`. Throws EP_FAIL for an unknown region or a span
  // that does not lie within it.
  char* span(uint64_t id, uint64_t offset, uint64_t bytes) const;

 private:
  struct Mapping {
    char* base = nullptr;
    uint64_t size = 0;
  };
  std::map<uint64_t, Mapping> mappings_;
};

}  // namespace ephost::isolation
