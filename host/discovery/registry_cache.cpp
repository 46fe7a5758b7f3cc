#include "discovery/registry_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_probe_json.h"
#include "discovery/plugin_scanner.h"
#include "ephost/ephost_plugin.h"

#ifndef EPHOST_VERSION
#define EPHOST_VERSION "unknown"
#endif

namespace ephost {
namespace {

using json = nlohmann::json;
using Entries = RegistryCache::Entries;

constexpr const char* kFormat = "ephost-plugin-registry";
// 2: devices carry host_memory_usable and memory_kinds (what the device list shows of a plugin that is
// not loaded in process yet).
// 3: every entry says when it was probed (probed_at); refusals and timeouts record their context
// (probe_context.h) and how often the same verdict came again (repeats), so that they are probed again
// when their cause may have gone (verdict_freshness.h). An older file is foreign: ignored and rewritten.
// 4: usable verdicts record their context too: the devices a usable plugin lists depend on the
// environment (an OpenCL plugin probed under an empty OCL_ICD_VENDORS folder lists none).
// 5: a usable verdict lists the library's further providers, keyed (file, factory): an ONNX Runtime
// plugin EP library is one provider per factory. A format 4 file knew one provider per file: re-probed.
constexpr int kFormatVersion = 5;
constexpr size_t kMaxFileBytes = 64u << 20;
constexpr size_t kMaxEntries = 100000;
constexpr int kMaxNesting = 16;
// Bounds of a recorded context that no real environment comes near.
constexpr size_t kMaxVariables = 4096;
constexpr size_t kMaxVariableNameBytes = 4096;
constexpr size_t kMaxVersionBytes = 256;
// repeats beyond this change nothing (the backoff is capped long before); a file saying more is not trusted.
constexpr uint32_t kMaxRepeats = 64;

const char* machine_name() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__i386__)
  return "i386";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
  return "ppc64le";
#elif defined(__s390x__)
  return "s390x";
#else
  return "unknown";
#endif
}

// Everything about this host that decides a probe's result besides the library itself.
json host_key() {
  return {{"ephost_version", EPHOST_VERSION},
          {"plugin_abi", {EPHOST_PLUGIN_ABI_MIN_VERSION, EPHOST_PLUGIN_ABI_VERSION}},
          {"scanner_protocol", kScannerProtocolVersion},
          {"machine", machine_name()}};
}

// Serializes access to the file by the Envs of this process (other processes: atomic renames).
std::mutex& file_mutex() {
  static std::mutex m;
  return m;
}

[[noreturn]] void corrupt(const std::string& what) { throw std::runtime_error(what); }

// Deeper nesting than a registry ever has is refused before parsing (the parser and the value's
// destructor recurse).
void check_nesting(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) corrupt(fmt::format("nested deeper than {} levels", kMaxNesting));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

template <typename Int>
Int integer_member(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_number_integer()) corrupt(fmt::format("library entry without an integer '{}'", key));
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max()))
      corrupt(fmt::format("library entry with an out-of-range '{}'", key));
    return static_cast<Int>(u);
  }
  const int64_t i = it->get<int64_t>();
  if (i < 0 && std::is_unsigned<Int>::value) corrupt(fmt::format("library entry with a negative '{}'", key));
  if (i < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<Int>::max())))
    corrupt(fmt::format("library entry with an out-of-range '{}'", key));
  return static_cast<Int>(i);
}

json context_to_json(const ProbeContext& c) {
  json environment = json::object();
  for (const auto& [name, hash] : c.environment) environment[name] = hash;
  return {{"host_version", c.host_version}, {"devices", c.devices}, {"environment", std::move(environment)}};
}

ProbeContext context_from_json(const json& j, const std::string& path) {
  if (!j.is_object() || j.size() != 3)
    corrupt(fmt::format("library entry '{}': 'context' is not an object of host_version, devices and environment",
                        path));
  ProbeContext c;
  auto version = j.find("host_version");
  if (version == j.end() || !version->is_string() || version->get_ref<const std::string&>().size() > kMaxVersionBytes)
    corrupt(fmt::format("library entry '{}': context without a host_version string", path));
  c.host_version = version->get<std::string>();
  auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_string() || !is_fnv1a64_hex(devices->get<std::string>()))
    corrupt(fmt::format("library entry '{}': context without a 'devices' hash (16 hex digits)", path));
  c.devices = devices->get<std::string>();
  auto environment = j.find("environment");
  if (environment == j.end() || !environment->is_object())
    corrupt(fmt::format("library entry '{}': context without an 'environment' object", path));
  if (environment->size() > kMaxVariables)
    corrupt(fmt::format("library entry '{}': more than {} environment variables", path, kMaxVariables));
  for (const auto& [name, hash] : environment->items()) {
    if (name.empty() || name.size() > kMaxVariableNameBytes || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos)
      corrupt(fmt::format("library entry '{}': an environment variable name that is empty, too long or holds '='",
                          path));
    if (!hash.is_string() || !is_fnv1a64_hex(hash.get<std::string>()))
      corrupt(fmt::format("library entry '{}': variable '{}' without a value hash (16 hex digits)", path, name));
    c.environment.emplace(name, hash.get<std::string>());
  }
  return c;
}

RegistryEntry entry_from_json(const json& e) {
  if (!e.is_object()) corrupt("a library entry that is not an object");
  RegistryEntry entry;
  LibraryIdentity& id = entry.identity;
  auto path = e.find("path");
  if (path == e.end() || !path->is_string()) corrupt("a library entry without a path");
  id.path = path->get<std::string>();
  if (id.path.empty() || id.path[0] != '/') corrupt(fmt::format("library path '{}' is not absolute", id.path));
  id.size = integer_member<uint64_t>(e, "size");
  id.mtime_ns = integer_member<int64_t>(e, "mtime_ns");
  id.inode = integer_member<uint64_t>(e, "inode");
  id.device = integer_member<uint64_t>(e, "device");
  entry.probed_at = integer_member<int64_t>(e, "probed_at");
  auto probe = e.find("probe");
  if (probe == e.end()) corrupt(fmt::format("library entry '{}' without a probe result", id.path));
  try {
    entry.result = probe_result_from_json(*probe);
  } catch (const std::exception& ex) {
    corrupt(fmt::format("library entry '{}': {}", id.path, ex.what()));
  }
  if (entry.result.outcome == ProbeOutcome::kScannerFailed)
    corrupt(fmt::format("library entry '{}' records a scanner failure", id.path));
  // Exactly the members serialize writes: a context where none belongs, or none where one does, is
  // not something this host wrote.
  const bool contextual = verdict_depends_on_context(entry.result.outcome);
  const bool ages = verdict_ages_out(entry.result.outcome);
  const size_t members = 7 + (contextual ? 1 : 0) + (ages ? 1 : 0);
  if (e.size() != members)
    corrupt(fmt::format("library entry '{}' ({} verdict) has {} members, not {}", id.path,
                        probe_outcome_name(entry.result.outcome), e.size(), members));
  if (ages) {
    entry.repeats = integer_member<uint32_t>(e, "repeats");
    if (entry.repeats > kMaxRepeats)
      corrupt(fmt::format("library entry '{}': more than {} repeats", id.path, kMaxRepeats));
  }
  if (contextual) {
    auto context = e.find("context");
    if (context == e.end()) corrupt(fmt::format("library entry '{}' without a context", id.path));
    entry.context = context_from_json(*context, id.path);
  }
  return entry;
}

std::string read_registry_text(const std::string& file, bool* exists) {
  std::error_code ec;
  *exists = std::filesystem::exists(file, ec);
  if (!*exists) return {};
  if (!std::filesystem::is_regular_file(file, ec)) corrupt("not a regular file");
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) corrupt("cannot read its size: " + ec.message());
  if (size > kMaxFileBytes) corrupt(fmt::format("{} bytes, more than a registry ever holds", size));
  return read_whole_file(file, "plugin registry");
}

}  // namespace

std::string default_registry_file() {
  if (const char* env = std::getenv(kRegistryFileEnv)) return env;
  const std::string file = fmt::format("plugin-registry-{}.json", machine_name());
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return (std::filesystem::path(xdg) / "ephost" / file).string();
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return (std::filesystem::path(home) / ".cache" / "ephost" / file).string();
  return {};
}

std::optional<LibraryIdentity> identify_library(const std::string& canonical_path) {
  struct stat st {};
  if (canonical_path.empty() || ::stat(canonical_path.c_str(), &st) != 0) return std::nullopt;
  LibraryIdentity id;
  id.path = canonical_path;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.device = static_cast<uint64_t>(st.st_dev);
  return id;
}

RegistryCache::RegistryCache(std::string file) : file_(std::move(file)) {}

Entries RegistryCache::parse(const std::string& text) {
  check_nesting(text);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    corrupt(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) corrupt("not a JSON object");
  auto format = j.find("format");
  if (format == j.end() || *format != kFormat) corrupt("foreign: not an ephost plugin registry");
  auto version = j.find("format_version");
  if (version == j.end() || *version != kFormatVersion)
    corrupt(fmt::format("foreign: format version {} (this host writes {})",
                        version == j.end() ? std::string("none") : version->dump(), kFormatVersion));
  auto host = j.find("host");
  if (host == j.end() || *host != host_key())
    corrupt(fmt::format("foreign: written for {} (this host is {})", host == j.end() ? "?" : host->dump(),
                        host_key().dump()));
  auto libraries = j.find("libraries");
  if (libraries == j.end() || !libraries->is_array()) corrupt("no 'libraries' array");
  if (libraries->size() > kMaxEntries) corrupt(fmt::format("more than {} libraries", kMaxEntries));
  Entries entries;
  for (const json& e : *libraries) {
    RegistryEntry entry = entry_from_json(e);
    const std::string path = entry.identity.path;
    if (!entries.emplace(path, std::move(entry)).second) corrupt(fmt::format("library '{}' listed twice", path));
  }
  return entries;
}

std::string RegistryCache::serialize(const Entries& entries) {
  json libraries = json::array();
  for (const auto& [path, entry] : entries) {
    const LibraryIdentity& id = entry.identity;
    json e = {{"path", id.path},
              {"size", id.size},
              {"mtime_ns", id.mtime_ns},
              {"inode", id.inode},
              {"device", id.device},
              {"probed_at", entry.probed_at},
              {"probe", probe_result_to_json(entry.result)}};
    if (verdict_ages_out(entry.result.outcome)) e["repeats"] = entry.repeats;
    if (verdict_depends_on_context(entry.result.outcome)) e["context"] = context_to_json(entry.context);
    libraries.push_back(std::move(e));
  }
  json j = {{"format", kFormat}, {"format_version", kFormatVersion}, {"host", host_key()}, {"libraries", libraries}};
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

void RegistryCache::load() {
  if (file_.empty()) return;
  std::lock_guard<std::mutex> lock(file_mutex());
  try {
    bool exists = false;
    const std::string text = read_registry_text(file_, &exists);
    if (exists) entries_ = parse(text);
  } catch (const std::exception& e) {
    const std::string why = e.what();
    const bool foreign = why.rfind("foreign: ", 0) == 0;
    const std::string message = fmt::format("plugin registry {} is {}: ignored, every library is probed again and "
                                            "the file rewritten",
                                            file_, foreign ? why.substr(9) : "corrupt (" + why + ")");
    if (foreign) log_info(message);
    else log_warning(message);
    entries_.clear();
    rewrite_ = true;
  }
}

bool verdict_depends_on_context(ProbeOutcome outcome) {
  return outcome == ProbeOutcome::kUsable || verdict_ages_out(outcome);
}

bool verdict_ages_out(ProbeOutcome outcome) {
  return outcome == ProbeOutcome::kRefused || outcome == ProbeOutcome::kTimedOut;
}

std::optional<RegistryEntry> RegistryCache::find(const LibraryIdentity& id) const {
  auto it = entries_.find(id.path);
  if (it == entries_.end() || !(it->second.identity == id)) return std::nullopt;
  return it->second;
}

void RegistryCache::store(const LibraryIdentity& id, const ProbeResult& result, const ProbeContext& context,
                          int64_t probed_at) {
  if (result.outcome == ProbeOutcome::kScannerFailed) return;
  RegistryEntry entry;
  entry.identity = id;
  entry.result = result;
  entry.probed_at = probed_at;
  if (verdict_depends_on_context(result.outcome)) entry.context = context;
  if (verdict_ages_out(result.outcome)) {
    auto previous = entries_.find(id.path);
    if (previous != entries_.end() && previous->second.identity == id &&
        previous->second.result.outcome == result.outcome && previous->second.result.stage == result.stage &&
        previous->second.result.reason == result.reason)
      entry.repeats = std::min(previous->second.repeats + 1, kMaxRepeats);
  }
  entries_[id.path] = entry;
  stored_[id.path] = std::move(entry);
}

void RegistryCache::save() {
  if (file_.empty() || (stored_.empty() && !rewrite_)) return;
  std::lock_guard<std::mutex> lock(file_mutex());
  try {
    Entries merged;
    try {
      bool exists = false;
      const std::string text = read_registry_text(file_, &exists);
      if (exists) merged = parse(text);
    } catch (const std::exception&) {
      // Corrupt or foreign (already logged by load, or written since by someone else): replaced.
    }
    for (const auto& [path, entry] : stored_) merged[path] = entry;
    for (auto it = merged.begin(); it != merged.end();) {
      const auto now = identify_library(it->first);
      it = now && *now == it->second.identity ? std::next(it) : merged.erase(it);
    }
    const std::string text = serialize(merged);
    write_file_atomically(file_, text.data(), text.size(), /*overwrite=*/true);
    stored_.clear();
    rewrite_ = false;
  } catch (const std::exception& e) {
    log_warning(fmt::format("cannot write the plugin registry {}: {} (libraries will be probed again next time)",
                            file_, e.what()));
  }
}

}  // namespace ephost
