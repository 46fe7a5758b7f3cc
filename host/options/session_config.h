// One home for session options: SessionOptions (session_options.h) stores what the application set,
// by key; parse_session_config reads every key once, checks its value, and returns this typed struct,
// which is all the session's stages read.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "epcontext/context_options.h"
#include "model/free_dimensions.h"
#include "options/session_options.h"

namespace ephost {

enum class SelectionPolicy { kNone, kPreferCpu, kPreferGpu, kPreferNpu, kMaxCoverage };
const char* selection_policy_name(SelectionPolicy policy);

struct SessionConfig {
  bool cpu_fallback = true;               // !session.disable_cpu_ep_fallback
  bool keep_initializers = false;         // session.keep_initializers: free no packed initializer
  std::string external_data_folder;       // session.model_external_initializers_file_folder_path
  bool mem_pattern = true;                // session.enable_mem_pattern
  bool mem_reuse = true;                  // session.enable_mem_reuse
  int optimization_level = 99;            // session.graph_optimization_level, else SetGraphOptimizationLevel
  int32_t threads = 1;                    // session.intra_op_num_threads, else SetIntraOpNumThreads; 0 -> cores
  bool allow_spinning = true;             // session.intra_op.allow_spinning
  SelectionPolicy selection_policy = SelectionPolicy::kNone;  // session.ep_selection_policy
  bool profiling = false;                           // session.enable_profiling
  std::string profile_prefix = "ephost_profile";    // session.profile_file_prefix
  int64_t compile_timeout_ms = 0;                   // session.compile_timeout_ms; 0: no deadline
  std::string provider_isolation;                   // session.provider_isolation ("": not set)
  EpContextOptions ep_context;
  // session.free_dimension_override.<name> and session.free_dimension_override_denotation.<denotation>.
  std::vector<FreeDimensionOverride> free_dimension_overrides;
  // Providers in registration priority (AppendProvider order; empty: by the plugins' priorities).
  std::vector<ProviderRequest> providers;
  // ep.<provider>.<key> entries that are not host keys: (provider as written, key, value).
  struct ProviderEntry {
    std::string provider, key, value;
  };
  std::vector<ProviderEntry> provider_entries;
};

// Throws INVALID_ARGUMENT naming the key for a value of the wrong form.
SessionConfig parse_session_config(const SessionOptions& options);

}  // namespace ephost
