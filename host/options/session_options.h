// Session options as the application sets them: ONNX Runtime's string keys (every key the host owns
// is a documented constant of plugin_api/include/ephost/ephost_session_options_keys.h), the provider
// list, and the typed setters ONNX Runtime has. parse_session_config (session_config.h) reads them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "isolation/provider_health.h"

namespace ephost {

struct ProviderRequest {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
  int64_t device = -1;  // the plugin's device index ("<name>:<index>"), -1 when not named
};

// "name" or "name:<index>" -> a request; INVALID_ARGUMENT for a malformed device index.
ProviderRequest parse_provider_request(const std::string& text);

struct SessionOptions {
  std::map<std::string, std::string> config;
  std::vector<ProviderRequest> providers;  // registration priority, earlier first
  int32_t intra_op_threads = 0;            // 0: default
  int optimization_level = 99;
  // Progress of session creation (SetSessionProgressCallback): stage, done, total, user.
  void (*progress)(const char* stage, size_t done, size_t total, void* user) = nullptr;
  void* progress_user = nullptr;
  // Changes of the state of an isolated provider (SetProviderStateCallback, API 5): its name and its
  // state after the change.
  std::function<void(const std::string& provider, const IsolatedProviderHealth& health)> provider_state;
  // Initializers the application supplies (AddInitializer, API 4): each replaces the model's
  // initializer of that name (same element type and shape) or gives a graph input a constant value.
  std::vector<std::pair<std::string, Tensor>> initializers;

  // Checks the key (a key in a namespace the host owns must be a known one: INVALID_ARGUMENT with
  // the closest known key otherwise) and ONNX Runtime's limits (key <= 128 bytes, value <= 1024),
  // then stores.
  void set(const std::string& key, const std::string& value);
};

}  // namespace ephost
