// How the tools fail. Errors from libephost arrive as Ephost::Exception (the C++ wrapper's status code
// and message); the tools throw the same type for their own checks, with the code that fits, and
// UsageError for a bad command line. main() prints "<tool>: error: <CODE>: <message>" and exits with 2
// for a usage error, 1 for anything else.
#pragma once

#include <exception>
#include <string>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

// A bad or missing command-line argument: INVALID_ARGUMENT unless the caller says otherwise (a model
// named on the command line that does not exist is NO_SUCHFILE), exit status 2.
class UsageError : public Ephost::Exception {
 public:
  explicit UsageError(const std::string& message, EphostStatusCode code = EPHOST_INVALID_ARGUMENT)
      : Ephost::Exception(code, message) {}
};

[[noreturn]] void usage_error(const std::string& message);

// Runs a library call; an Ephost::Exception from it comes out with `context` in front of its message
// ("<context>: <message>"), so that the user learns which option, file or value the library refused.
template <typename Call>
decltype(auto) with_context(const std::string& context, Call&& call) {
  try {
    return call();
  } catch (const Ephost::Exception& e) {
    throw Ephost::Exception(e.code(), context + ": " + e.message());
  }
}

// The exit status for an error: 2 for a UsageError, 1 otherwise.
int exit_status(const Ephost::Exception& e);

// Prints "<tool>: error: <CODE>: <message>" on stderr (after flushing stdout) and returns the exit
// status. The code's name comes from the library; when the library itself is what cannot be used
// (it lacks the API version the tool needs), "CODE_<n>".
int report_error(const std::string& tool, EphostStatusCode code, const std::string& message, int exit_status);
int report_error(const std::string& tool, const Ephost::Exception& e);
// Anything else that escaped (std::exception): reported as FAIL.
int report_error(const std::string& tool, const std::exception& e);

}  // namespace ephost_cli
