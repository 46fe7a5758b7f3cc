#include "ort_ep/ort_device.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/tensor.h"
#include "ort_ep/library.h"
#include "ort_ep/plugin_call.h"

namespace ephost::ort_ep {
namespace {

// The plugin table behind the Device base: empty, since every device function is overridden here.
const EphostPlugin& no_plugin_table() {
  static const EphostPlugin table{};
  return table;
}

char* at_offset(EphostDeviceBuffer buffer) { return static_cast<char*>(buffer.handle) + buffer.offset; }

}  // namespace

OrtDevice::OrtDevice(const OrtEpLibrary& library, const OrtEpDevice& ep_device, const OrtMemoryInfo& memory,
                     const std::string& plugin_name, uint32_t index, const EphostDeviceInfo& info)
    : Device(&no_plugin_table(), plugin_name, library.path(), index, info),
      library_(library),
      ep_device_(ep_device),
      memory_(memory),
      library_path_(library.path()) {}

template <typename Describe, typename Fn>
void OrtDevice::call(const char* marker, Describe&& describe, Fn&& fn) const {
  if (auto failure = call_plugin(plugin_name().c_str(), library_path_.c_str(), marker, std::forward<Fn>(fn)))
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} failed ({}): {}", plugin_name(), index(), describe(),
         error_code_name(failure->code), failure->message);
}

bool OrtDevice::has_streams() const {
  OrtEpFactory* f = library_.factory_of(&ep_device_);
  if (f->ort_version_supported < 23 || !f->IsStreamAware || !f->CreateSyncStreamForDevice) return false;
  bool aware = false;
  call_plugin_void(plugin_name().c_str(), library_path_.c_str(), "OrtEpFactory::IsStreamAware",
                   [&] { aware = f->IsStreamAware(f); });
  return aware;
}

EphostDeviceBuffer OrtDevice::allocate(uint64_t bytes, const std::string& what, EphostMemoryKind kind) const {
  if (kind != EPHOST_MEMORY_DEVICE)
    fail(EPHOST_INVALID_ARGUMENT, "provider '{}' device {}: only device memory is offered (allocation for {})",
         plugin_name(), index(), what);
  OrtAllocator* allocator = library_.allocator_of(&ep_device_, memory_);
  void* p = nullptr;
  const uint64_t asked = bytes == 0 ? 1 : bytes;
  call("OrtAllocator::Alloc", [&] { return fmt::format("OrtAllocator::Alloc of {} bytes for {}", asked, what); },
       [&]() -> OrtStatus* {
         p = allocator->Alloc(allocator, static_cast<size_t>(asked));
         return nullptr;
       });
  if (!p)
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: OrtAllocator::Alloc of {} bytes for {} returned NULL (out of "
         "device memory?)", plugin_name(), index(), asked, what);
  return EphostDeviceBuffer{p, 0};
}

void OrtDevice::free(EphostDeviceBuffer buffer, EphostMemoryKind) const noexcept {
  OrtAllocator* allocator = nullptr;
  try {
    allocator = library_.allocator_of(&ep_device_, memory_);
  } catch (...) {
    return;  // nothing was allocated then
  }
  call_plugin_void(plugin_name().c_str(), library_path_.c_str(), "OrtAllocator::Free",
                   [&] { allocator->Free(allocator, buffer.handle); });
}

OrtSyncStream* OrtDevice::own_stream(EphostStream* stream) const {
  if (!stream) return nullptr;
  auto* s = reinterpret_cast<OrtSyncStream*>(stream);
  if (s->magic != Magic::kSyncStream)
    fail(EPHOST_FAIL, "provider '{}' device {}: handed a stream it did not make (internal error)", plugin_name(),
         index());
  return s;
}

void OrtDevice::copy(EphostStream* stream, Tensor& src, Tensor& dst, const std::string& what) const {
  OrtDataTransferImpl* transfer = library_.data_transfer_of(&ep_device_);
  OrtValue from, to;
  from.tensor = &src;
  to.tensor = &dst;
  const OrtValue* sources[1] = {&from};
  OrtValue* destinations[1] = {&to};
  OrtSyncStream* streams[1] = {own_stream(stream)};
  call("OrtDataTransferImpl::CopyTensors",
       [&] { return fmt::format("CopyTensors of {} ({} bytes)", what, src.byte_size()); },
       [&] { return transfer->CopyTensors(transfer, sources, destinations, streams[0] ? streams : nullptr, 1); });
}

void OrtDevice::copy_to_device(EphostStream* stream, const void* src, EphostDeviceBuffer dst, uint64_t bytes,
                               const std::string& what) const {
  if (bytes == 0) return;
  const std::vector<int64_t> shape{static_cast<int64_t>(bytes)};
  Tensor host = Tensor::borrow(EPHOST_ELEMENT_UINT8, shape, const_cast<void*>(src));
  Tensor device = Tensor::on_device(*this, EPHOST_ELEMENT_UINT8, shape, dst, nullptr);
  copy(stream, host, device, what);
}

void OrtDevice::copy_to_host(EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes,
                             const std::string& what) const {
  if (bytes == 0) return;
  const std::vector<int64_t> shape{static_cast<int64_t>(bytes)};
  Tensor device = Tensor::on_device(*this, EPHOST_ELEMENT_UINT8, shape, src, nullptr);
  Tensor host = Tensor::borrow(EPHOST_ELEMENT_UINT8, shape, dst);
  copy(stream, device, host, what);
}

void OrtDevice::copy_to(const Device& dst_device, EphostStream*, EphostDeviceBuffer, EphostDeviceBuffer, uint64_t,
                        const std::string& what) const {
  fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' device {}: no copy to device {} ({}): ONNX Runtime EPs' copies "
       "between devices go through host memory", plugin_name(), index(), dst_device.label(), what);
}

EphostStream* OrtDevice::create_stream(const std::string& what) const {
  OrtEpFactory* f = library_.factory_of(&ep_device_);
  OrtSyncStreamImpl* impl = nullptr;
  call("OrtEpFactory::CreateSyncStreamForDevice", [&] { return "CreateSyncStreamForDevice (for " + what + ")"; },
       [&] { return f->CreateSyncStreamForDevice(f, &memory_.device, nullptr, &impl); });
  if (!impl || !impl->Release)
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: CreateSyncStreamForDevice (for {}) returned no stream with a "
         "Release", plugin_name(), index(), what);
  auto* stream = new OrtSyncStream();
  stream->impl = impl;
  stream->memory_info = &memory_;
  return reinterpret_cast<EphostStream*>(stream);
}

void OrtDevice::synchronize(EphostStream* stream, const std::string& what) const {
  OrtSyncStream* s = own_stream(stream);
  if (!s || !s->impl->Flush) return;
  call("OrtSyncStreamImpl::Flush", [&] { return "Flush (" + what + ")"; }, [&] { return s->impl->Flush(s->impl); });
  ++s->sync_id;
}

void OrtDevice::synchronize(EphostStream* stream, const char* why, const char* after_kind,
                            const std::string& after_name) const {
  OrtSyncStream* s = own_stream(stream);
  if (!s || !s->impl->Flush) return;
  call("OrtSyncStreamImpl::Flush", [&] { return fmt::format("Flush ({}, after {} '{}')", why, after_kind, after_name); },
       [&] { return s->impl->Flush(s->impl); });
  ++s->sync_id;
}

void OrtDevice::release_stream(EphostStream* stream) const noexcept {
  auto* s = reinterpret_cast<OrtSyncStream*>(stream);
  if (!s || s->magic != Magic::kSyncStream) return;
  call_plugin_void(plugin_name().c_str(), library_path_.c_str(), "OrtSyncStreamImpl::Release",
                   [&] { s->impl->Release(s->impl); });
  s->magic = Magic{};
  delete s;
}

const OrtMemoryInfo& memory_info_of(const Tensor& tensor) {
  if (const auto* d = dynamic_cast<const OrtDevice*>(tensor.device())) return d->memory_info();
  return cpu_memory_info();
}

void* device_pointer(const Tensor& tensor) {
  if (!dynamic_cast<const OrtDevice*>(tensor.device())) return nullptr;
  return at_offset(tensor.device_buffer());
}

}  // namespace ephost::ort_ep
