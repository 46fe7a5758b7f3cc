// The CLI's view of libephost: the public C API only (ephost/ephost_c_api.h), wrapped in RAII handles
// and one exception type. Nothing here knows the library's internals.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "ephost/ephost_c_api.h"

namespace ephost_cli {

// Every error the CLI reports: a status code (the library's, or one the CLI picks for its own checks)
// and a message. main() prints "ephost: error: <CODE_NAME>: <message>" and exits with exit_code().
class CliError : public std::runtime_error {
 public:
  CliError(EphostStatusCode code, std::string message, int exit_code = 1)
      : std::runtime_error(std::move(message)), code_(code), exit_code_(exit_code) {}
  EphostStatusCode code() const { return code_; }
  int exit_code() const { return exit_code_; }

 private:
  EphostStatusCode code_;
  int exit_code_;
};

// A usage error (bad or missing command-line argument): INVALID_ARGUMENT, exit status 2.
[[noreturn]] void usage_error(const std::string& message);

// The function table (EphostGetApi(EPHOST_API_VERSION)). Throws CliError when the library does not
// provide this version.
const EphostApi& api();

// Whether the library's table has the EPContext members appended to version 1
// (SessionGetEpContextReportJson, InspectEpContextModelJson): a libephost built before them lacks them.
bool api_has_epcontext();

// "INVALID_GRAPH" etc.; works without the library too.
std::string code_name(EphostStatusCode code);

// Throws CliError carrying the status's code and message (releasing the status) when it is non-NULL.
// `context`, when given, is prepended to the message: "<context>: <message>".
void check(EphostStatus* status, const std::string& context = {});

// Takes ownership of a library-allocated string (FreeString).
std::string take_string(char* s);

struct EnvDeleter { void operator()(EphostEnv* p) const; };
struct SessionOptionsDeleter { void operator()(EphostSessionOptions* p) const; };
struct SessionDeleter { void operator()(EphostSession* p) const; };
struct TensorDeleter { void operator()(EphostTensor* p) const; };
using EnvPtr = std::unique_ptr<EphostEnv, EnvDeleter>;
using SessionOptionsPtr = std::unique_ptr<EphostSessionOptions, SessionOptionsDeleter>;
using SessionPtr = std::unique_ptr<EphostSession, SessionDeleter>;
using TensorPtr = std::unique_ptr<EphostTensor, TensorDeleter>;

// "float", "int64", ... (ONNX's lower-case spellings); "type<N>" for unknown values.
std::string element_type_name(int32_t elem_type);
// Size of one element, 0 for unknown types. Independent of the library (used before it is loaded).
size_t element_size(int32_t elem_type);

}  // namespace ephost_cli
