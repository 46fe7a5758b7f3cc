#include "session/session_options.h"

#include "core/error.h"
#include "session/option_keys.h"

namespace ephost {

void SessionOptions::set(const std::string& key, const std::string& value) {
  if (key.empty()) fail(EPHOST_INVALID_ARGUMENT, "session config key is empty");
  if (key.size() > 128) fail(EPHOST_INVALID_ARGUMENT, "session config key '{}...' is longer than 128 bytes", key.substr(0, 32));
  if (value.size() > 1024)
    fail(EPHOST_INVALID_ARGUMENT, "value of session config key '{}' is longer than 1024 bytes", key);
  check_option_key(key);
  config[key] = value;
}

}  // namespace ephost
