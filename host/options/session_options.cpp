#include "options/session_options.h"

#include "core/error.h"
#include "options/option_keys.h"

namespace ephost {

void SessionOptions::set(const std::string& key, const std::string& value) {
  if (key.empty()) fail(EPHOST_INVALID_ARGUMENT, "session config key is empty");
  if (key.size() > 128) fail(EPHOST_INVALID_ARGUMENT, "session config key '{}...' is longer than 128 bytes", key.substr(0, 32));
  if (value.size() > 1024)
    fail(EPHOST_INVALID_ARGUMENT, "value of session config key '{}' is longer than 1024 bytes", key);
  check_option_key(key);
  config[key] = value;
}

ProviderRequest parse_provider_request(const std::string& text) {
  ProviderRequest r;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    r.name = text;
    return r;
  }
  r.name = text.substr(0, colon);
  const std::string index = text.substr(colon + 1);
  if (r.name.empty() || index.empty() || index.size() > 4 || index.find_first_not_of("0123456789") != std::string::npos)
    fail(EPHOST_INVALID_ARGUMENT, "provider '{}': expected '<name>' or '<name>:<device index>'", text);
  r.device = std::stoll(index);
  return r;
}

}  // namespace ephost
