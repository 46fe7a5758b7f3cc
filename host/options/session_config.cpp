#include "options/session_config.h"

#include <algorithm>
#include <thread>

#include "core/error.h"
#include "ephost/ephost_session_options_keys.h"
#include "isolation/isolation_options.h"
#include "options/option_keys.h"

namespace ephost {
namespace {

class Reader {
 public:
  explicit Reader(const SessionOptions& options) : config_(options.config) {}

  std::string string(const char* key, const std::string& fallback = "") const {
    auto it = config_.find(key);
    return it == config_.end() ? fallback : it->second;
  }
  bool flag(const char* key, bool fallback) const {
    auto it = config_.find(key);
    if (it == config_.end()) return fallback;
    if (it->second == "1") return true;
    if (it->second == "0") return false;
    fail(EPHOST_INVALID_ARGUMENT, "session config '{}' must be \"0\" or \"1\", found \"{}\"", key, it->second);
  }
  bool has(const char* key) const { return config_.count(key) != 0; }

 private:
  const std::map<std::string, std::string>& config_;
};

int32_t parse_threads(const Reader& r, int32_t from_setter) {
  int32_t n = from_setter;
  const std::string v = r.string(kEphostSessionOptionsIntraOpNumThreads);
  if (!v.empty()) {
    try {
      size_t used = 0;
      n = std::stoi(v, &used);
      if (used != v.size()) throw std::invalid_argument(v);
    } catch (...) {
      fail(EPHOST_INVALID_ARGUMENT, "{} must be an integer, found \"{}\"", kEphostSessionOptionsIntraOpNumThreads, v);
    }
  }
  if (n < 0) fail(EPHOST_INVALID_ARGUMENT, "intra-op thread count must be >= 0, found {}", n);
  if (n == 0) n = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

int parse_level(const Reader& r, int from_setter) {
  const std::string v = r.string(kEphostSessionOptionsGraphOptimizationLevel);
  if (v.empty()) return from_setter;
  if (v == "0" || v == "1" || v == "2" || v == "99") return std::stoi(v);
  fail(EPHOST_INVALID_ARGUMENT, "{} must be 0, 1, 2 or 99, found \"{}\"", kEphostSessionOptionsGraphOptimizationLevel,
       v);
}

int64_t parse_compile_timeout(const Reader& r) {
  const std::string v = r.string(kEphostSessionOptionsCompileTimeoutMs);
  if (v.empty()) return 0;
  try {
    size_t used = 0;
    const long long ms = std::stoll(v, &used);
    if (used == v.size() && ms >= 0) return ms;
  } catch (...) {
  }
  fail(EPHOST_INVALID_ARGUMENT, "{} must be a number of milliseconds >= 0 (0: no deadline), found \"{}\"",
       kEphostSessionOptionsCompileTimeoutMs, v);
}

SelectionPolicy parse_policy(const Reader& r) {
  const std::string v = r.string(kEphostSessionOptionsEpSelectionPolicy);
  for (SelectionPolicy p : {SelectionPolicy::kNone, SelectionPolicy::kPreferCpu, SelectionPolicy::kPreferGpu,
                            SelectionPolicy::kPreferNpu, SelectionPolicy::kMaxCoverage})
    if (v == selection_policy_name(p)) return p;
  fail(EPHOST_INVALID_ARGUMENT, "{} must be prefer_cpu, prefer_gpu, prefer_npu or max_coverage, found \"{}\"",
       kEphostSessionOptionsEpSelectionPolicy, v);
}

EpContextOptions parse_ep_context(const Reader& r) {
  EpContextOptions o;
  o.enable = r.flag(kEphostSessionOptionsEpContextEnable, false);
  o.file_path = r.string(kEphostSessionOptionsEpContextFilePath);
  o.embed = r.flag(kEphostSessionOptionsEpContextEmbedMode, false);
  o.node_prefix = r.string(kEphostSessionOptionsEpContextNodeNamePrefix);
  o.external_initializers_file = r.string(kEphostSessionOptionsEpContextModelExternalInitializersFileName);
  o.overwrite = r.flag(kEphostSessionOptionsEpContextOverwrite, false);
  o.share = r.flag(kEphostSessionOptionsShareEpContexts, false);
  o.stop_share = r.flag(kEphostSessionOptionsStopShareEpContexts, false);
  o.source_model_path = r.string(kEphostSessionOptionsEpContextSourceModelPath);
  o.disable_fallback = r.flag(kEphostSessionOptionsDisableEpContextFallback, false);
  o.fail_on_suboptimal = r.flag(kEphostSessionOptionsFailOnSuboptimalCompiledModel, false);
  o.rebuild = r.flag(kEphostSessionOptionsEpContextRebuild, false);
  return o;
}

std::vector<FreeDimensionOverride> parse_free_dimension_overrides(const std::map<std::string, std::string>& config) {
  std::vector<FreeDimensionOverride> overrides;
  for (const auto& [key, value] : config) {
    FreeDimensionOverride o;
    const std::string by_name = kEphostSessionOptionsFreeDimensionOverridePrefix;
    const std::string by_denotation = kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix;
    if (key.rfind(by_name, 0) == 0)
      o.name = key.substr(by_name.size());
    else if (key.rfind(by_denotation, 0) == 0)
      o.name = key.substr(by_denotation.size()), o.by_denotation = true;
    else
      continue;
    o.key = key;
    bool ok = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if (ok) {
      try {
        o.value = std::stoll(value);
      } catch (...) {
        ok = false;
      }
    }
    if (!ok || o.value <= 0)
      fail(EPHOST_INVALID_ARGUMENT, "session config '{}' must be a positive integer (the dimension's size), found \"{}\"",
           key, value);
    overrides.push_back(std::move(o));
  }
  return overrides;
}

}  // namespace

const char* selection_policy_name(SelectionPolicy policy) {
  switch (policy) {
    case SelectionPolicy::kNone: return "";
    case SelectionPolicy::kPreferCpu: return "prefer_cpu";
    case SelectionPolicy::kPreferGpu: return "prefer_gpu";
    case SelectionPolicy::kPreferNpu: return "prefer_npu";
    case SelectionPolicy::kMaxCoverage: return "max_coverage";
  }
  return "";
}

SessionConfig parse_session_config(const SessionOptions& options) {
  const Reader r(options);
  // Entries stored without SessionOptions::set (a struct filled in by hand) are checked here too.
  for (const auto& [key, value] : options.config) check_option_key(key);
  SessionConfig c;
  c.cpu_fallback = !r.flag(kEphostSessionOptionsDisableCpuEpFallback, false);
  c.external_data_folder = r.string(kEphostSessionOptionsModelExternalInitializersFileFolderPath);
  c.keep_initializers = r.flag(kEphostSessionOptionsKeepInitializers, false);
  c.mem_pattern = r.flag(kEphostSessionOptionsEnableMemPattern, true);
  c.mem_reuse = r.flag(kEphostSessionOptionsEnableMemReuse, true);
  c.optimization_level = parse_level(r, options.optimization_level);
  c.threads = parse_threads(r, options.intra_op_threads);
  c.allow_spinning = r.flag(kEphostSessionOptionsIntraOpAllowSpinning, true);
  c.selection_policy = parse_policy(r);
  c.profiling = r.flag(kEphostSessionOptionsEnableProfiling, false);
  c.profile_prefix = r.string(kEphostSessionOptionsProfileFilePrefix, c.profile_prefix);
  c.compile_timeout_ms = parse_compile_timeout(r);
  c.provider_isolation = r.string(kEphostSessionOptionsProviderIsolation);
  if (!c.provider_isolation.empty())
    parse_isolation_mode(c.provider_isolation, "session option 'session.provider_isolation'");
  c.ep_context = parse_ep_context(r);
  c.free_dimension_overrides = parse_free_dimension_overrides(options.config);
  c.providers = options.providers;
  const std::string prefix = kEphostSessionOptionsProviderOptionPrefix;
  for (const auto& [key, value] : options.config) {
    if (key.rfind(prefix, 0) != 0 || is_host_option_namespace(key)) continue;
    const size_t dot = key.find('.', prefix.size());
    if (dot == std::string::npos || dot == prefix.size() || dot + 1 == key.size())
      fail(EPHOST_INVALID_ARGUMENT, "session option '{}' is neither a host option nor 'ep.<provider>.<key>'", key);
    c.provider_entries.push_back({key.substr(prefix.size(), dot - prefix.size()), key.substr(dot + 1), value});
  }
  return c;
}

}  // namespace ephost
