#include "provider/provider.h"

#include "core/device.h"
#include "discovery/plugin_registry.h"
#include "provider/native_provider.h"
#include "provider/ort_ep_provider.h"

namespace ephost {

Provider::Provider(const PluginRecord& record, const Device* device)
    : record_(record), device_(device), name_(record.name) {}

const Device* Provider::memory_device() const {
  return device_ && !device_->host_memory_usable() ? device_ : nullptr;
}

std::string Provider::label() const { return device_ ? device_->label() : name_; }

const char* Provider::library_path() const { return record_.path.c_str(); }

std::unique_ptr<Provider> create_provider(const PluginRecord& record,
                                          const std::vector<std::pair<std::string, std::string>>& options,
                                          const Device* device) {
  // An ONNX Runtime plugin EP is served through the adapter; every other plugin is a native ephost
  // plugin. Both run in process.
  if (record.ort) return std::make_unique<OrtEpProvider>(record, options, device);
  // The weightless source model is the adapter's option (the session adds it before it knows the kind).
  std::vector<std::pair<std::string, std::string>> native_options;
  for (const auto& option : options)
    if (option.first != kOrtWeightlessSourceModelOption) native_options.push_back(option);
  return std::make_unique<NativeProvider>(record, native_options, device);
}

}  // namespace ephost
