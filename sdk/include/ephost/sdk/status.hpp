// ephost plugin SDK — errors: the exception plugin code throws (Error, fail), statuses from the host
// turned into exceptions (check) and exceptions turned into statuses at the boundary (guard), and
// logging through the host.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/host.hpp"

namespace ephost::sdk {

// Thrown by plugin code; converted to an EphostStatus at the boundary.
class Error : public std::runtime_error {
 public:
  Error(EphostStatusCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  EphostStatusCode code() const { return code_; }

 private:
  EphostStatusCode code_;
};

[[noreturn]] inline void fail(EphostStatusCode code, const std::string& message) { throw Error(code, message); }

// Fails with EPHOST_NOT_IMPLEMENTED, naming `what`, unless the host offers sequence and optional
// values (host_has_values): the guard of every SDK helper that needs plugin ABI 2.
inline void require_devices(const char* what) {
  if (!host_has_devices())
    fail(EPHOST_NOT_IMPLEMENTED, std::string(what) + " needs plugin ABI 3 (devices); the host speaks an older ABI");
}
inline void require_values(const char* what) {
  if (!host_has_values())
    fail(EPHOST_NOT_IMPLEMENTED, std::string(what) + " needs plugin ABI 2 (sequence and optional values); the host "
                                                      "speaks ABI 1");
}

// Throws when `status` is an error (taking ownership of it).
inline void check(EphostStatus* status) {
  if (status == nullptr) return;
  std::string message = host().status_message(status);
  EphostStatusCode code = host().status_code(status);
  host().status_release(status);
  throw Error(code, message);
}

// Runs `fn`, converting any exception into a status. Every generated C entry goes through this.
template <typename Fn>
EphostStatus* guard(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return host().status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return host().status_create(EPHOST_FAIL, "out of memory");
  } catch (const std::exception& e) {
    return host().status_create(EPHOST_RUNTIME_EXCEPTION, e.what());
  } catch (...) {
    return host().status_create(EPHOST_RUNTIME_EXCEPTION, "unknown exception in plugin");
  }
}

inline void log(EphostLogLevel level, const std::string& message) { host().log(nullptr, level, message.c_str()); }

}  // namespace ephost::sdk
