#include "isolation/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace ephost::isolation {

SharedArena SharedArena::create(size_t size) {
  const int fd = ::memfd_create("ephost-provider-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) fail(EPHOST_EP_FAIL, "isolated provider: memfd_create failed: {}", std::strerror(errno));
  SharedArena arena;
  arena.fd_ = fd;
  arena.reserve(size);
  // The provider host may grow the memfd, never shrink it: a mapping past its end would fault (SIGBUS)
  // in the host. No further seal can be added either (one that stopped growth would fail calls, not
  // crash, but nothing needs it).
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    fail(EPHOST_EP_FAIL, "isolated provider: cannot seal the shared tensor memory against shrinking: {}",
         std::strerror(errno));
  return arena;
}

SharedArena SharedArena::adopt(int fd, size_t size) {
  SharedArena arena;
  arena.fd_ = fd;
  arena.map(size);
  return arena;
}

SharedArena::~SharedArena() {
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

SharedArena::SharedArena(SharedArena&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedArena& SharedArena::operator=(SharedArena&& other) noexcept {
  if (this != &other) {
    this->~SharedArena();
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void SharedArena::reserve(size_t bytes) {
  if (bytes <= size_ && base_) return;
  size_t size = size_t{1} << 20;
  while (size < bytes) size *= 2;
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    fail(EPHOST_EP_FAIL, "isolated provider: cannot grow the shared tensor memory to {} bytes: {}", size,
         std::strerror(errno));
  map(size);
}

void SharedArena::follow(size_t size) {
  if (size == size_) return;
  // The size comes from the other process: mapping past the memfd's end would make a later read fault.
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size < 0 || static_cast<uint64_t>(st.st_size) < size)
    fail(EPHOST_EP_FAIL, "isolated provider: the other side says the shared tensor memory has {} bytes, but it has "
         "{} (a confused or hostile provider host)", size, static_cast<long long>(st.st_size));
  map(size);
}

void SharedArena::map(size_t size) {
  if (base_) ::munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
  if (size == 0) return;
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED)
    fail(EPHOST_EP_FAIL, "isolated provider: cannot map {} bytes of shared tensor memory: {}", size, std::strerror(errno));
  base_ = static_cast<char*>(p);
  size_ = size;
}

}  // namespace ephost::isolation
