#include "discovery/plugin_record.h"

#include "core/device.h"

#include "discovery/plugin_library.h"

namespace ephost {

PluginRecord::PluginRecord() = default;
PluginRecord::~PluginRecord() = default;

const char* device_type_name(int32_t device_type) {
  switch (device_type) {
    case EPHOST_DEVICE_CPU: return "cpu";
    case EPHOST_DEVICE_GPU: return "gpu";
    case EPHOST_DEVICE_NPU: return "npu";
    case EPHOST_DEVICE_ACCELERATOR: return "accelerator";
    default: return "";
  }
}

}  // namespace ephost
