#include "session/session_options.h"

#include <thread>

#include "core/error.h"

namespace ephost {

void SessionOptions::set(const std::string& key, const std::string& value) {
  if (key.empty()) fail(EPHOST_INVALID_ARGUMENT, "session config key is empty");
  if (key.size() > 128) fail(EPHOST_INVALID_ARGUMENT, "session config key '{}...' is longer than 128 bytes", key.substr(0, 32));
  if (value.size() > 1024)
    fail(EPHOST_INVALID_ARGUMENT, "value of session config key '{}' is longer than 1024 bytes", key);
  config[key] = value;
}

std::string SessionOptions::get(const std::string& key, const std::string& fallback) const {
  auto it = config.find(key);
  return it == config.end() ? fallback : it->second;
}

bool SessionOptions::get_flag(const std::string& key, bool fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (it->second == "1") return true;
  if (it->second == "0") return false;
  fail(EPHOST_INVALID_ARGUMENT, "session config '{}' must be \"0\" or \"1\", found \"{}\"", key, it->second);
}

int32_t SessionOptions::threads() const {
  int32_t n = intra_op_threads;
  std::string v = get("session.intra_op_num_threads");
  if (!v.empty()) {
    try {
      n = std::stoi(v);
    } catch (...) {
      fail(EPHOST_INVALID_ARGUMENT, "session.intra_op_num_threads must be an integer, found \"{}\"", v);
    }
  }
  if (n < 0) fail(EPHOST_INVALID_ARGUMENT, "intra-op thread count must be >= 0, found {}", n);
  if (n == 0) n = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

int SessionOptions::level() const {
  std::string v = get("session.graph_optimization_level");
  if (v.empty()) return optimization_level;
  if (v == "0" || v == "1" || v == "2" || v == "99") return std::stoi(v);
  fail(EPHOST_INVALID_ARGUMENT, "session.graph_optimization_level must be 0, 1, 2 or 99, found \"{}\"", v);
}

}  // namespace ephost
