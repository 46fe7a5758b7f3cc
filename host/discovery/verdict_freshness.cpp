#include "discovery/verdict_freshness.h"

#include <fmt/format.h>

#include <chrono>

namespace ephost {

int64_t reprobe_interval_s(uint32_t repeats) {
  int64_t interval = kReprobeFirstSeconds;
  for (uint32_t i = 0; i < repeats && interval < kReprobeMaxSeconds; ++i) interval *= 2;
  return interval < kReprobeMaxSeconds ? interval : kReprobeMaxSeconds;
}

std::string reprobe_reason(const RegistryEntry& entry, const ProbeContext& now, int64_t now_s) {
  if (!verdict_depends_on_context(entry.result.outcome)) return {};
  std::string why = describe_context_change(entry.context, now);
  if (!why.empty()) return why;
  if (!verdict_ages_out(entry.result.outcome)) return {};
  if (entry.probed_at > now_s) return "the verdict was recorded in the future (the clock was set back)";
  const int64_t age = now_s - entry.probed_at;
  if (age >= reprobe_interval_s(entry.repeats))
    return fmt::format("the verdict was {} old (its backoff: {})", age_text(age),
                       age_text(reprobe_interval_s(entry.repeats)));
  return {};
}

std::string age_text(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return fmt::format("{} s", seconds);
  if (seconds < 3600) return fmt::format("{} min", seconds / 60);
  if (seconds < 86400) return fmt::format("{} h", seconds / 3600);
  return fmt::format("{} d", seconds / 86400);
}

int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace ephost
