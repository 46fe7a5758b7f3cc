#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/regular_file.h"

namespace ephost {
namespace fs = boost::filesystem;

void write_file_atomically(const std::string& path, const void* data, size_t size, bool overwrite) {
  boost::system::error_code ec;
  const fs::path target(path);
  if (!overwrite && fs::exists(target, ec))
    fail(EPHOST_FAIL, "'{}' exists already; remove it (or allow overwriting) to write it again", path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) fail(EPHOST_FAIL, "cannot create folder '{}': {}", target.parent_path().string(), ec.message());
  }
  std::string tmpl = (target.has_parent_path() ? target.parent_path() / ("." + target.filename().string())
                                               : fs::path("." + target.filename().string()))
                         .string() +
                     ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) fail(EPHOST_FAIL, "cannot create a temporary file beside '{}': {}", path, std::strerror(errno));
  const std::string tmp(name.data());
  auto give_up = [&](const char* step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(EPHOST_FAIL, "cannot write '{}' ({}): {}", path, step, std::strerror(err));
  };
  const char* p = static_cast<const char*>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) give_up("chmod");
  if (::fsync(fd) != 0) give_up("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(EPHOST_FAIL, "cannot write '{}' (close): {}", path, std::strerror(err));
  }
  if (!overwrite && fs::exists(target, ec)) {
    ::unlink(tmp.c_str());
    fail(EPHOST_FAIL, "'{}' exists already; remove it (or allow overwriting) to write it again", path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(EPHOST_FAIL, "cannot write '{}' (rename): {}", path, std::strerror(err));
  }
}

std::string read_whole_file(const std::string& path, const std::string& what) {
  return RegularFile(path, what).read_all();
}

}  // namespace ephost
