// The plugin registry cache: what the scanner found out about each library, so that the next start
// probes only what changed. JSON, written atomically (core/atomic_file.h), by default in
// $XDG_CACHE_HOME/ephost/plugin-registry-<machine>.json. An entry is keyed by the library's canonical
// path, size, modification time, inode and device; the whole file by the host's plugin ABI range, the
// scanner protocol and the ephost version. A library that crashed, exited or hung stays skipped until
// it changes. A corrupt or foreign file is never trusted: it is ignored (logged) and rewritten.
//
// Layout:
//   {"format": "ephost-plugin-registry", "format_version": 2,
//    "host": {"ephost_version": "0.1.0", "plugin_abi": [1, 2], "scanner_protocol": 1, "machine": "x86_64"},
//    "libraries": [{"path": "/abs/libx.so", "size": 1234, "mtime_ns": ..., "inode": ..., "device": ...,
//                   "probe": <probe result (plugin_probe_json.h), devices included>}]}
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "discovery/plugin_probe.h"

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

class RegistryCache {
 public:
  // `file` == "": a cache that remembers nothing and writes nothing.
  explicit RegistryCache(std::string file);

  const std::string& file() const { return file_; }

  // Reads the file. A missing file is an empty cache; a corrupt or foreign one is logged, ignored and
  // rewritten by the next save().
  void load();

  // The cached result for exactly this file, or nullopt.
  std::optional<ProbeResult> find(const LibraryIdentity& id) const;

  // Remembers a result (kScannerFailed results are not remembered: they say nothing about the library).
  void store(const LibraryIdentity& id, const ProbeResult& result);

  // Writes the file atomically when something changed: entries stored here, merged into what the file
  // holds now (another process may have written it meanwhile), without entries whose file changed or
  // vanished. Failures are logged, never thrown: the cache is an optimization.
  void save();

  // Parses registry text. Throws std::runtime_error saying what is wrong ("foreign: ..." for a valid
  // registry of another host). Exposed for tests and the fuzzer.
  static std::map<std::string, std::pair<LibraryIdentity, ProbeResult>> parse(const std::string& text);
  static std::string serialize(const std::map<std::string, std::pair<LibraryIdentity, ProbeResult>>& entries);

 private:
  std::string file_;
  std::map<std::string, std::pair<LibraryIdentity, ProbeResult>> entries_;  // by canonical path
  std::map<std::string, std::pair<LibraryIdentity, ProbeResult>> stored_;   // what this process added
  bool rewrite_ = false;  // the file on disk is corrupt or foreign
};

}  // namespace ephost
