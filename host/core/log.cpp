#include "core/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

namespace ephost {
namespace {

std::atomic<int> g_level{EPHOST_LOG_WARNING};

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("ephost", sink);
    l->set_pattern("[ephost] [%l] %v");
    l->set_level(spdlog::level::trace);  // filtering is ours, so the level switch is one atomic load
    return l;
  }();
  return *instance;
}

spdlog::level::level_enum to_spdlog(EphostLogLevel level) {
  switch (level) {
    case EPHOST_LOG_VERBOSE: return spdlog::level::debug;
    case EPHOST_LOG_INFO: return spdlog::level::info;
    case EPHOST_LOG_WARNING: return spdlog::level::warn;
    case EPHOST_LOG_ERROR: return spdlog::level::err;
    case EPHOST_LOG_FATAL: return spdlog::level::critical;
  }
  return spdlog::level::info;
}

}  // namespace

void log_set_level(EphostLogLevel level) { g_level.store(level); }
EphostLogLevel log_level() { return static_cast<EphostLogLevel>(g_level.load()); }

void log_message(EphostLogLevel level, const std::string& message) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  try {
    logger().log(to_spdlog(level), message);
  } catch (...) {
    // Logging must never take the host down.
  }
}

}  // namespace ephost
