#include "options/option_keys.h"

#include <algorithm>

#include "core/error.h"
#include "ephost/ephost_session_options_keys.h"

namespace ephost {

const std::vector<OptionKey>& known_option_keys() {
  static const std::vector<OptionKey> keys = {
      {kEphostSessionOptionsDisableCpuEpFallback, OptionKind::kFlag},
      {kEphostSessionOptionsModelExternalInitializersFileFolderPath, OptionKind::kPath},
      {kEphostSessionOptionsKeepInitializers, OptionKind::kFlag},
      {kEphostSessionOptionsEnableMemPattern, OptionKind::kFlag},
      {kEphostSessionOptionsEnableMemReuse, OptionKind::kFlag},
      {kEphostSessionOptionsGraphOptimizationLevel, OptionKind::kInteger},
      {kEphostSessionOptionsIntraOpNumThreads, OptionKind::kInteger},
      {kEphostSessionOptionsIntraOpAllowSpinning, OptionKind::kFlag},
      {kEphostSessionOptionsEpSelectionPolicy, OptionKind::kString},
      {kEphostSessionOptionsEnableProfiling, OptionKind::kFlag},
      {kEphostSessionOptionsProfileFilePrefix, OptionKind::kPath},
      {kEphostSessionOptionsCompileTimeoutMs, OptionKind::kInteger},
      {kEphostSessionOptionsProviderIsolation, OptionKind::kString},
      {kEphostSessionOptionsDisableEpContextFallback, OptionKind::kFlag},
      {kEphostSessionOptionsFailOnSuboptimalCompiledModel, OptionKind::kFlag},
      {kEphostSessionOptionsEpContextSourceModelPath, OptionKind::kPath},
      {kEphostSessionOptionsEpContextRebuild, OptionKind::kFlag},
      {kEphostSessionOptionsEpContextEnable, OptionKind::kFlag},
      {kEphostSessionOptionsEpContextFilePath, OptionKind::kPath},
      {kEphostSessionOptionsEpContextEmbedMode, OptionKind::kFlag},
      {kEphostSessionOptionsEpContextNodeNamePrefix, OptionKind::kString},
      {kEphostSessionOptionsEpContextModelExternalInitializersFileName, OptionKind::kPath},
      {kEphostSessionOptionsEpContextOverwrite, OptionKind::kFlag},
      {kEphostSessionOptionsShareEpContexts, OptionKind::kFlag},
      {kEphostSessionOptionsStopShareEpContexts, OptionKind::kFlag},
  };
  return keys;
}

bool is_host_option_namespace(const std::string& key) {
  for (const char* prefix : {"session.", "ep.context_", "ep.share_", "ep.stop_share_"})
    if (key.rfind(prefix, 0) == 0) return true;
  return false;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_option_key(const std::string& key) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const OptionKey& k : known_option_keys()) {
    size_t d = edit_distance(key, k.key);
    if (d < best_distance) best_distance = d, best = k.key;
  }
  // Farther than a third of the key away is no longer a misspelling but another word.
  return best_distance <= std::max<size_t>(3, key.size() / 3) ? best : std::string();
}

void check_option_key(const std::string& key) {
  if (!is_host_option_namespace(key)) return;
  for (const char* prefix : {kEphostSessionOptionsFreeDimensionOverridePrefix,
                             kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix}) {
    const std::string p = prefix;
    if (key.rfind(p, 0) != 0) continue;
    if (key.size() == p.size())
      fail(EPHOST_INVALID_ARGUMENT, "session option '{}' names no dimension: write '{}<name>'", key, p);
    return;
  }
  for (const OptionKey& k : known_option_keys())
    if (key == k.key) return;
  const std::string closest = closest_option_key(key);
  fail(EPHOST_INVALID_ARGUMENT, "unknown session option '{}'{}; the host's options are listed in "
       "ephost/ephost_session_options_keys.h",
       key, closest.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", closest));
}

}  // namespace ephost
