// The host's internal error type. Host code throws ephost::Error; the C API boundary (host/app_api) and
// the plugin-facing host table (host/plugin_abi) catch it and turn it into an EphostStatus. Nothing else
// may escape libephost, and nothing in it aborts the process.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "ephost/ephost_types.h"

namespace ephost {

class Error : public std::runtime_error {
 public:
  Error(EphostStatusCode code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  EphostStatusCode code() const { return code_; }

 private:
  EphostStatusCode code_;
};

// Throws an Error whose message is fmt-formatted: say what was expected, what was found, and where.
template <typename... Args>
[[noreturn]] void fail(EphostStatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

// "INVALID_GRAPH" for EPHOST_INVALID_GRAPH, as ONNX Runtime spells its codes.
const char* status_code_name(EphostStatusCode code);

}  // namespace ephost
