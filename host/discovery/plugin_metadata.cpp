#include "discovery/plugin_metadata.h"

#include <fmt/format.h>

#include <regex>

#include "discovery/plugin_call.h"

namespace ephost {
namespace {

// More context keys than this is a plugin reporting garbage, not a real list.
constexpr size_t kMaxContextSourceKeys = 1024;

std::string copy_string(const char* s) { return s ? std::string(s) : std::string(); }

void copy_metadata(const EphostPluginInfo& info, PluginRecord& record) {
  record.name = copy_string(info.name);
  record.vendor = copy_string(info.vendor);
  record.version = copy_string(info.version);
  record.device_type = device_type_name(info.device_type);
  record.sdk_version = copy_string(info.sdk_version);
  record.hardware_architecture = copy_string(info.hardware_architecture);
  record.driver_version = copy_string(info.driver_version);
  record.default_priority = info.default_priority;
  if (info.num_context_source_keys > kMaxContextSourceKeys)
    throw PluginSkipped(fmt::format("invalid metadata: {} context source keys (at most {})",
                                    info.num_context_source_keys, kMaxContextSourceKeys));
  if (info.num_context_source_keys > 0 && info.context_source_keys == nullptr)
    throw PluginSkipped(fmt::format("invalid metadata: num_context_source_keys is {} but context_source_keys is NULL",
                                    info.num_context_source_keys));
  for (size_t i = 0; i < info.num_context_source_keys; ++i) {
    const char* key = info.context_source_keys[i];
    if (key == nullptr || *key == '\0')
      throw PluginSkipped(fmt::format("invalid metadata: context source key {} is empty", i));
    record.context_source_keys.emplace_back(key);
  }
}

void validate_metadata(const EphostPluginInfo& info, const PluginRecord& record) {
  if (record.name.empty()) throw PluginSkipped("invalid metadata: empty name");
  if (!is_valid_plugin_name(record.name))
    throw PluginSkipped(
        fmt::format("invalid metadata: name '{}' has characters outside [A-Za-z0-9_.-]", record.name));
  if (!is_semver(record.version))
    throw PluginSkipped(fmt::format("invalid metadata: version '{}' is not semver MAJOR.MINOR.PATCH", record.version));
  if (record.device_type.empty())
    throw PluginSkipped(
        fmt::format("invalid metadata: device_type {} is not cpu (0), gpu (1) or npu (2)", info.device_type));
}

}  // namespace

bool is_valid_plugin_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_semver(const std::string& version) {
  // The regular expression suggested by semver.org, without named groups.
  static const std::regex pattern(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))"
      R"((?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?)"
      R"((?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$)");
  return std::regex_match(version, pattern);
}

void describe_plugin(PluginRecord& record) {
  EphostPluginInfo info{};
  info.struct_size = sizeof(EphostPluginInfo);
  EphostStatus* status = call_plugin("describe", [&] { return record.plugin->describe(&info); });
  if (status != nullptr) throw PluginSkipped("describe failed: " + take_status_text(*record.host_api, status));
  copy_metadata(info, record);
  validate_metadata(info, record);
}

}  // namespace ephost
