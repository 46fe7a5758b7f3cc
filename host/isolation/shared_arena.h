// The shared memory of one provider host process: a memfd both processes map, holding the tensors of
// the compute call in flight (inputs written by the host, outputs allocated in it by the plugin, so a
// kernel writes its outputs straight into memory the host reads). Calls are serialized per process, so
// the arena holds one call's tensors at a time. It grows as a call needs: the side that grows it
// (ftruncate) says the new size in its message, and the other side maps again before reading.
#pragma once

#include <cstddef>

namespace ephost::isolation {

class SharedArena {
 public:
  // A new memfd of `size` bytes (the host's side). Throws EP_FAIL when the system refuses.
  static SharedArena create(size_t size);
  // Maps the memfd `fd` the host passed (the provider host's side); takes ownership of `fd`.
  static SharedArena adopt(int fd, size_t size);

  SharedArena() = default;
  ~SharedArena();
  SharedArena(SharedArena&& other) noexcept;
  SharedArena& operator=(SharedArena&& other) noexcept;

  int fd() const { return fd_; }
  size_t size() const { return size_; }
  char* base() const { return base_; }

  // Grows the memfd to at least `bytes` (rounded up) and maps it again. Throws EP_FAIL when refused.
  void reserve(size_t bytes);
  // Maps again when the other side grew the memfd to `size`. Throws EP_FAIL when the memfd is smaller
  // than `size` (the memfd the host made is sealed against shrinking, so a checked size stays mapped).
  void follow(size_t size);

  // Offsets are aligned for any element type and for vector loads.
  static size_t align(size_t offset) { return (offset + 63) & ~size_t{63}; }

 private:
  void map(size_t size);
  int fd_ = -1;
  char* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ephost::isolation
