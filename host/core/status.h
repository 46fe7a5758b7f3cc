// EphostStatus, the object behind the opaque status handle of both C ABIs.
#pragma once

#include <exception>
#include <string>

#include "ephost/ephost_types.h"

struct EphostStatus {
  EphostStatusCode code;
  std::string message;
};

namespace ephost {

// NULL for EPHOST_OK, otherwise a new status the receiver owns. Every status the host creates (for
// the application or for a plugin, through status_create) is registered as live until released.
EphostStatus* make_status(EphostStatusCode code, const std::string& message);

// True when `status` is a status the host created and nobody has released yet. A pointer a plugin or
// an application hands back is checked with this before it is read: anything else (garbage, a stale
// or foreign pointer) is never dereferenced.
bool is_live_status(const EphostStatus* status);

// Releases a live status and returns true; returns false, touching nothing, for anything else
// (NULL included).
bool release_status(EphostStatus* status);

// Converts the exception in flight (inside a catch block) into a status.
EphostStatus* status_from_current_exception() noexcept;

// Runs fn and converts whatever it throws into a status: the wall between host code and callers
// across either ABI.
template <typename Fn>
EphostStatus* guard(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (...) {
    return status_from_current_exception();
  }
}

}  // namespace ephost
