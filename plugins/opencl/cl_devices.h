// The device side of the plugin (plugin ABI 3): one ephost device per OpenCL device of every platform,
// device memory as cl_mem (the host's offsets are byte offsets into it), copies and streams as commands
// on in-order queues.
#pragma once

#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

class OpenclDevices : public ephost::sdk::Devices {
 public:
  std::vector<ephost::sdk::DeviceDescription> enumerate() override;
  ephost::sdk::DeviceBuffer allocate(uint32_t device, EphostMemoryKind kind, uint64_t bytes) override;
  void free(uint32_t device, EphostMemoryKind kind, ephost::sdk::DeviceBuffer buffer) noexcept override;
  void copy_to_device(uint32_t device, EphostStream* stream, const void* src, ephost::sdk::DeviceBuffer dst,
                      uint64_t bytes) override;
  void copy_to_host(uint32_t device, EphostStream* stream, ephost::sdk::DeviceBuffer src, void* dst,
                    uint64_t bytes) override;
  bool has_device_to_device_copy() const override { return true; }
  void copy_between_devices(EphostStream* stream, uint32_t src_device, ephost::sdk::DeviceBuffer src,
                            uint32_t dst_device, ephost::sdk::DeviceBuffer dst, uint64_t bytes) override;
  bool has_streams() const override { return true; }
  EphostStream* create_stream(uint32_t device) override;
  void synchronize(EphostStream* stream) override;
  void release_stream(EphostStream* stream) noexcept override;
};

}  // namespace ephost_opencl
