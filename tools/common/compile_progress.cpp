#include "compile_progress.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

#ifdef _WIN32
#include <io.h>
#define EPHOST_ISATTY _isatty
#define EPHOST_FILENO _fileno
#else
#include <unistd.h>
#define EPHOST_ISATTY isatty
#define EPHOST_FILENO fileno
#endif

namespace ephost_cli {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kFirstReport = std::chrono::seconds(1);
constexpr auto kRedraw = std::chrono::milliseconds(500);
constexpr auto kPlainLineEvery = std::chrono::seconds(10);

}  // namespace

bool stderr_is_terminal() { return EPHOST_ISATTY(EPHOST_FILENO(stderr)) != 0; }

std::string elapsed_string(Clock::duration elapsed) {
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
  return ms < 1000.0 ? fmt::format("{:.1f} ms", ms) : fmt::format("{:.2f} s", ms / 1000.0);
}

CompileProgress::CompileProgress(std::string label, bool at_once)
    : label_(std::move(label)), at_once_(at_once), terminal_(stderr_is_terminal()), start_(Clock::now()) {
  thread_ = std::thread([this] { loop(); });
}

CompileProgress::~CompileProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CompileProgress::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point next = start_ + (terminal_ && at_once_ ? Clock::duration::zero() : kFirstReport);
  bool drawn = false;
  while (!wake_.wait_until(lock, next, [this] { return done_; })) {
    const long seconds = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count());
    const std::string text = label_ + " (" + std::to_string(seconds) + " s)";
    if (terminal_) {
      // Carriage return and "erase to end of line": the line is redrawn in place.
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
      drawn = true;
      next += kRedraw;
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
      next += kPlainLineEvery;
    }
    std::fflush(stderr);
  }
  if (drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace ephost_cli
