#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/regular_file.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

// Temporary files are named ".<file>.tmp-<pid>-XXXXXX" beside <file>: the writer's process id tells
// a stale one (its writer is gone: killed, crashed) from one another process is writing right now.
std::string temp_prefix(const fs::path& target) { return "." + target.filename().string() + ".tmp-"; }

bool process_is_gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// Removes the temporary files of `target` whose writer is gone. Files of the older naming without a
// process id (".<file>.tmp-XXXXXX") count as stale once they are ten minutes old.
void remove_stale_temporaries(const fs::path& target) {
  boost::system::error_code ec;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = temp_prefix(target);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0 || !fs::is_regular_file(it->path(), ec)) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>-XXXXXX" or "XXXXXX"
    const size_t dash = rest.find('-');
    bool stale = false;
    if (dash != std::string::npos && dash > 0 && dash <= 9 && rest.find_first_not_of("0123456789") == dash) {
      stale = process_is_gone(static_cast<pid_t>(std::stol(rest.substr(0, dash))));
    } else {
      const std::time_t written = fs::last_write_time(it->path(), ec);
      stale = !ec && std::time(nullptr) - written > 600;
    }
    if (stale) fs::remove(it->path(), ec);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const void* data, size_t size, bool overwrite) {
  boost::system::error_code ec;
  const fs::path target(path);
  if (!overwrite && fs::exists(target, ec))
    fail(EPHOST_FAIL, "'{}' exists already; remove it (or allow overwriting) to write it again", path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) fail(EPHOST_FAIL, "cannot create folder '{}': {}", target.parent_path().string(), ec.message());
  }
  // What an earlier writer of this file left when it was killed goes now.
  remove_stale_temporaries(target);
  const std::string prefix = temp_prefix(target) + std::to_string(::getpid()) + "-";
  std::string tmpl = (target.has_parent_path() ? target.parent_path() / prefix : fs::path(prefix)).string() + "XXXXXX";
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
