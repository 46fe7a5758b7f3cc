#include "core/status.h"

#include <new>

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
  }
  return "UNKNOWN";
}

EphostStatus* make_status(EphostStatusCode code, const std::string& message) {
  if (code == EPHOST_OK) return nullptr;
  try {
    return new EphostStatus{code, message};
  } catch (...) {
    // Out of memory while reporting an error: a static status would be freed by the caller, so the
    // best we can do is a minimal allocation attempt without the message.
    return new (std::nothrow) EphostStatus{code, {}};
  }
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
