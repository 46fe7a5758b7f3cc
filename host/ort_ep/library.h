// One ONNX Runtime plugin EP library, adopted: its factories created (CreateEpFactories, with the
// host's OrtApiBase and logger), the supported devices of each factory asked for (GetSupportedDevices,
// over the host's hardware devices), and everything released in order when it goes (EP devices, then
// ReleaseEpFactory for each factory; the library itself is unloaded by its owner afterwards).
//
// A library exporting only CreateEpFactories / ReleaseEpFactory is such a plugin (recognition.h). Each
// factory it serves is one ephost provider (discovery makes one PluginRecord per factory, all sharing this
// object): named after the factory (GetName), with its own vendor, version and devices (served_devices of
// its index), so `--providers <factory>:<index>` picks a factory and a device. The library is loaded once
// and its factories created once for all of them. A factory that is unusable (no GetName, CreateEp, ...)
// is left out, named in the log, unless it is the first (then the library is refused).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {

// Why a library cannot be served: the message says what the plugin did and what to do.
class LibraryRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OrtEpLibrary {
 public:
  // `create` and `release` are the library's exports; `path` names it in reports and fault messages.
  // `keep_loaded` (the library handle, shared by the records of its factories) is held until every factory
  // was released (ReleaseEpFactory), so the code stays mapped while it runs.
  // Throws LibraryRefused when the factories cannot be created or are unusable.
  OrtEpLibrary(CreateEpApiFactoriesFn create, ReleaseEpApiFactoryFn release, std::string path,
               std::shared_ptr<const void> keep_loaded = nullptr);
  ~OrtEpLibrary();
  OrtEpLibrary(const OrtEpLibrary&) = delete;
  OrtEpLibrary& operator=(const OrtEpLibrary&) = delete;

  // The first factory (the plugin's name, vendor and version are its).
  OrtEpFactory* factory() const { return factory_; }
  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  // Every factory made, the first first, and their names (GetName), in the same order; a factory left
  // out (unusable) has the name "".
  const std::vector<OrtEpFactory*>& factories() const { return factories_; }
  const std::vector<std::string>& factory_names() const { return factory_names_; }
  // The indices of the factories served (named), in order: one ephost provider each.
  std::vector<size_t> served_factories() const;
  // The index of the served factory called `name`; factories().size() when there is none.
  size_t factory_index(const std::string& name) const;
  // Factory `index`'s vendor (GetVendor) and version (GetVersion, "" before API 23).
  const std::string& vendor_of(size_t index) const { return factory_vendors_.at(index); }
  const std::string& version_of(size_t index) const { return factory_versions_.at(index); }
  uint32_t factory_version_of(size_t index) const { return factories_.at(index)->ort_version_supported; }
  // The factory whose GetSupportedDevices listed `device` (one of ep_devices()), and its name.
  OrtEpFactory* factory_of(const OrtEpDevice* device) const;
  const std::string& factory_name_of(const OrtEpDevice* device) const;
  const std::string& vendor() const { return vendor_; }
  const std::string& version() const { return version_; }  // "" before API 23 (no GetVersion)
  // The API version the factory was built for (ort_version_supported) and the one it asked GetApi for.
  uint32_t factory_version() const { return factory_->ort_version_supported; }
  uint32_t api_version_asked() const { return api_version_asked_; }
  // Whether the factory struct has the member added at `version` (ort_version_supported >= version).
  bool factory_has(uint32_t version) const { return factory_->ort_version_supported >= version; }
  // The factories' devices, as GetSupportedDevices answered, factory by factory (the host owns them).
  const std::vector<OrtEpDevice*>& ep_devices() const { return ep_devices_; }
  // The devices ephost serves, in order (ephost's device index counts these): those whose kernels work on
  // host memory, and those with memory of their own (device_memory_info) whose factory can allocate it
  // (CreateAllocator) and copy it (CreateDataTransfer), both API 23.
  std::vector<const OrtEpDevice*> served_devices() const;
  // The same, of factory `index` only (the devices of its provider, in order).
  std::vector<const OrtEpDevice*> served_devices(size_t index) const;
  // The memory info of `device`'s own memory: its first allocator info not on the CPU (default memory
  // type); null when its kernels use host memory.
  static const OrtMemoryInfo* device_memory_info(const OrtEpDevice* device);
  // Why `device` (with memory of its own) is not served, "" when it is.
  std::string unserved_reason(const OrtEpDevice* device) const;
  // Why factory `index` passed over host hardware devices, one line per device its
  // GetHardwareDeviceIncompatibilityDetails (API 24) reported incompatible: "gpu 'PCI vendor 0x10de':
  // device incompatible: <the factory's notes> (error 7)". Empty when it reported none or lacks the function.
  const std::vector<std::string>& unsupported_devices(size_t index) const;
  // Factory `index`'s answer on hardware device `hw` (OrtEpFactory::GetHardwareDeviceIncompatibilityDetails,
  // API 24), written into `details` (which comes "compatible"); the factory's failure when it failed. A
  // factory without the function leaves `details` compatible when it listed an EP device over `hw`, and sets
  // OrtDeviceEpIncompatibility_UNKNOWN with a note saying so when it did not.
  std::optional<StatusReading> incompatibility_of(size_t index, const OrtHardwareDevice* hw,
                                                  OrtDeviceEpIncompatibilityDetails& details) const;

  // The host environment's registered EP libraries (OrtEnv, ort_objects.h): runs `fn` on the live library
  // that serves a factory named `ep_name` and that factory's index, and answers true; false when no library
  // alive in the process serves one. Libraries register when made and leave when destroyed; `fn` runs under
  // the registry's (recursive) lock, so the library stays alive during it.
  static bool with_factory_named(const std::string& ep_name,
                                 const std::function<void(const OrtEpLibrary&, size_t)>& fn);

  // The factory's allocator for `device`'s memory `info` (OrtEpFactory::CreateAllocator, made on first use)
  // and its data transfer (CreateDataTransfer, one per factory). Both are released with the library, before
  // its factories. Throw ephost::Error (EP_FAIL) naming the call when the factory fails or answers NULL.
  OrtAllocator* allocator_of(const OrtEpDevice* device, const OrtMemoryInfo& info) const;
  OrtDataTransferImpl* data_transfer_of(const OrtEpDevice* device) const;

 private:
  std::string path_;
  ReleaseEpApiFactoryFn release_ = nullptr;
  std::vector<OrtEpFactory*> factories_;
  OrtEpFactory* factory_ = nullptr;
  std::string name_, vendor_, version_;
  uint32_t api_version_asked_ = 0;
  std::vector<OrtEpDevice*> ep_devices_;
  std::vector<size_t> device_factory_;  // parallel to ep_devices_: the index in factories_ that listed it
  std::vector<std::string> factory_names_;
  std::vector<std::string> factory_vendors_, factory_versions_;  // parallel to factories_
  std::vector<std::vector<std::string>> unsupported_devices_;    // parallel to factories_ (see the getter)
  // Released last (after ReleaseEpFactory of every factory): see the constructor.
  std::shared_ptr<const void> keep_loaded_;
  // Device memory functions, made on first use (allocator_of, data_transfer_of).
  mutable std::mutex memory_mutex_;
  mutable std::map<const OrtEpDevice*, OrtAllocator*> allocators_;
  mutable std::map<OrtEpFactory*, OrtDataTransferImpl*> transfers_;

  // Whether factory `f` can be served (its required members present, a name); `why` says what is missing.
  static bool usable(OrtEpFactory* f, std::string& why);
  // Asks factory `index` for its devices and appends them.
  void add_devices_of(size_t index, const std::string& file);
  // Asks factory `index` why it passed over each host device it listed no EP device for.
  void explain_unsupported_devices(size_t index);
};

}  // namespace ephost::ort_ep
