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

// NULL for EPHOST_OK, otherwise a new status the receiver owns.
EphostStatus* make_status(EphostStatusCode code, const std::string& message);

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
