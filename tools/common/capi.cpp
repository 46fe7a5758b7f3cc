#include "capi.h"

#include <cstddef>

namespace ephost_cli {

void usage_error(const std::string& message) { throw CliError(EPHOST_INVALID_ARGUMENT, message, 2); }

const EphostApi& api() {
  static const EphostApi* table = EphostGetApi(EPHOST_API_VERSION);
  if (!table) {
    const char* v = EphostGetVersionString();
    throw CliError(EPHOST_FAIL, std::string("libephost ") + (v ? v : "?") + " does not provide C API version " +
                                    std::to_string(EPHOST_API_VERSION) + " (this ephost command needs it)");
  }
  return *table;
}

bool api_has_epcontext() {
  const EphostApi& a = api();
  return a.struct_size >= offsetof(EphostApi, InspectEpContextModelJson) + sizeof(a.InspectEpContextModelJson) &&
         a.SessionGetEpContextReportJson && a.InspectEpContextModelJson;
}

std::string code_name(EphostStatusCode code) {
  // The library names its codes; only when it cannot be used at all is there nothing to ask.
  if (const EphostApi* table = EphostGetApi(EPHOST_API_VERSION)) return table->GetErrorCodeName(code);
  return "CODE_" + std::to_string(static_cast<int>(code));
}

void check(EphostStatus* status, const std::string& context) {
  if (!status) return;
  const EphostApi& a = api();
  EphostStatusCode code = a.GetErrorCode(status);
  const char* msg = a.GetErrorMessage(status);
  std::string message = msg ? msg : "";
  a.ReleaseStatus(status);
  if (!context.empty()) message = context + ": " + message;
  throw CliError(code == EPHOST_OK ? EPHOST_FAIL : code, message);
}

std::string take_string(char* s) {
  if (!s) return {};
  std::string out(s);
  api().FreeString(s);
  return out;
}

void EnvDeleter::operator()(EphostEnv* p) const { api().ReleaseEnv(p); }
void SessionOptionsDeleter::operator()(EphostSessionOptions* p) const { api().ReleaseSessionOptions(p); }
void SessionDeleter::operator()(EphostSession* p) const { api().ReleaseSession(p); }
void TensorDeleter::operator()(EphostTensor* p) const { api().ReleaseTensor(p); }

std::string element_type_name(int32_t t) { return EphostElementTypeName(t); }

size_t element_size(int32_t t) {
  switch (t) {
    case EPHOST_ELEMENT_UINT8:
    case EPHOST_ELEMENT_INT8:
    case EPHOST_ELEMENT_BOOL: return 1;
    case EPHOST_ELEMENT_UINT16:
    case EPHOST_ELEMENT_INT16:
    case EPHOST_ELEMENT_FLOAT16:
    case EPHOST_ELEMENT_BFLOAT16: return 2;
    case EPHOST_ELEMENT_FLOAT:
    case EPHOST_ELEMENT_INT32:
    case EPHOST_ELEMENT_UINT32: return 4;
    case EPHOST_ELEMENT_INT64:
    case EPHOST_ELEMENT_UINT64:
    case EPHOST_ELEMENT_DOUBLE:
    case EPHOST_ELEMENT_COMPLEX64: return 8;
    case EPHOST_ELEMENT_COMPLEX128: return 16;
    case EPHOST_ELEMENT_STRING: return sizeof(const char*);
    default: return 0;
  }
}

}  // namespace ephost_cli
