#include "discovery/plugin_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "core/device.h"
#include "core/log.h"
#include "core/plugin_fault.h"
#include "discovery/device_enumeration.h"
#include "discovery/elf_probe.h"
#include "discovery/negotiation.h"
#include "discovery/ort_adoption.h"
#include "discovery/plugin_call.h"
#include "discovery/plugin_library.h"
#include "discovery/plugin_metadata.h"
#include "discovery/plugin_probe.h"
#include "discovery/plugin_scanner.h"
#include "discovery/probe_context.h"
#include "discovery/registry_cache.h"
#include "discovery/report_json.h"
#include "discovery/verdict_freshness.h"

namespace ephost {
namespace {

std::string canonical_or_empty(const std::string& path) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  return ec ? std::string() : canonical.string();
}

// Runs `load`, which throws PluginSkipped (or anything else, by mistake) to skip; returns the reason,
// "" when it loaded.
template <typename Fn>
std::string skip_reason_of(Fn&& load) {
  try {
    load();
    return {};
  } catch (const PluginSkipped& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("internal error while loading: ") + e.what();
  } catch (...) {
    return "internal error while loading: unknown exception";
  }
}

// Moves what a load made (the handles) from a scratch record into the record the registry publishes.
void take_handles(PluginRecord& fresh, PluginRecord& record) {
  record.plugin = fresh.plugin;
  record.host_api = fresh.host_api;
  record.devices = std::move(fresh.devices);
  record.library = std::move(fresh.library);
  record.ort = std::move(fresh.ort);
  record.ort_factory = fresh.ort_factory;
}

}  // namespace

struct PluginRegistry::Candidate {
  std::string path;
  std::string canonical;
  std::string skip;  // skipped before any probe (already loaded, not a loadable ELF file)
  std::optional<ProbeResult> probe;
  const char* probed_by = "in process";
  std::optional<LibraryIdentity> identity;  // the file's identity when probed (registry or scanner)
  int64_t probed_at = 0;                    // when the verdict was probed (unix seconds)
  std::string reprobe_reason;               // why a verdict the cache had for this file was not used
};

PluginRegistry::PluginRegistry(ScanSettings settings) : settings_(std::move(settings)) {}

PluginRegistry::~PluginRegistry() {
  // Unload in reverse discovery order, as a stack of dlopen calls expects.
  while (!records_.empty()) records_.pop_back();
}

void PluginRegistry::admit(EphostPluginNegotiateFn entry, PluginRecord& record) const {
  negotiate_plugin(entry, record);
  describe_plugin(record);
  enumerate_devices(record);
  if (const PluginRecord* first = find_loaded_locked(record.name))
    throw PluginSkipped(fmt::format("duplicate plugin name '{}': already loaded from {}", record.name, first->path));
}

PluginRecord& PluginRegistry::finish(std::unique_ptr<PluginRecord> record, const std::string& skip_reason,
                                     bool deferred) {
  record->loaded = skip_reason.empty();
  record->in_process = skip_reason.empty() && !deferred;
  record->reason = skip_reason;
  if (record->loaded && deferred) {
    log_info(fmt::format("plugin '{}' {} found at {} (plugin ABI {}, known to the registry cache): loaded when first "
                         "needed",
                         record->name, record->version, record->path, record->abi_version));
  } else if (record->loaded) {
    log_info(fmt::format("plugin '{}' {} loaded from {} (plugin ABI {})", record->name, record->version, record->path,
                         record->abi_version));
  } else {
    // Hold nothing of a skipped library.
    record->devices.clear();
    record->plugin = nullptr;
    record->host_api = nullptr;
    record->ort.reset();  // released before its library is unloaded
    record->library.reset();
    log_warning(fmt::format("plugin {} skipped: {}", record->path, record->reason));
  }
  records_.push_back(std::move(record));
  return *records_.back();
}

void PluginRegistry::add_builtin(EphostPluginNegotiateFn entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto record = std::make_unique<PluginRecord>();
  record->path = kBuiltinPluginPath;
  record->builtin = true;
  std::string reason = skip_reason_of([&] { admit(entry, *record); });
  finish(std::move(record), reason, /*deferred=*/false);
}

void PluginRegistry::scan_directories(const std::vector<std::string>& dirs) {
  std::vector<std::string> paths;
  for (const std::string& dir : dirs)
    for (std::string& path : list_plugin_candidates(dir)) paths.push_back(std::move(path));
  load_libraries(paths, /*defer=*/true);
}

const PluginRecord& PluginRegistry::load_library(const std::string& path) {
  return *load_libraries({path}, /*defer=*/false).front();
}

std::vector<const PluginRecord*> PluginRegistry::load_libraries(const std::vector<std::string>& paths, bool defer) {
  std::vector<Candidate> candidates(paths.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < paths.size(); ++i) {
      Candidate& c = candidates[i];
      c.path = paths[i];
      c.canonical = canonical_or_empty(c.path);
      if (const PluginRecord* same = find_loaded_file_locked(c.canonical))
        c.skip = fmt::format("already loaded from {}", same->path);
    }
  }
  for (Candidate& c : candidates)
    if (c.skip.empty()) c.skip = elf_incompatibility(c.path);
  probe(candidates);
  const int64_t now = unix_now_s();
  for (Candidate& c : candidates)
    if (c.skip.empty() && c.probed_by == std::string("in process")) c.probed_at = now;  // probed while loaded

  std::vector<const PluginRecord*> out;
  // load_mutex_ first (the lock order): deferred_ is guarded by it.
  std::lock_guard<std::mutex> lazy_lock(load_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (Candidate& c : candidates) {
    auto record = std::make_unique<PluginRecord>();
    record->path = c.path;
    record->canonical_path = c.canonical;
    if (c.skip.empty()) {
      record->probed_at = c.probed_at;
      record->reprobe_reason = c.reprobe_reason;
    }
    bool deferred = false;
    // The library's further providers (an ONNX Runtime plugin EP's factories after the first): from the
    // probe when deferred, from the load otherwise.
    std::vector<std::unique_ptr<PluginRecord>> siblings;
    std::string reason = skip_reason_of([&] {
      if (!c.skip.empty()) throw PluginSkipped(c.skip);
      // Another thread may have loaded the same file meanwhile.
      if (const PluginRecord* same = find_loaded_file_locked(record->canonical_path))
        throw PluginSkipped(fmt::format("already loaded from {}", same->path));
      record->probed_by = c.probed_by;
      if (c.probe) {
        record->probe_outcome = probe_outcome_name(c.probe->outcome);
        if (c.probe->outcome != ProbeOutcome::kUsable) {
          apply_description(c.probe->description, *record);  // what it said before it failed
          throw PluginSkipped(c.probe->reason);
        }
        if (defer && c.identity && record->probed_by != std::string("in process")) {
          // Lazy loading: the probe (the registry cache's, or the scanner's just now) knows everything
          // the report and the selection need; the library is loaded by ensure_loaded when its code is
          // first needed, and never when its providers run isolated (a provider host loads it).
          apply_description(c.probe->description, *record);
          record->probed_devices = c.probe->devices;
          for (const ProbedProvider& probed : c.probe->siblings) {
            siblings.push_back(std::make_unique<PluginRecord>());
            PluginRecord& sibling = *siblings.back();
            sibling.path = record->path;
            sibling.canonical_path = record->canonical_path;
            apply_description(probed.description, sibling);
            sibling.probed_devices = probed.devices;
          }
          deferred = true;
        }
        // The probe knows the name: a duplicate is skipped without loading it (warm or cold).
        if (const PluginRecord* first = find_loaded_locked(c.probe->description.name)) {
          apply_description(c.probe->description, *record);
          throw PluginSkipped(
              fmt::format("duplicate plugin name '{}': already loaded from {}", record->name, first->path));
        }
        if (deferred) return;
      }
      load_in_process(*record, siblings);
      // Loaded here without a probe's list (registered by path): its devices as loaded, so that an
      // isolated provider of it gets its device too (the provider host enumerates the same ones).
      if (record->probed_devices.empty()) record->probed_devices = probed_devices_of(*record);
      for (auto& sibling : siblings)
        if (sibling->probed_devices.empty()) sibling->probed_devices = probed_devices_of(*sibling);
    });
    PluginRecord& added = finish(std::move(record), reason, deferred);
    if (deferred && reason.empty()) deferred_.emplace(&added, *c.identity);
    out.push_back(&added);
    for (auto& sibling : siblings) {
      sibling->probed_by = added.probed_by;
      sibling->probe_outcome = added.probe_outcome;
      sibling->probed_at = added.probed_at;
      sibling->reprobe_reason = added.reprobe_reason;
      const std::string sibling_reason = skip_reason_of([&] {
        if (const PluginRecord* first = find_loaded_locked(sibling->name))
          throw PluginSkipped(fmt::format("duplicate plugin name '{}': already loaded from {}", sibling->name,
                                          first->path));
      });
      PluginRecord& added_sibling = finish(std::move(sibling), sibling_reason, deferred);
      if (deferred && sibling_reason.empty()) deferred_.emplace(&added_sibling, *c.identity);
    }
  }
  return out;
}

bool PluginRegistry::ensure_loaded(const PluginRecord& r) const {
  if (r.in_process.load(std::memory_order_acquire)) return true;
  if (!r.loaded.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(load_mutex_);
  // Another thread may have loaded it (or dropped it) while this one waited.
  if (r.in_process.load(std::memory_order_acquire)) return true;
  if (!r.loaded.load(std::memory_order_acquire)) return false;
  // The registry owns its records (unique_ptr<PluginRecord>); callers only see them const.
  PluginRecord& record = const_cast<PluginRecord&>(r);
  const std::string reason = skip_reason_of([&] { load_deferred(record); });
  deferred_.erase(&r);
  if (reason.empty()) {
    record.in_process.store(true, std::memory_order_release);
    log_info(fmt::format("plugin '{}' {} loaded from {} when first needed (plugin ABI {})", record.name,
                         record.version, record.path, record.abi_version));
    return true;
  }
  record.late_reason = reason;
  record.loaded.store(false, std::memory_order_release);
  log_warning(fmt::format("plugin {} ('{}') dropped out when it was first needed: {}", record.path, record.name,
                          reason));
  return false;
}

void PluginRegistry::load_deferred(PluginRecord& record) const {
  auto it = deferred_.find(&record);
  if (it == deferred_.end())
    throw PluginSkipped("internal error: a usable plugin that is neither loaded nor waiting to be loaded");
  const LibraryIdentity& admitted = it->second;
  const std::optional<LibraryIdentity> now = identify_library(record.canonical_path);
  if (!now)
    throw PluginSkipped(fmt::format("the library {} is gone since the plugins were discovered", record.canonical_path));
  if (!(*now == admitted)) {
    // Never dlopen a changed file on the strength of the old probe: probe it again in the scanner's child
    // process first (a crash there costs the child), and remember the answer for the next start.
    const std::string changed = fmt::format(
        "the library changed on disk since the plugins were discovered (size {} -> {}, mtime {} -> {}, inode {} -> {})",
        admitted.size, now->size, admitted.mtime_ns, now->mtime_ns, admitted.inode, now->inode);
    log_info(fmt::format("plugin {}: {}; probing it again in the plugin scanner", record.path, changed));
    std::vector<ProbeResult> results;
    try {
      results = probe_in_scanner({record.path}, ScannerOptions{settings_.scanner, settings_.timeout});
    } catch (const ScannerUnavailable& e) {
      throw PluginSkipped(fmt::format("{}, and the plugin scanner cannot probe it again ({}): not loaded unprobed",
                                      changed, e.what()));
    }
    const ProbeResult& probe = results.front();
    RegistryCache cache(settings_.registry_file);
    cache.load();
    cache.store(*now, probe, capture_probe_context(), unix_now_s());
    cache.save();
    if (probe.outcome != ProbeOutcome::kUsable)
      throw PluginSkipped(fmt::format("{}; probed again: {}", changed, probe.reason));
    const PluginDescription* same = &probe.description;
    for (const ProbedProvider& sibling : probe.siblings)
      if (sibling.description.name == record.name) same = &sibling.description;
    if (same->name != record.name || same->abi_version != record.abi_version)
      throw PluginSkipped(fmt::format("{}; probed again, it is now plugin '{}' (plugin ABI {}), not '{}' (plugin ABI "
                                      "{}) as discovered",
                                      changed, same->name, same->abi_version, record.name, record.abi_version));
  }
  // Loaded into scratch records: the real ones' metadata is read by other threads meanwhile, and only
  // the handles are taken from the scratch (before in_process is published). An ONNX Runtime plugin EP
  // library gives one scratch record per factory.
  std::vector<std::unique_ptr<PluginRecord>> fresh(1);
  fresh[0] = std::make_unique<PluginRecord>();
  fresh[0]->path = record.path;
  fresh[0]->canonical_path = record.canonical_path;
  {
    const std::string file = std::filesystem::path(record.path).filename().string();
    PluginCallScope scope(file.c_str(), record.path.c_str(), "lazy load (load, negotiate, describe)");
    PluginRecord& first = *fresh[0];
    first.library = PluginLibrary::open(record.path);
    std::vector<std::unique_ptr<PluginRecord>> siblings;
    if (!adopt_if_ort_plugin_ep(first.library, first, siblings)) {
      negotiate_plugin(first.library->entry_point(), first);
      describe_plugin(first);
      enumerate_devices(first);
    }
    for (auto& sibling : siblings) fresh.push_back(std::move(sibling));
  }
  // The record asked for is the provider of its name (its factory's, for an ONNX Runtime plugin EP).
  auto loaded = std::find_if(fresh.begin(), fresh.end(), [&](const auto& f) { return f->name == record.name; });
  const PluginRecord& match = loaded == fresh.end() ? *fresh[0] : **loaded;
  if (match.name != record.name || match.abi_version != record.abi_version)
    throw PluginSkipped(fmt::format("loaded, it is plugin '{}' (plugin ABI {}), but the registry cache knew it as "
                                    "'{}' (plugin ABI {})",
                                    match.name, match.abi_version, record.name, record.abi_version));
  take_handles(**loaded, record);
  // Its deferred siblings (the library's other factories) come from this same load.
  std::vector<PluginRecord*> siblings;
  for (const auto& entry : deferred_)
    if (entry.first != &record && entry.first->canonical_path == record.canonical_path &&
        entry.first->loaded.load(std::memory_order_acquire))
      siblings.push_back(const_cast<PluginRecord*>(entry.first));  // the registry owns its records
  for (PluginRecord* sibling : siblings) fill_deferred_sibling(*sibling, fresh);
}

void PluginRegistry::fill_deferred_sibling(PluginRecord& sibling, std::vector<std::unique_ptr<PluginRecord>>& fresh) const {
  deferred_.erase(&sibling);
  auto loaded = std::find_if(fresh.begin(), fresh.end(), [&](const auto& f) { return f->name == sibling.name; });
  if (loaded == fresh.end() || (*loaded)->abi_version != sibling.abi_version) {
    sibling.late_reason = fmt::format("its library {} was loaded for another of its providers, and no longer serves "
                                      "'{}'", sibling.path, sibling.name);
    sibling.loaded.store(false, std::memory_order_release);
    log_warning(fmt::format("plugin {} ('{}') dropped out: {}", sibling.path, sibling.name, sibling.late_reason));
    return;
  }
  take_handles(**loaded, sibling);
  sibling.in_process.store(true, std::memory_order_release);
  log_info(fmt::format("plugin '{}' {} loaded from {} with a provider of the same library (plugin ABI {})",
                       sibling.name, sibling.version, sibling.path, sibling.abi_version));
}

void PluginRegistry::probe(std::vector<Candidate>& candidates) const {
  if (settings_.in_process) return;
  if (settings_.scanner.empty()) {
    log_warning("no plugin scanner is installed beside libephost: plugins are probed in process, where one that "
                "crashes takes the application with it (set EPHOST_PLUGIN_SCANNER to the scanner)");
    return;
  }
  RegistryCache cache(settings_.registry_file);
  cache.load();
  // What refusals and timeouts depend on (verdict_freshness.h), captured once for all candidates.
  const ProbeContext context = capture_probe_context();
  const int64_t now = unix_now_s();
  std::vector<size_t> misses;
  std::vector<std::optional<LibraryIdentity>> ids(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    if (!c.skip.empty()) continue;
    ids[i] = identify_library(c.canonical);
    c.identity = ids[i];
    if (ids[i]) {
      if (std::optional<RegistryEntry> cached = cache.find(*ids[i])) {
        c.reprobe_reason = settings_.rescan ? "a rescan was asked for" : reprobe_reason(*cached, context, now);
        if (c.reprobe_reason.empty()) {
          c.probe = std::move(cached->result);
          c.probed_by = "registry";
          c.probed_at = cached->probed_at;
          continue;
        }
        log_info(fmt::format("plugin {}: the registry cache says {} ({} ago), probing it again: {}", c.path,
                             probe_outcome_name(cached->result.outcome), age_text(now - cached->probed_at),
                             c.reprobe_reason));
      }
    }
    misses.push_back(i);
  }
  if (!misses.empty()) {
    std::vector<std::string> paths;
    for (size_t i : misses) paths.push_back(candidates[i].path);
    std::vector<ProbeResult> results;
    try {
      results = probe_in_scanner(paths, ScannerOptions{settings_.scanner, settings_.timeout});
    } catch (const ScannerUnavailable& e) {
      log_warning(fmt::format("the plugin scanner cannot run ({}): plugins are probed in process, where one that "
                              "crashes takes the application with it", e.what()));
      return;
    }
    for (size_t k = 0; k < misses.size(); ++k) {
      Candidate& c = candidates[misses[k]];
      if (ids[misses[k]]) cache.store(*ids[misses[k]], results[k], context, now);
      c.probe = std::move(results[k]);
      c.probed_by = "scanner";
      c.probed_at = now;
    }
  }
  cache.save();
}

void PluginRegistry::load_in_process(PluginRecord& record,
                                     std::vector<std::unique_ptr<PluginRecord>>& siblings) const {
  // A crash from here on cannot be survived; the fault reporter at least names the library.
  const std::string file = std::filesystem::path(record.path).filename().string();
  PluginCallScope scope(file.c_str(), record.path.c_str(), "discovery (load, negotiate, describe)");
  record.library = PluginLibrary::open(record.path);
  if (adopt_if_ort_plugin_ep(record.library, record, siblings)) {
    if (const PluginRecord* first = find_loaded_locked(record.name))
      throw PluginSkipped(fmt::format("duplicate plugin name '{}': already loaded from {}", record.name, first->path));
    return;
  }
  admit(record.library->entry_point(), record);
}

const std::vector<std::unique_ptr<PluginRecord>>& PluginRegistry::records() const { return records_; }

const PluginRecord* PluginRegistry::find_loaded_locked(const std::string& name) const {
  for (const auto& r : records_)
    if (r->loaded && r->name == name) return r.get();
  return nullptr;
}

const PluginRecord* PluginRegistry::find_loaded_file_locked(const std::string& canonical_path) const {
  if (canonical_path.empty()) return nullptr;
  for (const auto& r : records_)
    if (r->loaded && r->canonical_path == canonical_path) return r.get();
  return nullptr;
}

const PluginRecord* PluginRegistry::find_loaded(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_loaded_locked(name);
}

std::vector<const PluginRecord*> PluginRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const PluginRecord*> records;
  records.reserve(records_.size());
  for (const auto& r : records_) records.push_back(r.get());
  return records;
}

std::vector<const PluginRecord*> PluginRegistry::loaded_by_priority() const {
  std::vector<const PluginRecord*> plugins = snapshot();
  plugins.erase(std::remove_if(plugins.begin(), plugins.end(), [](const PluginRecord* r) { return !r->loaded; }),
                plugins.end());
  std::stable_sort(plugins.begin(), plugins.end(), [](const PluginRecord* a, const PluginRecord* b) {
    if (a->builtin != b->builtin) return !a->builtin;
    return a->default_priority > b->default_priority;
  });
  return plugins;
}

std::string PluginRegistry::report_json() const { return discovery_report_json(snapshot()); }

}  // namespace ephost
