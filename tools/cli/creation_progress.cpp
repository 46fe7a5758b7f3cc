#include "creation_progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ephost_cli {

namespace {

using Clock = std::chrono::steady_clock;

// One session is created at a time by the CLI; the state lives as long as the process, which the
// callback contract (it must outlive the sessions created) asks for.
struct ProgressState {
  bool terminal = false;
  bool drawn = false;      // something is on the line (a newline is owed)
  size_t last_tenth = SIZE_MAX;  // pipes: the last tenth printed (none yet)
  Clock::time_point start;
  size_t last_done = 0;
};

ProgressState& state() {
  static ProgressState s;
  return s;
}

// Below this, a terminal shows nothing: a fast creation should not flicker a bar.
constexpr double kQuietSeconds = 0.3;

std::string format_seconds(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

void on_progress(const char* stage, size_t done, size_t total, void*) {
  ProgressState& st = state();
  if (done == 0 || done < st.last_done) {  // a stage begins (the host reports 0 of total first)
    st = ProgressState{st.terminal, false, SIZE_MAX, Clock::now(), 0};
  }
  st.last_done = done;
  if (total == 0) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - st.start).count();
  const bool finished = done >= total;
  // Time left from the pace so far: each unit costs what the average one did.
  const double left = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0;
  const std::string stage_name = stage ? stage : "compile";
  if (st.terminal) {
    if (!st.drawn && (elapsed < kQuietSeconds || finished)) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done / total);
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
    std::fprintf(stderr, "\r%s: %zu/%zu groups [%s] %3zu%%  %s %s\033[K", stage_name.c_str(), done, total,
                 bar.c_str(), 100 * done / total, finished ? "took" : "left",
                 format_seconds(finished ? elapsed : left).c_str());
    st.drawn = true;
    if (finished) {
      std::fputc('\n', stderr);
      st.drawn = false;
    }
  } else {
    const size_t tenth = 10 * done / total;
    if (tenth == st.last_tenth && !finished) return;
    st.last_tenth = tenth;
    std::fprintf(stderr, "%s: %zu/%zu groups (%zu%%), %s %s\n", stage_name.c_str(), done, total,
                 100 * done / total, finished ? "took" : "left", format_seconds(finished ? elapsed : left).c_str());
  }
  std::fflush(stderr);
}

}  // namespace

void attach_creation_progress(Ephost::SessionOptions& options, ProgressMode mode) {
  if (mode == ProgressMode::kNever) return;
  const bool terminal = isatty(STDERR_FILENO) != 0;
  if (mode == ProgressMode::kAuto && !terminal) return;
  state().terminal = terminal;
  options.set_progress_callback(&on_progress, nullptr);
}

}  // namespace ephost_cli
