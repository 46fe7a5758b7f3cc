// What the probe saw of a device (plugin_record.h's ProbedDevice) as the EphostDeviceInfo a plugin
// describes it with: for a device whose plugin is not loaded in this process (the application API's
// device list, an isolated provider's device).
#pragma once

#include "ephost/ephost_plugin.h"

namespace ephost {

struct ProbedDevice;

// The type by its name (a name this host does not know reads as EPHOST_DEVICE_ACCELERATOR); the
// strings point into `probed` (valid while it lives); struct_size left 0.
EphostDeviceInfo device_info_of(const ProbedDevice& probed);

}  // namespace ephost
