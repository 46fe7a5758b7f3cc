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

// The description's members, added to `out`.
void add_description(const PluginDescription& d, json& out) {
  out["abi_version"] = d.abi_version;
  out["name"] = d.name;
  out["vendor"] = d.vendor;
  out["version"] = d.version;
  out["device_type"] = d.device_type;
  out["sdk_version"] = d.sdk_version;
  out["hardware_architecture"] = d.hardware_architecture;
  out["driver_version"] = d.driver_version;
  out["context_source_keys"] = d.context_source_keys;
  out["default_priority"] = d.default_priority;
  if (!d.unsupported_devices.empty()) out["unsupported_devices"] = d.unsupported_devices;
}

PluginDescription description_from_json(const json& j) {
  PluginDescription d;
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
  // Optional: written only when a factory explained a device it cannot use (older caches lack it).
  if (j.is_object() && j.contains("unsupported_devices")) {
    for (const json& line : get_array(j, "unsupported_devices")) {
      if (!line.is_string()) bad("an unsupported device is not a string");
      d.unsupported_devices.push_back(line.get<std::string>());
    }
  }
  return d;
}

json devices_to_json(const std::vector<ProbedDevice>& devices) {
  json out = json::array();
  for (const ProbedDevice& device : devices) out.push_back(device_to_json(device));
  return out;
}

std::vector<ProbedDevice> devices_from_json(const json& j) {
  std::vector<ProbedDevice> devices;
  for (const json& device : get_array(j, "devices")) devices.push_back(device_from_json(device));
  return devices;
}

}  // namespace

json probe_result_to_json(const ProbeResult& r) {
  json out = {{"outcome", probe_outcome_name(r.outcome)}, {"stage", r.stage}, {"reason", r.reason}};
  add_description(r.description, out);
  out["devices"] = devices_to_json(r.devices);
  // The library's further providers (an ONNX Runtime plugin EP's factories after the first), keyed by
  // their place in the library (file, factory).
  json siblings = json::array();
  for (size_t i = 0; i < r.siblings.size(); ++i) {
    json sibling = {{"factory", i + 1}};
    add_description(r.siblings[i].description, sibling);
    sibling["devices"] = devices_to_json(r.siblings[i].devices);
    siblings.push_back(std::move(sibling));
  }
  out["siblings"] = std::move(siblings);
  return out;
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
  r.description = description_from_json(j);
  r.devices = devices_from_json(j);
  const json& siblings = get_array(j, "siblings");
  if (!siblings.empty() && r.outcome != ProbeOutcome::kUsable) bad(fmt::format("outcome '{}' with siblings", outcome));
  for (const json& sibling : siblings) {
    if (get_integer<size_t>(sibling, "factory") != r.siblings.size() + 1)
      bad("siblings out of their library's factory order");
    r.siblings.push_back(ProbedProvider{description_from_json(sibling), devices_from_json(sibling)});
  }
  return r;
}

}  // namespace ephost
