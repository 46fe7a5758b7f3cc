// The host's hardware as ONNX Runtime's OrtHardwareDevices: the CPU, and the PCI display controllers
// (GPUs) and processing accelerators (NPUs) sysfs lists. What a factory's GetSupportedDevices is asked
// about.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {

// Enumerated once per process (sysfs root `sysfs`, for tests); the objects live for the process.
const std::vector<const OrtHardwareDevice*>& host_hardware_devices();
std::vector<std::unique_ptr<OrtHardwareDevice>> enumerate_hardware_devices(const std::string& sysfs = "/sys");

}  // namespace ephost::ort_ep
