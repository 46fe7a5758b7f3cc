#include "discovery/probed_device_info.h"

#include "discovery/plugin_record.h"

namespace ephost {

EphostDeviceInfo device_info_of(const ProbedDevice& probed) {
  EphostDeviceInfo info{};
  info.device_type = EPHOST_DEVICE_ACCELERATOR;
  for (int32_t type : {EPHOST_DEVICE_CPU, EPHOST_DEVICE_GPU, EPHOST_DEVICE_NPU})
    if (probed.type == device_type_name(type)) info.device_type = type;
  info.vendor = probed.vendor.c_str();
  info.name = probed.name.c_str();
  info.driver_version = probed.driver_version.c_str();
  info.hardware_architecture = probed.hardware_architecture.c_str();
  info.memory_bytes = probed.memory_bytes;
  info.host_memory_usable = probed.host_memory_usable ? 1 : 0;
  info.memory_kinds = probed.memory_kinds;
  return info;
}

}  // namespace ephost
