// Logging for the whole host: one spdlog logger ("ephost") writing to stderr, filtered by the env's
// level. Reasons that callers must act on also go into reports (discovery, partition), not only here.
#pragma once

#include <string>
#include <vector>

#include "ephost/ephost_types.h"

namespace ephost {

void log_set_level(EphostLogLevel level);
EphostLogLevel log_level();
void log_message(EphostLogLevel level, const std::string& message);

inline void log_verbose(const std::string& m) { log_message(EPHOST_LOG_VERBOSE, m); }
inline void log_info(const std::string& m) { log_message(EPHOST_LOG_INFO, m); }
inline void log_warning(const std::string& m) { log_message(EPHOST_LOG_WARNING, m); }
inline void log_error(const std::string& m) { log_message(EPHOST_LOG_ERROR, m); }

}  // namespace ephost
