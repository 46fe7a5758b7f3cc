#include "discovery/plugin_probe_json.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace ephost {
namespace {

using json = nlohmann::json;

// Bounds that no real plugin comes near: a file claiming more is not trusted.
constexpr size_t kMaxStringBytes = 64 * 1024;
constexpr size_t kMaxListEntries = 4096;

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error(what); }

const json& member(const json& object, const char* key) {
  if (!object.is_object()) bad(fmt::format("expected an object holding '{}'", key));
  auto it = object.find(key);
  if (it == object.end()) bad(fmt::format("missing member '{}'", key));
  return *it;
}

std::string get_string(const json& object, const char* key) {
  const json& v = member(object, key);
  if (!v.is_string()) bad(fmt::format("member '{}' is not a string", key));
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > kMaxStringBytes) bad(fmt::format("member '{}' is longer than {} bytes", key, kMaxStringBytes));
  return s;
}

template <typename Int>
Int get_integer(const json& object, const char* key) {
  const json& v = member(object, key);
  if (!v.is_number_integer()) bad(fmt::format("member '{}' is not an integer", key));
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max())) bad(fmt::format("member '{}' is out of range", key));
    return static_cast<Int>(u);
  }
  const auto i = v.get<int64_t>();
  if (i < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<Int>::max())))
    bad(fmt::format("member '{}' is out of range", key));
  return static_cast<Int>(i);
}

const json& get_array(const json& object, const char* key) {
  const json& v = member(object, key);
  if (!v.is_array()) bad(fmt::format("member '{}' is not an array", key));
  if (v.size() > kMaxListEntries) bad(fmt::format("member '{}' has more than {} entries", key, kMaxListEntries));
  return v;
}

json device_to_json(const ProbedDevice& d) {
  return {{"type", d.type},
          {"vendor", d.vendor},
          {"name", d.name},
          {"driver_version", d.driver_version},
          {"hardware_architecture", d.hardware_architecture},
          {"memory_bytes", d.memory_bytes},
          {"host_memory_usable", d.host_memory_usable},
          {"memory_kinds", d.memory_kinds}};
}

ProbedDevice device_from_json(const json& j) {
  ProbedDevice d;
  d.type = get_string(j, "type");
  d.vendor = get_string(j, "vendor");
  d.name = get_string(j, "name");
  d.driver_version = get_string(j, "driver_version");
  d.hardware_architecture = get_string(j, "hardware_architecture");
  d.memory_bytes = get_integer<uint64_t>(j, "memory_bytes");
  const json& host_memory = member(j, "host_memory_usable");
  if (!host_memory.is_boolean()) bad("member 'host_memory_usable' is not a boolean");
  d.host_memory_usable = host_memory.get<bool>();
  d.memory_kinds = get_integer<uint32_t>(j, "memory_kinds");
  return d;
}

}  // namespace

json probe_result_to_json(const ProbeResult& r) {
  const PluginDescription& d = r.description;
  json devices = json::array();
  for (const ProbedDevice& device : r.devices) devices.push_back(device_to_json(device));
  return {{"outcome", probe_outcome_name(r.outcome)},
          {"stage", r.stage},
          {"reason", r.reason},
          {"abi_version", d.abi_version},
          {"name", d.name},
          {"vendor", d.vendor},
          {"version", d.version},
          {"device_type", d.device_type},
          {"sdk_version", d.sdk_version},
          {"hardware_architecture", d.hardware_architecture},
          {"driver_version", d.driver_version},
          {"context_source_keys", d.context_source_keys},
          {"default_priority", d.default_priority},
          {"devices", std::move(devices)}};
}

ProbeResult probe_result_from_json(const json& j) {
  ProbeResult r;
  const std::string outcome = get_string(j, "outcome");
  if (!parse_probe_outcome(outcome, &r.outcome)) bad(fmt::format("unknown outcome '{}'", outcome));
  r.stage = get_string(j, "stage");
  if (!is_probe_stage(r.stage)) bad(fmt::format("unknown stage '{}'", r.stage));
  r.reason = get_string(j, "reason");
  if (r.outcome == ProbeOutcome::kUsable ? !r.reason.empty() : r.reason.empty())
    bad(fmt::format("outcome '{}' with {} reason", outcome, r.reason.empty() ? "no" : "a"));
  PluginDescription& d = r.description;
  d.abi_version = get_integer<uint32_t>(j, "abi_version");
  d.name = get_string(j, "name");
  d.vendor = get_string(j, "vendor");
  d.version = get_string(j, "version");
  d.device_type = get_string(j, "device_type");
  d.sdk_version = get_string(j, "sdk_version");
  d.hardware_architecture = get_string(j, "hardware_architecture");
  d.driver_version = get_string(j, "driver_version");
  for (const json& key : get_array(j, "context_source_keys")) {
    if (!key.is_string()) bad("a context source key is not a string");
    d.context_source_keys.push_back(key.get<std::string>());
  }
  d.default_priority = get_integer<int32_t>(j, "default_priority");
  for (const json& device : get_array(j, "devices")) r.devices.push_back(device_from_json(device));
  return r;
}

}  // namespace ephost
