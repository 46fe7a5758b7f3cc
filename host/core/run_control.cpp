#include "core/run_control.h"

#include <fmt/format.h>

#include "core/error.h"

namespace ephost {
namespace {

int64_t elapsed_ms(RunClock::time_point since, RunClock::time_point now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
}

}  // namespace

RunLimits::RunLimits(const RunControl* control) : control_(control) {
  if (!control) return;
  what_ = control->tag.empty() ? "run" : "run '" + control->tag + "'";
  timeout_ms_ = control->timeout_ms.load(std::memory_order_relaxed);
  if (timeout_ms_ > 0) {
    start_ = RunClock::now();
    deadline_ = start_ + std::chrono::milliseconds(timeout_ms_);
    has_deadline_ = true;
  }
}

RunLimits RunLimits::creation(RunClock::time_point deadline, std::chrono::milliseconds timeout, std::string what) {
  RunLimits limits;
  limits.has_deadline_ = true;
  limits.creation_ = true;
  limits.deadline_ = deadline;
  limits.start_ = deadline - timeout;
  limits.timeout_ms_ = timeout.count();
  limits.what_ = std::move(what);
  return limits;
}

std::optional<StopReason> RunLimits::stop_reason() const {
  if (control_ && control_->terminate.load(std::memory_order_relaxed))
    return StopReason{EPHOST_CANCELLED,
                      fmt::format("{} terminated by RunOptions.terminate: clear it (RunOptionsSetTerminate 0, "
                                  "run_options.terminate = False) to run again", what_)};
  if (!has_deadline_) return std::nullopt;
  const RunClock::time_point now = RunClock::now();
  if (now < deadline_) return std::nullopt;
  if (creation_)
    return StopReason{EPHOST_DEADLINE_EXCEEDED,
                      fmt::format("session creation exceeded its deadline of {} ms (session.compile_timeout_ms) "
                                  "during {}, after {} ms: raise session.compile_timeout_ms (0: none)",
                                  timeout_ms_, what_, elapsed_ms(start_, now))};
  return StopReason{EPHOST_DEADLINE_EXCEEDED,
                    fmt::format("{} exceeded its deadline: stopped after {} ms of its {} ms timeout (RunOptions "
                                "timeout: RunOptionsSetTimeout, run_options.timeout_ms); raise it, or set 0 for none",
                                what_, elapsed_ms(start_, now), timeout_ms_)};
}

void RunLimits::check() const {
  if (!limited()) return;
  if (std::optional<StopReason> reason = stop_reason()) throw Error(reason->code, std::move(reason->message));
}

CreationDeadline::CreationDeadline(std::chrono::milliseconds timeout) : timeout_(timeout) {
  if (!set()) return;
  start_ = RunClock::now();
  deadline_ = start_ + timeout;
}

void CreationDeadline::check(const std::string& stage) const {
  if (set()) RunLimits::creation(deadline_, timeout_, stage).check();
}

RunLimits CreationDeadline::limits(std::string what) const {
  return set() ? RunLimits::creation(deadline_, timeout_, std::move(what)) : RunLimits();
}

}  // namespace ephost
