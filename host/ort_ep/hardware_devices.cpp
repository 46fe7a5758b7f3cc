#include "ort_ep/hardware_devices.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ephost::ort_ep {
namespace {

std::string read_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

uint32_t hex_value(const std::string& text) {
  try {
    return static_cast<uint32_t>(std::stoul(text, nullptr, 16));
  } catch (...) {
    return 0;
  }
}

std::unique_ptr<OrtHardwareDevice> cpu_device() {
  auto d = std::make_unique<OrtHardwareDevice>();
  d->type = OrtHardwareDeviceType_CPU;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("vendor_id", 0) == 0 && d->vendor.empty()) {
      d->vendor = line.substr(line.find(':') + 2);
    } else if (line.rfind("model name", 0) == 0) {
      d->metadata.set("Description", line.substr(line.find(':') + 2));
      break;
    }
  }
  // PCI vendor ids of the CPU makers, as ONNX Runtime reports them.
  if (d->vendor == "GenuineIntel") d->vendor_id = 0x8086, d->vendor = "Intel";
  else if (d->vendor == "AuthenticAMD") d->vendor_id = 0x1022, d->vendor = "AMD";
  if (d->vendor.empty()) d->vendor = "unknown";
  return d;
}

}  // namespace

std::vector<std::unique_ptr<OrtHardwareDevice>> enumerate_hardware_devices(const std::string& sysfs) {
  std::vector<std::unique_ptr<OrtHardwareDevice>> devices;
  devices.push_back(cpu_device());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(sysfs) / "bus/pci/devices", ec)) {
    const uint32_t pci_class = hex_value(read_line(entry.path() / "class"));
    const uint32_t base_class = pci_class >> 16;
    // 0x03: display controller (a GPU); 0x12: processing accelerator (an NPU).
    if (base_class != 0x03 && base_class != 0x12) continue;
    auto d = std::make_unique<OrtHardwareDevice>();
    d->type = base_class == 0x03 ? OrtHardwareDeviceType_GPU : OrtHardwareDeviceType_NPU;
    d->vendor_id = hex_value(read_line(entry.path() / "vendor"));
    d->device_id = hex_value(read_line(entry.path() / "device"));
    std::ostringstream vendor;
    vendor << "PCI vendor 0x" << std::hex << d->vendor_id;
    d->vendor = vendor.str();
    d->metadata.set("pci_bus_id", entry.path().filename().string());
    devices.push_back(std::move(d));
  }
  return devices;
}

const std::vector<const OrtHardwareDevice*>& host_hardware_devices() {
  static const auto* list = [] {
    auto* owned = new std::vector<std::unique_ptr<OrtHardwareDevice>>(enumerate_hardware_devices());
    auto* views = new std::vector<const OrtHardwareDevice*>();
    for (const auto& d : *owned) views->push_back(d.get());
    return views;
  }();
  return *list;
}

}  // namespace ephost::ort_ep
