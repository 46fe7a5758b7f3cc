#include "session/context_rebuild.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <chrono>
#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "ephost/ephost_session_options_keys.h"
#include "session/session.h"

namespace ephost {
namespace {

namespace fs = boost::filesystem;

// An exclusive, non-blocking flock on `path`, released with the object (or by the kernel when the
// process dies, so a killed rebuild never blocks the next one).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      fd_ = -1;
      busy_ = true;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool held() const { return fd_ >= 0; }
  bool busy() const { return busy_; }

 private:
  int fd_ = -1;
  bool busy_ = false;
};

// Renames every file of `staging` into `into`: binaries and data files first, the ctx model (`ctx`)
// last, so that the ctx model never names a file that is not there yet.
std::vector<std::string> publish(const fs::path& staging, const fs::path& into, const std::string& ctx) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(staging))
    if (fs::is_regular_file(entry.path())) files.push_back(entry.path());
  std::stable_partition(files.begin(), files.end(), [&](const fs::path& p) { return p.filename() != ctx; });
  std::vector<std::string> written;
  for (const fs::path& f : files) {
    const fs::path target = into / f.filename();
    fs::rename(f, target);
    written.push_back(target.string());
  }
  // The renames are durable once the folder is.
  const int dir = ::open(into.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return written;
}

}  // namespace

ContextRebuild::ContextRebuild(Env& env, SessionOptions options, std::string ctx_path, std::string source_path,
                               bool embed) {
  status_.state = "running";
  status_.ctx_path = std::move(ctx_path);
  thread_ = std::thread([this, &env, options = std::move(options), source_path = std::move(source_path), embed] {
    run(env, options, source_path, embed);
  });
}

ContextRebuild::~ContextRebuild() {
  cancelled_ = true;
  if (thread_.joinable()) thread_.join();
}

ContextRebuild::Status ContextRebuild::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

void ContextRebuild::wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return status_.state != "running"; });
}

void ContextRebuild::finish(std::string state, std::string reason, std::vector<std::string> files) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_.state = std::move(state);
  status_.reason = std::move(reason);
  status_.files = std::move(files);
  done_.notify_all();
}

void ContextRebuild::run(Env& env, SessionOptions options, std::string source_path, bool embed) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path ctx = fs::absolute(status_.ctx_path);
  const fs::path dir = ctx.parent_path();
  const std::string name = ctx.filename().string();
  const fs::path staging = dir / ("." + name + ".rebuild");
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  try {
    FileLock lock((dir / ("." + name + ".rebuild.lock")).string());
    if (!lock.held()) {
      finish("skipped", lock.busy() ? "another process is rebuilding this cache" : "cannot create the lock file");
      return;
    }
    // With the lock held nobody else is rebuilding: a folder left here is a killed rebuild's.
    fs::remove_all(staging);
    fs::create_directories(staging);
    if (cancelled_) {
      fs::remove_all(staging);
      finish("cancelled");
      return;
    }
    log_info(fmt::format("EPContext cache '{}': rebuilding from '{}' in the background", ctx.string(), source_path));
    options.set(kEphostSessionOptionsEpContextEnable, "1");
    options.set(kEphostSessionOptionsEpContextFilePath, (staging / name).string());
    options.set(kEphostSessionOptionsEpContextEmbedMode, embed ? "1" : "0");
    options.set(kEphostSessionOptionsEpContextOverwrite, "1");
    // The compile session writes the new ctx model and binaries into the staging folder.
    Session::create_from_file(env, source_path, options).reset();
    if (cancelled_) {
      fs::remove_all(staging);
      finish("cancelled");
      return;
    }
    std::vector<std::string> files = publish(staging, dir, name);
    fs::remove_all(staging);
    {
      std::lock_guard<std::mutex> guard(mutex_);
      status_.seconds = seconds();
    }
    log_info(fmt::format("EPContext cache '{}' rebuilt in {:.2f} s: the next session loads it", ctx.string(),
                         seconds()));
    finish("written", {}, std::move(files));
  } catch (const std::exception& e) {
    boost::system::error_code ec;
    fs::remove_all(staging, ec);
    log_warning(fmt::format("EPContext cache '{}': rebuild failed: {}", ctx.string(), e.what()));
    finish("failed", e.what());
  }
}

}  // namespace ephost
