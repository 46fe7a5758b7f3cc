// What stops a run early, and the one check every part of a run makes: the application's run options
// (terminate, set from any thread, and a timeout: application API 4's EphostRunOptions) and the
// deadline of a session's creation (session.compile_timeout_ms), under which constant folding runs
// kernels. The executor checks before each step and before each subgraph run (Loop and Scan
// iterations); plugins poll the same limits through kernel_run_check (plugin ABI 4) inside long
// kernels. A stopped run fails with EPHOST_CANCELLED or EPHOST_DEADLINE_EXCEEDED and leaves nothing
// behind: the session's next run is an ordinary one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ephost/ephost_types.h"

namespace ephost {

using RunClock = std::chrono::steady_clock;

// What the application controls of its runs (EphostRunOptions), shared by every run that uses it.
// `terminate` and `timeout_ms` may be set from any thread; `tag` only while no run uses it. Must
// outlive the runs that use it.
struct RunControl {
  std::atomic<bool> terminate{false};
  std::atomic<int64_t> timeout_ms{0};  // each run's deadline, from its start; 0: none
  std::string tag;                     // names the run in its errors ("" none)
};

// Why a run should stop: the status it fails with.
struct StopReason {
  EphostStatusCode code;  // EPHOST_CANCELLED or EPHOST_DEADLINE_EXCEEDED
  std::string message;
};

// The limits of one run, fixed when it starts: its RunControl (terminate, read at every check) and its
// deadline (read once, from the control's timeout or the session creation's deadline). Shared by every
// frame of the run (subgraphs included) and by the kernels it calls, from any thread.
class RunLimits {
 public:
  // No limits: check() never stops.
  RunLimits() = default;
  // A run starting now under `control` (null: no limits).
  explicit RunLimits(const RunControl* control);
  // Work done for a session's creation (constant folding) under the creation's deadline `deadline`,
  // which `timeout` set (session.compile_timeout_ms). `what` names the work in the error.
  static RunLimits creation(RunClock::time_point deadline, std::chrono::milliseconds timeout, std::string what);

  // Why the run should stop now, or nothing. Cheap: an atomic load, and for a run with a deadline a
  // read of the monotonic clock.
  std::optional<StopReason> stop_reason() const;
  // Throws the stop reason as an ephost::Error, if there is one.
  void check() const;
  bool limited() const { return control_ != nullptr || has_deadline_; }

 private:
  const RunControl* control_ = nullptr;
  bool has_deadline_ = false;
  bool creation_ = false;
  RunClock::time_point start_{};
  RunClock::time_point deadline_{};
  int64_t timeout_ms_ = 0;
  std::string what_;  // "run", "run 'tag'", or the creation work
};

// The deadline of a session's creation (session.compile_timeout_ms), checked between its stages and
// between the steps it compiles, and handed to the kernels constant folding runs.
class CreationDeadline {
 public:
  CreationDeadline() = default;  // none
  // `timeout` from now; zero: none.
  explicit CreationDeadline(std::chrono::milliseconds timeout);
  bool set() const { return timeout_.count() > 0; }
  // Throws EPHOST_DEADLINE_EXCEEDED naming `stage` once the deadline has passed.
  void check(const std::string& stage) const;
  // Limits for kernels run during creation (constant folding of `what`).
  RunLimits limits(std::string what) const;

 private:
  RunClock::time_point start_{};
  RunClock::time_point deadline_{};
  std::chrono::milliseconds timeout_{0};
};

}  // namespace ephost
