#include "core/status.h"

#include <mutex>
#include <new>
#include <unordered_set>

#include "core/error.h"

namespace ephost {

const char* status_code_name(EphostStatusCode code) {
  switch (code) {
    case EPHOST_OK: return "OK";
    case EPHOST_FAIL: return "FAIL";
    case EPHOST_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case EPHOST_NO_SUCHFILE: return "NO_SUCHFILE";
    case EPHOST_NO_MODEL: return "NO_MODEL";
    case EPHOST_ENGINE_ERROR: return "ENGINE_ERROR";
    case EPHOST_RUNTIME_EXCEPTION: return "RUNTIME_EXCEPTION";
    case EPHOST_INVALID_PROTOBUF: return "INVALID_PROTOBUF";
    case EPHOST_MODEL_LOADED: return "MODEL_LOADED";
    case EPHOST_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case EPHOST_INVALID_GRAPH: return "INVALID_GRAPH";
    case EPHOST_EP_FAIL: return "EP_FAIL";
    case EPHOST_CANCELLED: return "CANCELLED";
    case EPHOST_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
  }
  return "UNKNOWN";
}

namespace {

// Leaked: statuses may be released during static destruction.
std::mutex& live_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::unordered_set<const EphostStatus*>& live_statuses() {
  static auto* s = new std::unordered_set<const EphostStatus*>;
  return *s;
}

}  // namespace

EphostStatus* make_status(EphostStatusCode code, const std::string& message) {
  if (code == EPHOST_OK) return nullptr;
  EphostStatus* status = nullptr;
  try {
    status = new EphostStatus{code, message};
  } catch (...) {
    // Out of memory while reporting an error: a static status would be freed by the caller, so the
    // best we can do is a minimal allocation attempt without the message.
    status = new (std::nothrow) EphostStatus{code, {}};
  }
  if (!status) return nullptr;
  try {
    std::lock_guard<std::mutex> lock(live_mutex());
    live_statuses().insert(status);
  } catch (...) {
    delete status;
    return nullptr;
  }
  return status;
}

bool is_live_status(const EphostStatus* status) {
  if (!status) return false;
  std::lock_guard<std::mutex> lock(live_mutex());
  return live_statuses().count(status) != 0;
}

bool release_status(EphostStatus* status) {
  if (!status) return false;
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    if (live_statuses().erase(status) == 0) return false;
  }
  delete status;
  return true;
}

EphostStatus* status_from_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(EPHOST_FAIL, "out of memory");
  } catch (const std::exception& e) {
    return make_status(EPHOST_RUNTIME_EXCEPTION, e.what());
  } catch (...) {
    return make_status(EPHOST_RUNTIME_EXCEPTION, "unknown exception");
  }
}

}  // namespace ephost
