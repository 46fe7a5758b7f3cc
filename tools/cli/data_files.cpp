#include "data_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

namespace fs = std::filesystem;

namespace {

const char* file_type(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

class Fd {
 public:
  Fd(const std::string& path, const std::string& what) : path_(path), what_(what) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        throw Ephost::Exception(EPHOST_NO_SUCHFILE, what + " " + path + " does not exist");
      throw Ephost::Exception(EPHOST_FAIL, "cannot open " + what + " " + path + ": " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      const std::string type = file_type(st.st_mode);
      ::close(fd_);
      throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, what + " " + path + " is " + type + ", not a regular file");
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    size_ = static_cast<int64_t>(st.st_size);
  }
  ~Fd() { ::close(fd_); }
  int64_t size() const { return size_; }
  std::string read(int64_t offset, int64_t length) const {
    std::string bytes(static_cast<size_t>(length), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t got = ::pread(fd_, &bytes[done], bytes.size() - done, static_cast<off_t>(offset) + static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw Ephost::Exception(EPHOST_FAIL, "cannot read " + what_ + " " + path_);
      done += static_cast<size_t>(got);
    }
    return bytes;
  }

 private:
  std::string path_, what_;
  int fd_ = -1;
  int64_t size_ = 0;
};

std::vector<std::string> parts_of(const fs::path& p) {
  std::vector<std::string> parts;
  for (const auto& part : p)
    if (!part.empty() && part != ".") parts.push_back(part.string());
  return parts;
}

[[noreturn]] void refuse(const std::string& what, const std::string& location, const std::string& why) {
  throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, what + " '" + location + "' " + why);
}

}  // namespace

std::string read_regular_file(const std::string& path, const std::string& what) {
  Fd f(path, what);
  return f.read(0, f.size());
}

std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length, const std::string& what) {
  Fd f(path, what);
  if (offset < 0 || offset > f.size() || (length >= 0 && length > f.size() - offset))
    throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, what + " " + path + " (" + std::to_string(f.size()) +
                                                         " bytes) is too short for offset " + std::to_string(offset) +
                                                         " and length " + std::to_string(length));
  return f.read(offset, length < 0 ? f.size() - offset : length);
}

std::string confined_data_path(const std::string& base_dir, const std::string& location, const std::string& what) {
  if (location.empty()) refuse(what, location, "is empty");
  if (location.find('\0') != std::string::npos) refuse(what, location, "contains a NUL byte");
  std::string generic = location;
  std::replace(generic.begin(), generic.end(), '\\', '/');
  const fs::path loc(generic);
  if (loc.is_absolute() || loc.has_root_directory() || (generic.size() > 1 && generic[1] == ':'))
    refuse(what, location, "is an absolute path; it must be relative to the folder of the file that names it");
  for (const auto& part : loc)
    if (part == "..") refuse(what, location, "leaves the folder of the file that names it ('..' is not allowed)");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(base_dir.empty() ? fs::path(".") : fs::path(base_dir)), ec);
  const fs::path full = ec ? fs::path() : fs::weakly_canonical(base / loc, ec);
  if (ec) refuse(what, location, "cannot be resolved: " + ec.message());
  const std::vector<std::string> b = parts_of(base), p = parts_of(full);
  if (p.size() <= b.size() || !std::equal(b.begin(), b.end(), p.begin()))
    refuse(what, location, "resolves to " + full.string() + ", outside " + base.string());
  return full.string();
}

}  // namespace ephost_cli
