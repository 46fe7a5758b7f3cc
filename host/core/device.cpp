#include "core/device.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/plugin_call.h"

namespace ephost {
namespace {

std::string text_or_empty(const char* s) { return s ? s : ""; }

}  // namespace

Device::Device(const EphostPlugin* plugin, std::string plugin_name, std::string library, uint32_t index,
               const EphostDeviceInfo& info)
    : plugin_(plugin),
      plugin_name_(std::move(plugin_name)),
      library_(std::move(library)),
      index_(index),
      label_(plugin_name_ + ":" + std::to_string(index)),
      type_(info.device_type),
      vendor_(text_or_empty(info.vendor)),
      name_(text_or_empty(info.name)),
      driver_version_(text_or_empty(info.driver_version)),
      hardware_architecture_(text_or_empty(info.hardware_architecture)),
      memory_bytes_(info.memory_bytes),
      host_memory_usable_(info.host_memory_usable != 0),
      memory_kinds_(info.memory_kinds) {}

// `describe()` says which call failed and for what; it is built only when the call fails (copies and
// synchronizations are on every run's path). `marker` is the plugin function's name, for the fault
// reporter.
template <typename Describe, typename Fn>
void Device::call(const char* marker, Describe&& describe, Fn&& fn) const {
  std::optional<PluginCallFailure> failure = run_plugin_call(plugin_name_.c_str(), library_.c_str(), marker, fn);
  if (!failure) return;
  switch (failure->kind) {
    case PluginCallFailure::Kind::kStatus:
      fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} failed: {}", plugin_name_, index_, describe(), failure->detail);
    case PluginCallFailure::Kind::kNotAStatus:
      fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} returned {}, which is not a status created by status_create "
           "(or was released already)", plugin_name_, index_, describe(), failure->detail);
    case PluginCallFailure::Kind::kThrew:
      break;
  }
  fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} threw a C++ exception across the plugin ABI: {}", plugin_name_,
       index_, describe(), failure->detail);
}

EphostDeviceBuffer Device::allocate(uint64_t bytes, const std::string& what, EphostMemoryKind kind) const {
  EphostDeviceBuffer buffer{};
  // Zero-byte tensors still get a buffer of their own, so that every device tensor has one.
  const uint64_t asked = bytes == 0 ? 1 : bytes;
  call("device_allocate", [&] { return fmt::format("device_allocate of {} bytes for {}", asked, what); },
       [&] { return plugin_->device_allocate(index_, kind, asked, &buffer); });
  return buffer;
}

void Device::free(EphostDeviceBuffer buffer, EphostMemoryKind kind) const noexcept {
  run_plugin_release(plugin_name_.c_str(), library_.c_str(), "device_free",
                     [&] { plugin_->device_free(index_, kind, buffer); });
}

void Device::copy_to_device(EphostStream* stream, const void* src, EphostDeviceBuffer dst, uint64_t bytes,
                            const std::string& what) const {
  if (bytes == 0) return;
  call("copy_to_device", [&] { return fmt::format("copy_to_device of {} ({} bytes)", what, bytes); },
       [&] { return plugin_->copy_to_device(index_, stream, src, dst, bytes); });
}

void Device::copy_to_host(EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes,
                          const std::string& what) const {
  if (bytes == 0) return;
  call("copy_to_host", [&] { return fmt::format("copy_to_host of {} ({} bytes)", what, bytes); },
       [&] { return plugin_->copy_to_host(index_, stream, src, dst, bytes); });
}

void Device::copy_to(const Device& dst_device, EphostStream* stream, EphostDeviceBuffer src, EphostDeviceBuffer dst,
                     uint64_t bytes, const std::string& what) const {
  if (bytes == 0) return;
  call("copy_between_devices",
       [&] {
         return fmt::format("copy_between_devices of {} to device {} ({} bytes)", what, dst_device.index(), bytes);
       },
       [&] { return plugin_->copy_between_devices(stream, index_, src, dst_device.index(), dst, bytes); });
}

EphostStream* Device::create_stream(const std::string& what) const {
  EphostStream* stream = nullptr;
  call("stream_create", [&] { return "stream_create (for " + what + ")"; },
       [&] { return plugin_->stream_create(index_, &stream); });
  if (!stream)
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: stream_create (for {}) returned no stream", plugin_name_, index_,
         what);
  return stream;
}

void Device::synchronize(EphostStream* stream, const std::string& what) const {
  call("stream_synchronize", [&] { return "stream_synchronize (" + what + ")"; },
       [&] { return plugin_->stream_synchronize(stream); });
}

void Device::synchronize(EphostStream* stream, const char* why, const char* after_kind,
                         const std::string& after_name) const {
  call("stream_synchronize",
       [&] { return fmt::format("stream_synchronize ({}, after {} '{}')", why, after_kind, after_name); },
       [&] { return plugin_->stream_synchronize(stream); });
}

void Device::release_stream(EphostStream* stream) const noexcept {
  run_plugin_release(plugin_name_.c_str(), library_.c_str(), "stream_release",
                     [&] { plugin_->stream_release(stream); });
}

DeviceAllocation::DeviceAllocation(const Device& device, uint64_t bytes, const std::string& what)
    : device_(device), buffer_(device.allocate(bytes, what)), bytes_(bytes) {}

DeviceAllocation::~DeviceAllocation() { device_.free(buffer_); }

}  // namespace ephost
