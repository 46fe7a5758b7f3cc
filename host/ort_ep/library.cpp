#include "ort_ep/library.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "ort_ep/api_tables.h"
#include "ort_ep/hardware_devices.h"
#include "ort_ep/plugin_call.h"

namespace ephost::ort_ep {
namespace {

// ONNX Runtime hands CreateEpFactories room for 4 factories and GetSupportedDevices room for 8 devices.
constexpr size_t kMaxFactories = 4;
constexpr size_t kMaxEpDevices = 8;

std::string text_or(const char* text, const char* fallback) { return text && *text ? text : fallback; }

// The libraries alive in the process: what the host environment's EP libraries are (with_factory_named).
// Recursive: a factory asked under the lock may ask the environment again.
std::recursive_mutex& live_libraries_mutex() {
  static auto* mutex = new std::recursive_mutex();
  return *mutex;
}
std::vector<const OrtEpLibrary*>& live_libraries() {
  static auto* list = new std::vector<const OrtEpLibrary*>();
  return *list;
}

}  // namespace

const char* error_code_name(OrtErrorCode code) {
  switch (code) {
    case ORT_OK: return "ORT_OK";
    case ORT_FAIL: return "ORT_FAIL";
    case ORT_INVALID_ARGUMENT: return "ORT_INVALID_ARGUMENT";
    case ORT_NO_SUCHFILE: return "ORT_NO_SUCHFILE";
    case ORT_NO_MODEL: return "ORT_NO_MODEL";
    case ORT_ENGINE_ERROR: return "ORT_ENGINE_ERROR";
    case ORT_RUNTIME_EXCEPTION: return "ORT_RUNTIME_EXCEPTION";
    case ORT_INVALID_PROTOBUF: return "ORT_INVALID_PROTOBUF";
    case ORT_MODEL_LOADED: return "ORT_MODEL_LOADED";
    case ORT_NOT_IMPLEMENTED: return "ORT_NOT_IMPLEMENTED";
    case ORT_INVALID_GRAPH: return "ORT_INVALID_GRAPH";
    case ORT_EP_FAIL: return "ORT_EP_FAIL";
    case ORT_MODEL_LOAD_CANCELED: return "ORT_MODEL_LOAD_CANCELED";
    case ORT_MODEL_REQUIRES_COMPILATION: return "ORT_MODEL_REQUIRES_COMPILATION";
    case ORT_NOT_FOUND: return "ORT_NOT_FOUND";
  }
  return "an unknown OrtErrorCode";
}

OrtEpLibrary::OrtEpLibrary(CreateEpApiFactoriesFn create, ReleaseEpApiFactoryFn release, std::string path,
                           std::shared_ptr<const void> keep_loaded)
    : path_(std::move(path)), release_(release), keep_loaded_(std::move(keep_loaded)) {
  const std::string registered = std::filesystem::path(path_).stem().string();
  const std::string file = std::filesystem::path(path_).filename().string();
  OrtEpFactory* made[kMaxFactories] = {};
  size_t count = 0;
  reset_requested_api_version();
  auto failure = call_plugin(file.c_str(), path_.c_str(), "CreateEpFactories", [&] {
    return create(registered.c_str(), ort_api_base(), default_logger(), made, kMaxFactories, &count);
  });
  api_version_asked_ = requested_api_version();
  const std::string asked =
      api_version_asked_ > EPHOST_ORT_API_VERSION_MAX
          ? fmt::format(" (it asked for ONNX Runtime API {}; ephost answers {} to {}, NULL above)", api_version_asked_,
                        EPHOST_ORT_API_VERSION_MIN, EPHOST_ORT_API_VERSION_MAX)
          : std::string();
  if (failure)
    throw LibraryRefused(fmt::format("ONNX Runtime plugin EP: CreateEpFactories failed ({}): {}{}",
                                     error_code_name(failure->code), failure->message, asked));
  if (count > kMaxFactories) count = kMaxFactories;
  for (size_t i = 0; i < count; ++i)
    if (made[i]) factories_.push_back(made[i]);
  if (factories_.empty() || !made[0]) {
    throw LibraryRefused(fmt::format("ONNX Runtime plugin EP: CreateEpFactories succeeded but returned {}{}",
                                     count == 0 ? "no factory" : "a NULL factory", asked));
  }
  factory_ = factories_.front();
  if (factory_->ort_version_supported < EPHOST_ORT_API_VERSION_MIN)
    throw LibraryRefused(fmt::format("ONNX Runtime plugin EP: its factory says it was built for API {} "
                                     "(ort_version_supported), before plugin EPs existed (API {}); is it set?",
                                     factory_->ort_version_supported, EPHOST_ORT_API_VERSION_MIN));
  if (!factory_->GetName || !factory_->GetVendor || !factory_->GetSupportedDevices || !factory_->CreateEp ||
      !factory_->ReleaseEp)
    throw LibraryRefused("ONNX Runtime plugin EP: its factory lacks GetName, GetVendor, GetSupportedDevices, "
                         "CreateEp or ReleaseEp (all are required)");
  call_plugin_void(file.c_str(), path_.c_str(), "OrtEpFactory::GetName", [&] {
    name_ = text_or(factory_->GetName(factory_), "");
    vendor_ = text_or(factory_->GetVendor(factory_), "");
    if (factory_has(23) && factory_->GetVersion) version_ = text_or(factory_->GetVersion(factory_), "");
  });
  if (name_.empty()) throw LibraryRefused("ONNX Runtime plugin EP: its factory's GetName answered no name");
  factory_names_.push_back(name_);
  factory_vendors_.push_back(vendor_);
  factory_versions_.push_back(version_);
  // The other factories: each served with its devices when usable; an unusable one is named and left out
  // (it is still released with ReleaseEpFactory).
  for (size_t i = 1; i < factories_.size(); ++i) {
    std::string why, other, other_vendor, other_version;
    OrtEpFactory* f = factories_[i];
    if (usable(f, why))
      call_plugin_void(file.c_str(), path_.c_str(), "OrtEpFactory::GetName", [&] {
        other = text_or(f->GetName(f), "");
        other_vendor = text_or(f->GetVendor(f), "");
        if (f->ort_version_supported >= 23 && f->GetVersion) other_version = text_or(f->GetVersion(f), "");
      });
    if (why.empty() && other.empty()) why = "GetName answered no name";
    if (why.empty() && std::find(factory_names_.begin(), factory_names_.end(), other) != factory_names_.end())
      why = fmt::format("its name '{}' is another factory's", other);
    factory_names_.push_back(why.empty() ? other : std::string());
    factory_vendors_.push_back(other_vendor);
    factory_versions_.push_back(other_version);
    if (!why.empty())
      log_warning(fmt::format("ONNX Runtime plugin EP library {}: factory {} of {} is left out: {}", path_, i + 1,
                              factories_.size(), why));
  }
  for (size_t i = 0; i < factories_.size(); ++i)
    if (!factory_names_[i].empty()) add_devices_of(i, file);
  std::lock_guard<std::recursive_mutex> lock(live_libraries_mutex());
  live_libraries().push_back(this);
}

bool OrtEpLibrary::with_factory_named(const std::string& ep_name,
                                      const std::function<void(const OrtEpLibrary&, size_t)>& fn) {
  std::lock_guard<std::recursive_mutex> lock(live_libraries_mutex());
  for (const OrtEpLibrary* library : live_libraries()) {
    const size_t index = library->factory_index(ep_name);
    if (index < library->factories().size()) {
      fn(*library, index);
      return true;
    }
  }
  return false;
}

bool OrtEpLibrary::usable(OrtEpFactory* f, std::string& why) {
  if (f->ort_version_supported < EPHOST_ORT_API_VERSION_MIN)
    why = fmt::format("built for API {} (ort_version_supported), before plugin EPs existed", f->ort_version_supported);
  else if (!f->GetName || !f->GetVendor || !f->GetSupportedDevices || !f->CreateEp || !f->ReleaseEp)
    why = "it lacks GetName, GetVendor, GetSupportedDevices, CreateEp or ReleaseEp (all are required)";
  return why.empty();
}

void OrtEpLibrary::add_devices_of(size_t index, const std::string& file) {
  OrtEpFactory* factory = factories_[index];
  const std::string& factory_name = factory_names_[index];
  const auto& hardware = host_hardware_devices();
  OrtEpDevice* devices[kMaxEpDevices] = {};
  size_t num = 0;
  auto failure = call_plugin(file.c_str(), path_.c_str(), "OrtEpFactory::GetSupportedDevices", [&] {
    return factory->GetSupportedDevices(factory, hardware.data(), hardware.size(), devices, kMaxEpDevices, &num);
  });
  if (failure)
    throw LibraryRefused(fmt::format("ONNX Runtime plugin EP '{}': GetSupportedDevices failed ({}): {}", factory_name,
                                     error_code_name(failure->code), failure->message));
  for (size_t i = 0; i < std::min(num, kMaxEpDevices); ++i) {
    OrtEpDevice* d = checked_mut<OrtEpDevice>(devices[i], Magic::kEpDevice);
    if (!d)
      throw LibraryRefused(fmt::format("ONNX Runtime plugin EP '{}': GetSupportedDevices returned device {} that was "
                                       "not made with OrtEpApi::CreateEpDevice",
                                       factory_name, i));
    ep_devices_.push_back(d);
    device_factory_.push_back(index);
  }
  explain_unsupported_devices(index);
}

namespace {

// "gpu 'NVIDIA ...'" / "cpu 'AMD EPYC 7B13' (AMD)": a host hardware device as the listing names it.
std::string hardware_label(const OrtHardwareDevice& hw) {
  const char* type = hw.type == OrtHardwareDeviceType_GPU   ? "gpu"
                     : hw.type == OrtHardwareDeviceType_NPU ? "npu"
                                                            : "cpu";
  const std::string* description = hw.metadata.find("Description");
  const std::string* bus = hw.metadata.find("pci_bus_id");
  return fmt::format("{} '{}'{}", type, description ? *description : bus ? *bus : hw.vendor,
                     description ? " (" + hw.vendor + ")" : std::string());
}

// "device incompatible, missing dependency": the reasons bitmask in words.
std::string reason_words(uint32_t reasons) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {OrtDeviceEpIncompatibility_DRIVER_INCOMPATIBLE, "driver incompatible"},
      {OrtDeviceEpIncompatibility_DEVICE_INCOMPATIBLE, "device incompatible"},
      {OrtDeviceEpIncompatibility_MISSING_DEPENDENCY, "missing dependency"},
      {static_cast<uint32_t>(OrtDeviceEpIncompatibility_UNKNOWN), "unknown reason"}};
  std::string words;
  uint32_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) words += (words.empty() ? "" : ", ") + std::string(name);
  }
  if (reasons & ~known) words += fmt::format("{}reasons 0x{:x}", words.empty() ? "" : ", ", reasons & ~known);
  return words.empty() ? "not supported" : words;
}

}  // namespace

void OrtEpLibrary::explain_unsupported_devices(size_t index) {
  OrtEpFactory* factory = factories_[index];
  if (unsupported_devices_.size() < factories_.size()) unsupported_devices_.resize(factories_.size());
  if (factory->ort_version_supported < 24 || !factory->GetHardwareDeviceIncompatibilityDetails) return;
  for (const OrtHardwareDevice* hw : host_hardware_devices()) {
    bool listed = false;
    for (size_t i = 0; i < ep_devices_.size(); ++i)
      listed = listed || (device_factory_[i] == index && ep_devices_[i]->device == hw);
    if (listed) continue;
    OrtDeviceEpIncompatibilityDetails details;  // "compatible" until the factory says otherwise
    auto failure = incompatibility_of(index, hw, details);
    std::string line = hardware_label(*hw) + ": ";
    if (failure) {
      line += fmt::format("GetHardwareDeviceIncompatibilityDetails failed ({}): {}", error_code_name(failure->code),
                          failure->message);
    } else {
      if (details.reasons == 0 && !details.has_notes) continue;  // compatible, though not listed
      line += reason_words(details.reasons);
      if (details.has_notes && !details.notes.empty()) line += ": " + details.notes;
      if (details.error_code != 0) line += fmt::format(" (error {})", details.error_code);
    }
    unsupported_devices_[index].push_back(std::move(line));
  }
}

std::optional<StatusReading> OrtEpLibrary::incompatibility_of(size_t index, const OrtHardwareDevice* hw,
                                                              OrtDeviceEpIncompatibilityDetails& details) const {
  OrtEpFactory* factory = factories_.at(index);
  if (factory->ort_version_supported < 24 || !factory->GetHardwareDeviceIncompatibilityDetails) {
    for (size_t i = 0; i < ep_devices_.size(); ++i)
      if (device_factory_[i] == index && ep_devices_[i]->device == hw) return std::nullopt;
    details.reasons = static_cast<uint32_t>(OrtDeviceEpIncompatibility_UNKNOWN);
    details.has_notes = true;
    details.notes = fmt::format("factory '{}' lists no EP device for this hardware device and has no "
                                "GetHardwareDeviceIncompatibilityDetails (API 24) to say why",
                                factory_names_.at(index));
    return std::nullopt;
  }
  const std::string file = std::filesystem::path(path_).filename().string();
  return call_plugin(file.c_str(), path_.c_str(), "OrtEpFactory::GetHardwareDeviceIncompatibilityDetails",
                     [&] { return factory->GetHardwareDeviceIncompatibilityDetails(factory, hw, &details); });
}

const std::vector<std::string>& OrtEpLibrary::unsupported_devices(size_t index) const {
  static const std::vector<std::string> kNone;
  return index < unsupported_devices_.size() ? unsupported_devices_[index] : kNone;
}

OrtEpFactory* OrtEpLibrary::factory_of(const OrtEpDevice* device) const {
  for (size_t i = 0; i < ep_devices_.size(); ++i)
    if (ep_devices_[i] == device) return factories_[device_factory_[i]];
  return factory_;
}

const std::string& OrtEpLibrary::factory_name_of(const OrtEpDevice* device) const {
  for (size_t i = 0; i < ep_devices_.size(); ++i)
    if (ep_devices_[i] == device) return factory_names_[device_factory_[i]];
  return name_;
}

const OrtMemoryInfo* OrtEpLibrary::device_memory_info(const OrtEpDevice* device) {
  for (const auto& info : device->allocator_infos)
    if (info.device.device_type != OrtMemoryInfoDeviceType_CPU && info.device.memory_type == OrtDeviceMemoryType_DEFAULT)
      return &info;
  return nullptr;
}

std::string OrtEpLibrary::unserved_reason(const OrtEpDevice* device) const {
  if (!device_memory_info(device)) return "";
  OrtEpFactory* f = factory_of(device);
  if (f->ort_version_supported < 23 || !f->CreateAllocator || !f->CreateDataTransfer)
    return fmt::format("device '{}' of '{}' has memory of its own but its factory has no CreateAllocator or "
                       "CreateDataTransfer (API 23), so nothing can be copied to it",
                       device->ep_name, factory_name_of(device));
  return "";
}

std::vector<size_t> OrtEpLibrary::served_factories() const {
  std::vector<size_t> served;
  for (size_t i = 0; i < factories_.size(); ++i)
    if (!factory_names_[i].empty()) served.push_back(i);
  return served;
}

size_t OrtEpLibrary::factory_index(const std::string& name) const {
  if (name.empty()) return factories_.size();
  const auto it = std::find(factory_names_.begin(), factory_names_.end(), name);
  return static_cast<size_t>(it - factory_names_.begin());
}

std::vector<const OrtEpDevice*> OrtEpLibrary::served_devices(size_t index) const {
  std::vector<const OrtEpDevice*> served;
  for (size_t i = 0; i < ep_devices_.size(); ++i)
    if (device_factory_[i] == index && unserved_reason(ep_devices_[i]).empty()) served.push_back(ep_devices_[i]);
  return served;
}

std::vector<const OrtEpDevice*> OrtEpLibrary::served_devices() const {
  std::vector<const OrtEpDevice*> served;
  for (const OrtEpDevice* d : ep_devices_)
    if (unserved_reason(d).empty()) served.push_back(d);
  return served;
}

OrtAllocator* OrtEpLibrary::allocator_of(const OrtEpDevice* device, const OrtMemoryInfo& info) const {
  std::lock_guard<std::mutex> lock(memory_mutex_);
  auto it = allocators_.find(device);
  if (it != allocators_.end()) return it->second;
  OrtEpFactory* f = factory_of(device);
  const std::string file = std::filesystem::path(path_).filename().string();
  OrtAllocator* allocator = nullptr;
  auto failure = call_plugin(file.c_str(), path_.c_str(), "OrtEpFactory::CreateAllocator",
                             [&] { return f->CreateAllocator(f, &info, nullptr, &allocator); });
  if (failure)
    fail(EPHOST_EP_FAIL, "ONNX Runtime plugin EP '{}': CreateAllocator for memory '{}' failed ({}): {}",
         factory_name_of(device), info.name, error_code_name(failure->code), failure->message);
  if (!allocator || !allocator->Alloc || !allocator->Free)
    fail(EPHOST_EP_FAIL, "ONNX Runtime plugin EP '{}': CreateAllocator for memory '{}' returned no allocator with "
         "Alloc and Free", factory_name_of(device), info.name);
  allocators_[device] = allocator;
  return allocator;
}

OrtDataTransferImpl* OrtEpLibrary::data_transfer_of(const OrtEpDevice* device) const {
  OrtEpFactory* f = factory_of(device);
  std::lock_guard<std::mutex> lock(memory_mutex_);
  auto it = transfers_.find(f);
  if (it != transfers_.end()) return it->second;
  const std::string file = std::filesystem::path(path_).filename().string();
  OrtDataTransferImpl* transfer = nullptr;
  auto failure = call_plugin(file.c_str(), path_.c_str(), "OrtEpFactory::CreateDataTransfer",
                             [&] { return f->CreateDataTransfer(f, &transfer); });
  if (failure)
    fail(EPHOST_EP_FAIL, "ONNX Runtime plugin EP '{}': CreateDataTransfer failed ({}): {}", factory_name_of(device),
         error_code_name(failure->code), failure->message);
  if (!transfer || !transfer->CopyTensors)
    fail(EPHOST_EP_FAIL, "ONNX Runtime plugin EP '{}' has memory of its own but CreateDataTransfer returned no "
         "OrtDataTransferImpl with CopyTensors: nothing can be copied to or from it", factory_name_of(device));
  transfers_[f] = transfer;
  return transfer;
}

OrtEpLibrary::~OrtEpLibrary() {
  {
    std::lock_guard<std::recursive_mutex> lock(live_libraries_mutex());
    auto& live = live_libraries();
    live.erase(std::remove(live.begin(), live.end(), this), live.end());
  }
  const std::string file = std::filesystem::path(path_).filename().string();
  // Device memory functions first: they belong to the factories.
  // (Named copies, not structured bindings: C++17 lambdas may not capture those, and clang refuses.)
  for (auto& entry : allocators_) {
    OrtEpFactory* f = factory_of(entry.first);
    OrtAllocator* allocator = entry.second;
    if (f->ReleaseAllocator)
      call_plugin_void(file.c_str(), path_.c_str(), "OrtEpFactory::ReleaseAllocator",
                       [&] { f->ReleaseAllocator(f, allocator); });
  }
  for (auto& entry : transfers_) {
    OrtDataTransferImpl* transfer = entry.second;
    if (transfer->Release)
      call_plugin_void(file.c_str(), path_.c_str(), "OrtDataTransferImpl::Release", [&] { transfer->Release(transfer); });
  }
  for (OrtEpDevice* d : ep_devices_) delete d;
  for (OrtEpFactory* f : factories_) {
    auto failure = call_plugin(file.c_str(), path_.c_str(), "ReleaseEpFactory", [&] { return release_(f); });
    if (failure) log_warning(fmt::format("ONNX Runtime plugin EP library {}: ReleaseEpFactory failed: {}", path_,
                                         failure->message));
  }
  keep_loaded_.reset();  // only now may the library be unloaded
}

}  // namespace ephost::ort_ep
