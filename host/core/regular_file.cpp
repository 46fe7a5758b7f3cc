#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace ephost {

const char* file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

RegularFile::RegularFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) fail(EPHOST_NO_SUCHFILE, "{} '{}' does not exist", what, path);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail(EPHOST_INVALID_ARGUMENT, "{} '{}' is {}, not a regular file", what, path, file_type_name(st.st_mode));
    fail(EPHOST_FAIL, "cannot open {} '{}': {}", what, path, std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fail(EPHOST_FAIL, "cannot read {} '{}': {}", what, path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(EPHOST_INVALID_ARGUMENT, "{} '{}' is {}, not a regular file", what, path, file_type_name(st.st_mode));
  }
  // Regular files never block; reads are plain blocking reads again.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, void* out, size_t size) const {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(EPHOST_FAIL, "cannot read {} '{}': {}", what_, path_, std::strerror(errno));
    if (got == 0) fail(EPHOST_FAIL, "{} '{}' ended early (at byte {})", what_, path_, offset);
    p += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<size_t>(got);
  }
}

std::string RegularFile::read_all() const {
  std::string bytes;
  bytes.resize(static_cast<size_t>(size_));
  if (size_ > 0) read_at(0, &bytes[0], bytes.size());
  return bytes;
}

}  // namespace ephost
