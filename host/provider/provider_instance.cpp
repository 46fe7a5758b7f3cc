#include "provider/provider_instance.h"

#include <memory>

#include "core/device.h"
#include "core/error.h"
#include "core/status.h"
#include "discovery/plugin_registry.h"

namespace ephost {

ProviderInstance::ProviderInstance(const PluginRecord& record,
                                   const std::vector<std::pair<std::string, std::string>>& options,
                                   const Device* device)
    : record_(record), device_(device), name_(record.name) {
  // Lazy loading: the caller loads the plugin first (PluginRegistry::ensure_loaded); a record not loaded
  // in process has no function table to call.
  if (!record.in_process.load(std::memory_order_acquire) || !record.plugin)
    fail(EPHOST_EP_FAIL, "provider '{}': its plugin library {} is not loaded (internal error: ensure_loaded was not "
         "called)", name_, record.path);
  plugin_ = record.plugin;
  host_api_ = record.host_api;
  std::vector<const char*> keys, values;
  for (const auto& kv : options) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  EphostProvider* handle = nullptr;
  if (device_) {
    call("provider_create_for_device", [&] {
      return plugin_->provider_create_for_device(device_->index(), keys.data(), values.data(), keys.size(), &handle);
    });
  } else {
    call("provider_create", [&] { return plugin_->provider_create(keys.data(), values.data(), keys.size(), &handle); });
  }
  if (!handle) fail(EPHOST_EP_FAIL, "provider '{}': provider_create succeeded but returned no provider", name_);
  handle_ = handle;
}

const char* ProviderInstance::library_path() const { return record_.path.c_str(); }

const Device* ProviderInstance::memory_device() const {
  return device_ && !device_->host_memory_usable() ? device_ : nullptr;
}

std::string ProviderInstance::label() const { return device_ ? device_->label() : name_; }

ProviderInstance::~ProviderInstance() {
  if (!handle_) return;
  try {
    PluginCallScope scope(name_.c_str(), library_path(), "provider_release");
    plugin_->provider_release(handle_);
  } catch (...) {
    // A plugin that throws while releasing cannot be helped; never let it escape a destructor.
  }
}

void ProviderInstance::throw_status(const std::string& what, EphostStatus* status) const {
  // Read only when it is a status the host created: a plugin may return anything.
  if (!is_live_status(status))
    fail(EPHOST_EP_FAIL, "provider '{}' {}: returned {}, which is not a status created by status_create (or was "
         "released already)", name_, what, fmt::ptr(status));
  Error error(status->code, fmt::format("provider '{}' {}: {}", name_, what, status->message));
  release_status(status);
  throw error;
}

void ProviderInstance::throw_exception(const std::string& what, const char* message) const {
  throw Error(EPHOST_RUNTIME_EXCEPTION,
              fmt::format("provider '{}' {} threw a C++ exception across the plugin ABI: {}", name_, what, message));
}

}  // namespace ephost
