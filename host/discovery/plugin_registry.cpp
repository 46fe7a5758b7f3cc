#include "discovery/plugin_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/device.h"
#include "core/log.h"
#include "discovery/device_enumeration.h"
#include "discovery/elf_probe.h"
#include "discovery/negotiation.h"
#include "discovery/plugin_call.h"
#include "discovery/plugin_library.h"
#include "discovery/plugin_metadata.h"
#include "discovery/report_json.h"

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

}  // namespace

PluginRegistry::PluginRegistry() = default;

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

PluginRecord& PluginRegistry::finish(std::unique_ptr<PluginRecord> record, const std::string& skip_reason) {
  record->loaded = skip_reason.empty();
  record->reason = skip_reason;
  if (record->loaded) {
    log_info(fmt::format("plugin '{}' {} loaded from {} (plugin ABI {})", record->name, record->version, record->path,
                         record->abi_version));
  } else {
    // Hold nothing of a skipped library.
    record->devices.clear();
    record->plugin = nullptr;
    record->host_api = nullptr;
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
  finish(std::move(record), reason);
}

void PluginRegistry::scan_directories(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs)
    for (const std::string& path : list_plugin_candidates(dir)) load_library(path);
}

const PluginRecord& PluginRegistry::load_library(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto record = std::make_unique<PluginRecord>();
  record->path = path;
  record->canonical_path = canonical_or_empty(path);
  std::string reason = skip_reason_of([&] {
    if (const PluginRecord* same = find_loaded_file_locked(record->canonical_path))
      throw PluginSkipped(fmt::format("already loaded from {}", same->path));
    std::string incompatible = elf_incompatibility(path);
    if (!incompatible.empty()) throw PluginSkipped(incompatible);
    record->library = PluginLibrary::open(path);
    admit(record->library->entry_point(), *record);
  });
  return finish(std::move(record), reason);
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
