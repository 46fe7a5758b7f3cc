// Shows that a long step is under way: "[2/3] model.onnx ... compiling (3 s)" on stderr while
// libephost compiles (session creation gives no progress of its own).
//
// On a terminal a background thread redraws one line twice a second, from the start when `at_once`
// (several models: the user sees which one is running) or once the step has taken a second, and
// erases it when the step ends. Elsewhere (a log file, a pipe, CI) it prints plain lines, the first
// after a second and then every 10 seconds, so a log shows that work goes on without a line per tick.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ephost_cli {

class CompileProgress {
 public:
  CompileProgress(std::string label, bool at_once);
  ~CompileProgress();  // stops the thread and erases the line
  CompileProgress(const CompileProgress&) = delete;
  CompileProgress& operator=(const CompileProgress&) = delete;

 private:
  void loop();

  const std::string label_;
  const bool at_once_;
  const bool terminal_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Whether stderr is a terminal (progress can redraw one line there).
bool stderr_is_terminal();

// How long a step took, for the line after it: "8.4 ms", "12.35 s".
std::string elapsed_string(std::chrono::steady_clock::duration elapsed);

}  // namespace ephost_cli
