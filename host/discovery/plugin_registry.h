// The plugin registry: every library the host considered (loaded or skipped, and why), and the loaded
// plugins in registration-priority order. A library that is not a usable plugin is skipped with a
// logged, recorded reason; nothing here stops discovery or crashes on a bad library.
//
// Trust: a candidate is first probed in the plugin scanner's child process (plugin_scanner.h), or
// taken from the registry cache when the same file was probed before (registry_cache.h); only a library
// that probed cleanly is loaded in process. A library that crashed, aborted, exited or hung while probed
// is skipped with that reason. ScanSettings::in_process (EPHOST_PLUGIN_SCAN=inprocess) probes in process
// instead, as does a host with no scanner installed (logged).
//
// Thread-safety: every member function may be called from several threads (sessions being created);
// mutations are serialized. Records never move once added. records() returns the live list: read it
// while no other thread adds to the registry, or use snapshot(), report_json() or
// loaded_by_priority(), which copy under the lock.
//
// Lifetime: a loaded record keeps its library loaded and its host table alive until the registry is
// destroyed; every provider created from a plugin must be released before that.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "discovery/plugin_record.h"
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

  // Loads one library explicitly (probed like a discovered one). Returns its record, added to the
  // report whether or not it loaded.
  const PluginRecord& load_library(const std::string& path);

  // Every record, in discovery order. See the thread-safety note above.
  const std::vector<std::unique_ptr<PluginRecord>>& records() const;

  // Every record, in discovery order, copied under the lock: safe while other threads load libraries.
  std::vector<const PluginRecord*> snapshot() const;

  // The loaded plugin called `name`, or nullptr.
  const PluginRecord* find_loaded(const std::string& name) const;

  // Loaded plugins in default registration-priority order: higher default_priority first, ties by
  // discovery order; built-in plugins always last.
  std::vector<const PluginRecord*> loaded_by_priority() const;

  // The discovery report: see discovery_report_json (report_json.h).
  std::string report_json() const;

 private:
  struct Candidate;
  // Probes (scanner or registry cache) and then loads `paths` in order; one record each.
  std::vector<const PluginRecord*> load_libraries(const std::vector<std::string>& paths);
  // Fills each candidate's probe result from the registry cache or the scanner; leaves it empty when
  // the library is to be probed in process.
  void probe(std::vector<Candidate>& candidates) const;
  // Loads a library that probed cleanly (or is probed in process) and admits it. Throws PluginSkipped.
  // Caller holds mutex_.
  void load_in_process(PluginRecord& record) const;
  // Negotiates, describes and checks the name of a plugin whose entry point is known. Throws
  // PluginSkipped. Caller holds mutex_.
  void admit(EphostPluginNegotiateFn entry, PluginRecord& record) const;
  // Marks the record loaded or skipped (unloading it), logs, and appends it. Caller holds mutex_.
  PluginRecord& finish(std::unique_ptr<PluginRecord> record, const std::string& skip_reason);
  const PluginRecord* find_loaded_locked(const std::string& name) const;
  const PluginRecord* find_loaded_file_locked(const std::string& canonical_path) const;

  const ScanSettings settings_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<PluginRecord>> records_;
};

}  // namespace ephost
