// Session options: ONNX Runtime's string keys (and typed setters for what ONNX Runtime has setters for).
//
// Keys understood (values "0"/"1" unless stated):
//   session.disable_cpu_ep_fallback          1: nodes no listed provider claims are an error (not CPU)
//   session.model_external_initializers_file_folder_path   folder of external data for buffer models
//   session.enable_mem_pattern               0 disables memory patterns (default 1)
//   session.enable_mem_reuse                 0 disables buffer reuse in the allocation plan (default 1)
//   session.graph_optimization_level         0, 1, 2 or 99 (as EphostGraphOptimizationLevel)
//   session.intra_op_num_threads             threads a provider may use per kernel (default: cores)
//   ep.<provider>.<key>                      option <key> for provider <provider>
// The EPContext keys (ep.context_*) are reserved for the EPContext cache.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ephost {

struct ProviderRequest {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
};

struct SessionOptions {
  std::map<std::string, std::string> config;
  std::vector<ProviderRequest> providers;  // registration priority, earlier first
  int32_t intra_op_threads = 0;            // 0: default
  int optimization_level = 99;
  // Internal: models the host builds itself (constant folding's one-node models) skip onnx::checker.
  bool trusted_model = false;

  // Checks key/value limits (ONNX Runtime's: key <= 128 bytes, value <= 1024) and stores.
  void set(const std::string& key, const std::string& value);
  std::string get(const std::string& key, const std::string& fallback = "") const;
  // Throws INVALID_ARGUMENT for a value other than "0"/"1".
  bool get_flag(const std::string& key, bool fallback) const;

  int32_t threads() const;
  int level() const;
};

}  // namespace ephost
