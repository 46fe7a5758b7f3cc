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
constexpr auto kUnitRedraw = std::chrono::milliseconds(100);
constexpr auto kPlainLineEvery = std::chrono::seconds(10);
constexpr int kBarWidth = 24;

std::string seconds_string(double s) {
  return s < 60 ? fmt::format("{:.0f} s", s) : fmt::format("{} min {:02d} s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

}  // namespace

bool stderr_is_terminal() { return EPHOST_ISATTY(EPHOST_FILENO(stderr)) != 0; }

std::string elapsed_string(Clock::duration elapsed) {
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
  return ms < 1000.0 ? fmt::format("{:.1f} ms", ms) : fmt::format("{:.2f} s", ms / 1000.0);
}

CompileProgress::CompileProgress(std::string label, bool at_once, ProgressMode mode)
    : label_(std::move(label)),
      at_once_(at_once),
      mode_(mode),
      terminal_(stderr_is_terminal()),
      start_(Clock::now()),
      units_start_(start_) {
  if (mode_ != ProgressMode::kNever) thread_ = std::thread([this] { loop(); });
}

CompileProgress::~CompileProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CompileProgress::attach(Ephost::SessionOptions& options) {
  if (mode_ != ProgressMode::kNever) options.set_progress_callback(&CompileProgress::on_progress, this);
}

std::string CompileProgress::line_locked(bool finished) const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (units_total_ == 0) return fmt::format("{} ({})", label_, seconds_string(elapsed));
  const size_t done = units_done_, total = units_total_;
  std::string text = label_;
  if (terminal_) {
    const int filled = static_cast<int>(kBarWidth * done / total);
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kBarWidth) bar += '>' + std::string(static_cast<size_t>(kBarWidth - filled - 1), ' ');
    text += " [" + bar + "]";
  }
  text += fmt::format(" {}/{} groups ({}%), {}", done, total, 100 * done / total, seconds_string(elapsed));
  if (finished) return text + ", done";
  // The time left at the pace so far: each unit costs what the average one did.
  const double unit_time = std::chrono::duration<double>(Clock::now() - units_start_).count();
  if (done > 0 && done < total)
    text += ", about " + seconds_string(unit_time / static_cast<double>(done) * static_cast<double>(total - done)) + " left";
  return text;
}

void CompileProgress::print_locked(bool finished) {
  const std::string text = line_locked(finished);
  if (terminal_) {
    // Carriage return and "erase to end of line": the line is redrawn in place.
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  last_draw_ = Clock::now();
  std::fflush(stderr);
}

void CompileProgress::on_progress(const char*, size_t done, size_t total, void* self) {
  auto* p = static_cast<CompileProgress*>(self);
  std::lock_guard<std::mutex> lock(p->mutex_);
  if (done == 0) p->units_start_ = Clock::now();  // the stage begins
  p->units_done_ = done;
  p->units_total_ = total;
  if (total == 0) return;
  const bool visible = p->drawn_ || (p->terminal_ && p->at_once_) || Clock::now() - p->start_ >= kFirstReport;
  if (p->terminal_) {
    if (visible && Clock::now() - p->last_draw_ >= kUnitRedraw) p->print_locked(false);
  } else if (p->mode_ == ProgressMode::kAlways) {
    const size_t tenth = 10 * done / total;
    if (tenth != p->last_tenth_) {
      p->last_tenth_ = tenth;
      p->print_locked(done == total);
    }
  }
}

void CompileProgress::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point next = start_ + (terminal_ && at_once_ ? Clock::duration::zero() : kFirstReport);
  while (!wake_.wait_until(lock, next, [this] { return done_; })) {
    print_locked(false);
    next += terminal_ ? kRedraw : kPlainLineEvery;
  }
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace ephost_cli
