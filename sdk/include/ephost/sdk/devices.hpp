// ephost plugin SDK — devices (plugin ABI 3): what a plugin that drives devices implements once for
// the whole library: enumerating its devices, their memory, copies and streams. Providers are then
// created per device (the Create callable takes the device index). See EPHOST_DEFINE_DEVICE_PLUGIN.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

struct DeviceDescription {
  EphostDeviceType type = EPHOST_DEVICE_GPU;
  std::string vendor;
  std::string name;
  std::string driver_version;
  std::string hardware_architecture;
  uint64_t memory_bytes = 0;
  // The device's kernels work on host memory: the host then gives its providers host memory.
  bool host_memory_usable = false;
  uint32_t memory_kinds = EPHOST_MEMORY_KIND_BIT(EPHOST_MEMORY_DEVICE);
};

using DeviceBuffer = EphostDeviceBuffer;

// The device side of a plugin. One instance per library, created when the host negotiates ABI 3,
// used from several threads at once. Every function may throw sdk::Error (or any exception): the glue
// turns it into a status naming the call. Streams and device-to-device copies are optional.
class Devices {
 public:
  virtual ~Devices() = default;
  // The devices, in the order that numbers them. Called once.
  virtual std::vector<DeviceDescription> enumerate() = 0;
  virtual DeviceBuffer allocate(uint32_t device, EphostMemoryKind kind, uint64_t bytes) = 0;
  virtual void free(uint32_t device, EphostMemoryKind kind, DeviceBuffer buffer) noexcept = 0;
  // With `stream` null: synchronous. With a stream: may be enqueued (done at synchronize).
  virtual void copy_to_device(uint32_t device, EphostStream* stream, const void* src, DeviceBuffer dst,
                              uint64_t bytes) = 0;
  virtual void copy_to_host(uint32_t device, EphostStream* stream, DeviceBuffer src, void* dst, uint64_t bytes) = 0;
  // Optional: device-to-device copies (else the host stages through host memory).
  virtual bool has_device_to_device_copy() const { return false; }
  virtual void copy_between_devices(EphostStream* stream, uint32_t src_device, DeviceBuffer src, uint32_t dst_device,
                                    DeviceBuffer dst, uint64_t bytes) {
    (void)stream, (void)src_device, (void)src, (void)dst_device, (void)dst, (void)bytes;
    fail(EPHOST_NOT_IMPLEMENTED, "copy_between_devices is not implemented");
  }
  // Optional: streams (else every copy and kernel is synchronous).
  virtual bool has_streams() const { return false; }
  virtual EphostStream* create_stream(uint32_t device) {
    (void)device;
    fail(EPHOST_NOT_IMPLEMENTED, "streams are not implemented");
  }
  virtual void synchronize(EphostStream* stream) { (void)stream; }
  virtual void release_stream(EphostStream* stream) noexcept { (void)stream; }
};

}  // namespace ephost::sdk
