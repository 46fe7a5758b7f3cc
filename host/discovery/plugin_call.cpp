#include "discovery/plugin_call.h"

#include "core/error.h"

namespace ephost {

std::string take_status_text(const EphostHostApi& api, EphostStatus* status) {
  if (status == nullptr) return "OK";
  EphostStatusCode code = api.status_code(status);
  const char* message = api.status_message(status);
  std::string text = std::string(status_code_name(code)) + ": " + (message ? message : "");
  api.status_release(status);
  return text;
}

}  // namespace ephost
