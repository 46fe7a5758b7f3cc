#include "tool_errors.h"

#include <iostream>

namespace ephost_cli {

namespace {

std::string code_name(EphostStatusCode code) {
  try {
    return Ephost::error_code_name(code);
  } catch (const std::exception&) {  // the library does not serve the API version this tool needs
    return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

}  // namespace

void usage_error(const std::string& message) { throw UsageError(message); }

int exit_status(const Ephost::Exception& e) { return dynamic_cast<const UsageError*>(&e) ? 2 : 1; }

int report_error(const std::string& tool, EphostStatusCode code, const std::string& message, int exit_status) {
  std::cout.flush();
  std::cerr << tool << ": error: " << code_name(code) << ": " << message << std::endl;
  return exit_status;
}

int report_error(const std::string& tool, const Ephost::Exception& e) {
  return report_error(tool, e.code(), e.message(), exit_status(e));
}

int report_error(const std::string& tool, const std::exception& e) {
  return report_error(tool, EPHOST_FAIL, e.what(), 1);
}

}  // namespace ephost_cli
