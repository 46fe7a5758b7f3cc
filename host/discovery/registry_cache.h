// The plugin registry cache: what the scanner found out about each library, so that the next start
// probes only what changed. JSON, written atomically (core/atomic_file.h), by default in
// $XDG_CACHE_HOME/ephost/plugin-registry-<machine>.json. An entry is keyed by the library's canonical
// path, size, modification time, inode and device; the whole file by the host's plugin ABI range, the
// scanner protocol and the ephost version. A corrupt or foreign file is never trusted: it is ignored
// (logged) and rewritten.
//
// How long a verdict holds (verdict_freshness.h): a library that crashed or exited while probed keeps
// its verdict until the file changes. A usable library, a refusal or a timeout may owe its verdict to
// something outside the file (an environment variable, a driver not ready yet, the ICD loader's vendor
// folder that decides which devices a usable plugin lists), so it records its context (probe_context.h:
// a hash per environment variable, the host version, the accelerator device nodes) and is probed again
// when that context changed. A refusal or a timeout is also probed again once it is older than its
// backoff (15 min, doubling with each probe that gave the same verdict again, at most 24 h).
//
// Layout (format_version 5; older files are foreign: ignored and rewritten):
//   {"format": "ephost-plugin-registry", "format_version": 5,
//    "host": {"ephost_version": "0.1.0", "plugin_abi": [1, 3], "scanner_protocol": 3, "machine": "x86_64"},
//    "libraries": [{"path": "/abs/libx.so", "size": 1234, "mtime_ns": ..., "inode": ..., "device": ...,
//                   "probed_at": <unix seconds>,
//                   "probe": <probe result (plugin_probe_json.h), devices included; a library with
//                             several providers (an ONNX Runtime plugin EP's factories) lists the others
//                             as "siblings": [{"factory": 1, <description>, "devices": [...]}, ...]>,
//                   // refused and timed_out only:
//                   "repeats": <earlier consecutive probes that gave the same verdict>,
//                   // usable, refused and timed_out:
//                   "context": {"host_version": "0.1.0", "devices": "<fnv1a64 hex>",
//                               "environment": {"NAME": "<fnv1a64 hex of the value>", ...}}}]}
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "discovery/plugin_probe.h"
#include "discovery/probe_context.h"

namespace ephost {

// Environment variable naming the registry file ("" disables the cache).
inline constexpr const char* kRegistryFileEnv = "EPHOST_PLUGIN_REGISTRY";

// $EPHOST_PLUGIN_REGISTRY when set; else $XDG_CACHE_HOME/ephost/plugin-registry-<machine>.json
// (XDG_CACHE_HOME defaulting to $HOME/.cache); "" when none of them is usable.
std::string default_registry_file();

// What makes a library file the same file as last time.
struct LibraryIdentity {
  std::string path;  // canonical
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  bool operator==(const LibraryIdentity& o) const {
    return path == o.path && size == o.size && mtime_ns == o.mtime_ns && inode == o.inode && device == o.device;
  }
};

// The identity of the file at `canonical_path` (stat follows symlinks); nullopt when it cannot be
// stat'ed.
std::optional<LibraryIdentity> identify_library(const std::string& canonical_path);

// One library's remembered probe.
struct RegistryEntry {
  LibraryIdentity identity;
  ProbeResult result;
  int64_t probed_at = 0;  // unix seconds
  // Refused and timed out only (verdict_ages_out): the earlier consecutive probes of this file that gave
  // the same verdict (the backoff's exponent).
  uint32_t repeats = 0;
  // Usable, refused and timed out only (verdict_depends_on_context): what the verdict depended on.
  ProbeContext context;
};

// True for the verdicts that record their context and are probed again when it changed: kUsable (its
// device list depends on the environment), kRefused, kTimedOut.
bool verdict_depends_on_context(ProbeOutcome outcome);
// True for the verdicts that also age out with a backoff: kRefused, kTimedOut.
bool verdict_ages_out(ProbeOutcome outcome);

class RegistryCache {
 public:
  // `file` == "": a cache that remembers nothing and writes nothing.
  explicit RegistryCache(std::string file);

  const std::string& file() const { return file_; }

  // Reads the file. A missing file is an empty cache; a corrupt or foreign one is logged, ignored and
  // rewritten by the next save().
  void load();

  // The cached entry for exactly this file (whatever its age or context: verdict_freshness.h judges
  // that), or nullopt.
  std::optional<RegistryEntry> find(const LibraryIdentity& id) const;

  // Remembers a result probed at `probed_at` (unix seconds) under `context` (kept for usable
  // verdicts, refusals and timeouts). `repeats` counts on from the entry it replaces when that was the same file with the
  // same verdict (outcome, stage and reason), and starts at 0 otherwise. kScannerFailed results are not
  // remembered: they say nothing about the library.
  void store(const LibraryIdentity& id, const ProbeResult& result, const ProbeContext& context, int64_t probed_at);

  // Writes the file atomically when something changed: entries stored here, merged into what the file
  // holds now (another process may have written it meanwhile), without entries whose file changed or
  // vanished. Failures are logged, never thrown: the cache is an optimization.
  void save();

  // Parses registry text. Throws std::runtime_error saying what is wrong ("foreign: ..." for a valid
  // registry of another host). Exposed for tests and the fuzzer.
  using Entries = std::map<std::string, RegistryEntry>;  // by canonical path
  static Entries parse(const std::string& text);
  static std::string serialize(const Entries& entries);

 private:
  std::string file_;
  Entries entries_;
  Entries stored_;  // what this process added
  bool rewrite_ = false;  // the file on disk is corrupt or foreign
};

}  // namespace ephost
