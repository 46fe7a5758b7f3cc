// Shows that a session's compile is under way on stderr: "[2/3] model.onnx ... compiling
// [=========>          ] 12/40 groups, 3 s, about 5 s left". The units (fused groups and kernels,
// all partitions together) come from libephost's progress callback (SetSessionProgressCallback, API 3)
// once attach() has put it on the session options; the time left is the pace so far.
//
// On a terminal a background thread redraws one line twice a second (and on each unit, at most ten
// times a second), from the start when `at_once` (several models: the user sees which one is running)
// or once the step has taken a second, and erases it when the step ends. Elsewhere (a log file, a pipe,
// CI) it prints plain lines, the first after a second and then every 10 seconds, so a log shows that
// work goes on without a line per tick. ProgressMode::kAlways also prints, on a pipe, the start and a
// line per tenth of the units; kNever prints nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

enum class ProgressMode { kAuto, kAlways, kNever };

class CompileProgress {
 public:
  CompileProgress(std::string label, bool at_once, ProgressMode mode = ProgressMode::kAuto);
  ~CompileProgress();  // stops the thread and erases the line
  CompileProgress(const CompileProgress&) = delete;
  CompileProgress& operator=(const CompileProgress&) = delete;

  // Routes the session's progress callback to this object; the options must create their session
  // while this object lives.
  void attach(Ephost::SessionOptions& options);

 private:
  static void on_progress(const char* stage, size_t done, size_t total, void* self);
  void loop();
  std::string line_locked(bool finished) const;
  void print_locked(bool finished);

  const std::string label_;
  const bool at_once_;
  const ProgressMode mode_;
  const bool terminal_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  bool drawn_ = false;
  size_t units_done_ = 0, units_total_ = 0;
  size_t last_tenth_ = static_cast<size_t>(-1);
  std::chrono::steady_clock::time_point units_start_, last_draw_;
  std::thread thread_;
};

// Whether stderr is a terminal (progress can redraw one line there).
bool stderr_is_terminal();

// How long a step took, for the line after it: "8.4 ms", "12.35 s".
std::string elapsed_string(std::chrono::steady_clock::duration elapsed);

}  // namespace ephost_cli
