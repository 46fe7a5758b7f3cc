// A device a plugin drives (plugin ABI 3), as the host holds it: what the plugin said of it, and the
// host's one doorway to the plugin's device functions (memory, copies, streams): one typed method per
// plugin function, each owning its checks and error wording, in the same style as the provider door
// (host/provider/). Every call is made through core/plugin_call.h: marked for the fault reporter,
// fenced against C++ exceptions thrown across the ABI, and its status read only when it is one the
// host created; a failure becomes an ephost::Error (EP_FAIL) naming the provider, the device and the
// call. The host never dereferences device
// memory: a DeviceBuffer is a handle it only hands back to the plugin.
//
// The memory, copy and stream methods are virtual: a device of an ONNX Runtime plugin EP
// (ort_ep/ort_device.h) serves them through the EP's allocator, OrtDataTransferImpl and sync streams
// instead of a plugin table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ephost/ephost_plugin.h"

namespace ephost {

class Device {
 public:
  // `plugin` is the plugin's table (valid while its library is loaded, i.e. while the env lives);
  // `library` its path, for fault reports.
  Device(const EphostPlugin* plugin, std::string plugin_name, std::string library, uint32_t index,
         const EphostDeviceInfo& info);
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& plugin_name() const { return plugin_name_; }
  uint32_t index() const { return index_; }
  // "<plugin>:<index>": how users name the device.
  const std::string& label() const { return label_; }
  int32_t type() const { return type_; }
  const std::string& vendor() const { return vendor_; }
  const std::string& name() const { return name_; }
  const std::string& driver_version() const { return driver_version_; }
  const std::string& hardware_architecture() const { return hardware_architecture_; }
  uint64_t memory_bytes() const { return memory_bytes_; }
  // The device's kernels work on host memory: its values live there and are never copied.
  bool host_memory_usable() const { return host_memory_usable_; }
  uint32_t memory_kinds() const { return memory_kinds_; }
  virtual bool has_streams() const { return plugin_->stream_create != nullptr; }
  virtual bool has_device_to_device_copy() const { return plugin_->copy_between_devices != nullptr; }

  // Memory. `what` names the value or purpose in errors ("value 'x'", "memory-pattern block").
  virtual EphostDeviceBuffer allocate(uint64_t bytes, const std::string& what,
                              EphostMemoryKind kind = EPHOST_MEMORY_DEVICE) const;
  virtual void free(EphostDeviceBuffer buffer, EphostMemoryKind kind = EPHOST_MEMORY_DEVICE) const noexcept;

  // Copies; `stream` may be null (synchronous). `what` names the value copied.
  virtual void copy_to_device(EphostStream* stream, const void* src, EphostDeviceBuffer dst, uint64_t bytes,
                      const std::string& what) const;
  virtual void copy_to_host(EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes,
                    const std::string& what) const;
  // From this device to `dst_device` (same plugin, copy_between_devices present).
  virtual void copy_to(const Device& dst_device, EphostStream* stream, EphostDeviceBuffer src, EphostDeviceBuffer dst,
               uint64_t bytes, const std::string& what) const;

  // Streams (has_streams()). `what` names the work the stream is made for, in errors.
  virtual EphostStream* create_stream(const std::string& what) const;
  virtual void synchronize(EphostStream* stream, const std::string& what) const;
  // The same, naming in errors why it waits (static text) and the last work enqueued on the stream.
  virtual void synchronize(EphostStream* stream, const char* why, const char* after_kind,
                           const std::string& after_name) const;
  virtual void release_stream(EphostStream* stream) const noexcept;

  // Host memory of at least `bytes` for a graph output that is copied from this device and then read by
  // the application alone: memory this device's copy_to_host fills best (an isolated device: shared
  // memory its provider host writes straight into, isolated_device.h). The pointer is the memory's
  // first byte and holds it. Null (the default): ordinary host memory is as good.
  virtual std::shared_ptr<void> host_memory_for_output(uint64_t /*bytes*/) const { return nullptr; }

 private:
  template <typename Describe, typename Fn>
  void call(const char* marker, Describe&& describe, Fn&& fn) const;

  const EphostPlugin* plugin_;
  std::string plugin_name_;
  std::string library_;
  uint32_t index_;
  std::string label_;
  int32_t type_;
  std::string vendor_, name_, driver_version_, hardware_architecture_;
  uint64_t memory_bytes_;
  bool host_memory_usable_;
  uint32_t memory_kinds_;
};

// Device memory the host owns: freed through the plugin when the last Tensor sharing it goes.
class DeviceAllocation {
 public:
  DeviceAllocation(const Device& device, uint64_t bytes, const std::string& what);
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  const Device& device() const { return device_; }
  EphostDeviceBuffer buffer() const { return buffer_; }
  uint64_t bytes() const { return bytes_; }

 private:
  const Device& device_;
  EphostDeviceBuffer buffer_{};
  uint64_t bytes_;
};

}  // namespace ephost
