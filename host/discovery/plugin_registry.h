// The plugin registry: every library the host considered (loaded or skipped, and why), and the loaded
// plugins in registration-priority order. A library that is not a usable plugin is skipped with a
// logged, recorded reason; nothing here stops discovery or crashes on a bad library.
//
// Trust: a candidate is first probed in the plugin scanner's child process (plugin_scanner.h), or
// taken from the registry cache when the same file was probed before (registry_cache.h); only a library
// that probed cleanly is loaded in process. A library that crashed, aborted, exited or hung while probed
// is skipped with that reason. ScanSettings::in_process (EPHOST_PLUGIN_SCAN=inprocess) probes in process
// instead, as does a host with no scanner installed (logged). A cached verdict is used only while it
// holds (verdict_freshness.h: refusals and timeouts are probed again when the environment, the host
// version or the device list changed, and after their backoff); ScanSettings::rescan probes everything
// again. The record says where its verdict came from (probed_by), when it was probed (probed_at) and,
// when the cache had one that no longer held, why it was probed again (reprobe_reason).
//
// Lazy loading (GStreamer's registry does the same): when a probe outside the process answers for a
// library (the registry cache, for the same path, size, mtime, inode, device, host ABI; or the scanner
// on a cold start) and says "usable", scan_directories admits it from what the probe found and does
// not load it: a start dlopens nothing but the built-in plugin. The library is loaded the first time
// its code is needed in process, through ensure_loaded(): creating an in-process provider
// (create_providers, the selection policies' dry run, `ephost inspect`'s context_judge), a device that
// is used (device tensors, bound outputs). A provider that runs isolated (isolation/) never loads it
// here: its provider host does. Reading the report, the device list, names, priorities and source keys
// needs no load: the records carry what the probe found.
//   At that load the file's identity is checked again. A file that changed since the env was created is
//   never dlopened on the strength of the old probe: it is probed again in the scanner's child process
//   (and the registry cache updated). Only a clean probe that still names the same plugin with the same
//   ABI is then loaded; anything else (gone, crashed, refused, renamed, a dlopen/negotiate/describe that
//   now fails or disagrees with the record) drops the plugin out: its record says why (skip_reason(),
//   logged as a warning), and sessions go on without it. It stays out for the life of the registry.
//   Explicit load_library() and in-process probing load eagerly: the first asks for the load, the
//   second has no probe to trust.
//
// Thread-safety: every member function may be called from several threads (sessions being created);
// mutations are serialized. Records never move once added. records() returns the live list: read it
// while no other thread adds to the registry, or use snapshot(), report_json() or
// loaded_by_priority(), which copy under the lock. Lazy loads are serialized by their own lock
// (load_mutex_), so that two sessions wanting the same plugin load it once and a slow load (dlopen, a
// re-probe in the scanner) does not block readers of the record list. A record's function tables
// (plugin, host_api, devices) may be read only after ensure_loaded() returned true for it.
//
// Lifetime: a record loaded in process keeps its library loaded and its host table alive until the
// registry is destroyed; every provider created from a plugin must be released before that.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "discovery/plugin_record.h"
#include "discovery/registry_cache.h"
#include "discovery/scan_settings.h"
#include "discovery/search_path.h"
#include "ephost/ephost_plugin.h"

namespace ephost {

class PluginRegistry {
 public:
  explicit PluginRegistry(ScanSettings settings = scan_settings_from_environment());
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // Negotiates with a plugin linked into the host (the CPU plugin), recorded with path "<built-in>"
  // and builtin = true.
  void add_builtin(EphostPluginNegotiateFn entry);

  const ScanSettings& scan_settings() const { return settings_; }

  // Scans each directory (not recursive; files sorted by name) for candidate files (*.so on Linux,
  // *.dll on Windows; other files are ignored without a record), loading each. A directory that does
  // not exist is skipped (logged at info level). The candidates of all directories are probed in one
  // scanner run.
  void scan_directories(const std::vector<std::string>& dirs);

  // Loads one library explicitly (probed like a discovered one) and in process, even when the registry
  // cache knows it: the caller asked for the load. Returns its record, added to the report whether or
  // not it loaded.
  const PluginRecord& load_library(const std::string& path);

  // Makes sure a usable record of this registry is loaded in process (lazy loading, above): true when
  // it is (record.plugin, host_api and devices may be used from then on), false when it is not usable
  // or dropped out now (record.skip_reason() says why; logged). Thread-safe; a record is loaded at
  // most once. Call it before anything touches a record's function tables.
  bool ensure_loaded(const PluginRecord& record) const;

  // Every record, in discovery order. See the thread-safety note above.
  const std::vector<std::unique_ptr<PluginRecord>>& records() const;

  // Every record, in discovery order, copied under the lock: safe while other threads load libraries.
  std::vector<const PluginRecord*> snapshot() const;

  // The usable plugin called `name` (loaded in process or not yet: see ensure_loaded), or nullptr.
  const PluginRecord* find_loaded(const std::string& name) const;

  // Usable plugins (loaded in process or not yet) in default registration-priority order: higher default_priority first, ties by
  // discovery order; built-in plugins always last.
  std::vector<const PluginRecord*> loaded_by_priority() const;

  // The discovery report: see discovery_report_json (report_json.h).
  std::string report_json() const;

 private:
  struct Candidate;
  // Probes (scanner or registry cache) and then loads `paths` in order; one record each. With `defer`,
  // a library the registry cache answered for as usable is admitted without loading it.
  std::vector<const PluginRecord*> load_libraries(const std::vector<std::string>& paths, bool defer);
  // Fills each candidate's probe result from the registry cache or the scanner; leaves it empty when
  // the library is to be probed in process.
  void probe(std::vector<Candidate>& candidates) const;
  // Loads a library that probed cleanly (or is probed in process) and admits it; an ONNX Runtime plugin
  // EP library's further factories become `siblings` (one record each, to be finished by the caller).
  // Throws PluginSkipped. Caller holds mutex_.
  void load_in_process(PluginRecord& record, std::vector<std::unique_ptr<PluginRecord>>& siblings) const;
  // Negotiates, describes and checks the name of a plugin whose entry point is known. Throws
  // PluginSkipped. Caller holds mutex_.
  void admit(EphostPluginNegotiateFn entry, PluginRecord& record) const;
  // Marks the record loaded or skipped (unloading it), logs, and appends it. Caller holds mutex_.
  // `deferred`: usable and admitted from the registry cache without loading it (lazy loading).
  PluginRecord& finish(std::unique_ptr<PluginRecord> record, const std::string& skip_reason, bool deferred);
  // The lazy load of a deferred record: checks the file again (re-probing it in the scanner when it
  // changed), loads it and checks that it agrees with the record. The deferred records of the same file
  // (an ONNX Runtime plugin EP library's other factories) are filled from the same load, or dropped when
  // the library no longer serves them. Throws PluginSkipped. Caller holds load_mutex_.
  void load_deferred(PluginRecord& record) const;
  // Gives a deferred sibling of a record just loaded its handles from `fresh` (the same load), or drops it
  // when the load has no provider of its name. Caller holds load_mutex_.
  void fill_deferred_sibling(PluginRecord& sibling, std::vector<std::unique_ptr<PluginRecord>>& fresh) const;
  const PluginRecord* find_loaded_locked(const std::string& name) const;
  const PluginRecord* find_loaded_file_locked(const std::string& canonical_path) const;

  const ScanSettings settings_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<PluginRecord>> records_;
  // Serializes lazy loads (ensure_loaded). Taken before mutex_ when both are held, never after.
  mutable std::mutex load_mutex_;
  // The file identity each deferred record was admitted with (what its cached probe is valid for);
  // guarded by load_mutex_. An entry is removed when its record is loaded or dropped.
  mutable std::map<const PluginRecord*, LibraryIdentity> deferred_;
};

}  // namespace ephost
