#include "discovery/ort_adoption.h"

#include <fmt/format.h>

#include "core/device.h"
#include "discovery/plugin_call.h"
#include "ort_ep/library.h"
#include "ort_ep/ort_device.h"
#include "ort_ep/recognition.h"

namespace ephost {
namespace {

// The table behind an ONNX Runtime plugin EP's devices on host memory: no device functions, since their
// values stay in host memory (a device with memory of its own is an ort_ep::OrtDevice).
const EphostPlugin& no_device_functions() {
  static const EphostPlugin table{};
  return table;
}

int32_t ephost_device_type(OrtHardwareDeviceType type) {
  switch (type) {
    case OrtHardwareDeviceType_GPU: return EPHOST_DEVICE_GPU;
    case OrtHardwareDeviceType_NPU: return EPHOST_DEVICE_NPU;
    default: return EPHOST_DEVICE_CPU;
  }
}

// Fills `record` as the provider of factory `factory` of `ort`: its metadata and the devices it serves.
void describe_factory(const std::shared_ptr<ort_ep::OrtEpLibrary>& ort, size_t factory, PluginRecord& record) {
  record.name = ort->factory_names()[factory];
  record.vendor = ort->vendor_of(factory);
  record.version = ort->version_of(factory);
  // The adapter serves the plugin at the host's ABI (devices, profiling and run control are the host's).
  record.abi_version = EPHOST_PLUGIN_ABI_VERSION;
  record.sdk_version = fmt::format("ONNX Runtime plugin EP (API {}, factory built for API {})",
                                   ort->api_version_asked(), ort->factory_version_of(factory));
  // EPContext nodes whose source is the EP's name are its own.
  record.context_source_keys = {record.name};
  record.devices.clear();
  for (const OrtEpDevice* served : ort->served_devices(factory)) {
    const OrtEpDevice& d = *served;
    const OrtHardwareDevice& hw = *d.device;
    const std::string* description = hw.metadata.find("Description");
    const std::string device_name = description ? *description : d.ep_name;
    EphostDeviceInfo info{};
    info.struct_size = sizeof info;
    info.device_type = ephost_device_type(hw.type);
    info.vendor = hw.vendor.c_str();
    info.name = device_name.c_str();
    info.driver_version = "";
    info.hardware_architecture = "";
    const auto index = static_cast<uint32_t>(record.devices.size());
    // A device with memory of its own: the EP's allocator, data transfer and streams behind ABI 3.
    if (const OrtMemoryInfo* memory = ort_ep::OrtEpLibrary::device_memory_info(served)) {
      info.host_memory_usable = 0;
      info.memory_kinds = EPHOST_MEMORY_KIND_BIT(EPHOST_MEMORY_DEVICE);
      record.devices.push_back(
          std::make_unique<ort_ep::OrtDevice>(*ort, *served, *memory, record.name, index, info));
      continue;
    }
    info.host_memory_usable = 1;
    record.devices.push_back(std::make_unique<Device>(&no_device_functions(), record.name, record.path, index, info));
  }
  for (const OrtEpDevice* d : ort->ep_devices())
    if (ort->factory_name_of(d) == record.name)
      if (std::string why = ort->unserved_reason(d); !why.empty()) record.sdk_version += "; not listed: " + why;
  record.unsupported_devices = ort->unsupported_devices(factory);
  record.device_type = record.devices.empty() ? "" : device_type_name(record.devices.front()->type());
  record.ort = ort;
  record.ort_factory = static_cast<uint32_t>(factory);
}

}  // namespace

bool adopt_if_ort_plugin_ep(const std::shared_ptr<PluginLibrary>& library, PluginRecord& record,
                            std::vector<std::unique_ptr<PluginRecord>>& siblings) {
  const ort_ep::LibraryKind kind = ort_ep::recognize_library([&](const char* s) { return library->exports(s); });
  if (kind == ort_ep::LibraryKind::kOrtProviderBridge) throw PluginSkipped(ort_ep::provider_bridge_refusal());
  if (kind != ort_ep::LibraryKind::kOrtPluginEp) return false;
  auto create = reinterpret_cast<CreateEpApiFactoriesFn>(library->symbol(ORT_EP_CREATE_FACTORIES_SYMBOL));
  auto release = reinterpret_cast<ReleaseEpApiFactoryFn>(library->symbol(ORT_EP_RELEASE_FACTORY_SYMBOL));
  std::shared_ptr<ort_ep::OrtEpLibrary> ort;
  try {
    ort = std::make_shared<ort_ep::OrtEpLibrary>(create, release, record.path, library);
  } catch (const ort_ep::LibraryRefused& e) {
    throw PluginSkipped(e.what());
  }
  // The first factory is always served (OrtEpLibrary refuses the library otherwise).
  for (size_t factory : ort->served_factories()) {
    PluginRecord* target = &record;
    if (factory != 0) {
      siblings.push_back(std::make_unique<PluginRecord>());
      target = siblings.back().get();
      target->path = record.path;
      target->canonical_path = record.canonical_path;
      target->library = library;
    }
    describe_factory(ort, factory, *target);
  }
  return true;
}

}  // namespace ephost
