// Opening files whose path comes from outside (a model, its external data, a context binary) only when
// they are regular files. The type is checked on the opened descriptor, and the open itself does not
// block (O_NONBLOCK): a FIFO named as a model can never hang the host in open(), and /dev/zero is
// refused as a character device instead of being read forever or reported as empty.
#pragma once

#include <cstdint>
#include <string>

namespace ephost {

// An open regular file, closed on destruction.
class RegularFile {
 public:
  // Opens `path` for reading. Throws NO_SUCHFILE when it does not exist, INVALID_ARGUMENT naming its
  // type when it is not a regular file ("a directory", "a FIFO", "a character device", ...), FAIL
  // when it cannot be opened. `what` names it in errors ("model file", "external data file").
  RegularFile(const std::string& path, const std::string& what);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Reads `size` bytes at `offset` into `out`; throws FAIL when the file is shorter or unreadable.
  void read_at(uint64_t offset, void* out, size_t size) const;
  // The whole file.
  std::string read_all() const;

 private:
  std::string path_, what_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// "a directory", "a FIFO", "a character device", "a block device", "a socket", "a symbolic link",
// "a regular file" for a stat st_mode.
const char* file_type_name(unsigned mode);

}  // namespace ephost
