// A device of an ONNX Runtime plugin EP whose memory is its own (an EP device whose factory added an
// allocator info not on the CPU, EpDevice_AddAllocatorInfo): ephost's plugin ABI 3 device memory, copies
// and streams, served by the EP's factory instead of a plugin table:
//   allocate / free       OrtEpFactory::CreateAllocator for that memory info (made once), Alloc / Free;
//                         the buffer's handle is the pointer Alloc returned, `offset` bytes further on
//                         where the host places several values in one block;
//   copy_to_device / host OrtEpFactory::CreateDataTransfer (made once per factory), CopyTensors on one
//                         pair of byte tensors, on the run's stream when the factory is stream aware;
//   streams               OrtEpFactory::CreateSyncStreamForDevice (IsStreamAware); synchronize is Flush.
// No copies between two devices of the EP (they go through host memory). The allocator and the data
// transfer are the library's (OrtEpLibrary), released before its factories.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {

class OrtEpLibrary;

class OrtDevice final : public Device {
 public:
  // `ep_device` is one of `library`'s devices, `memory` its memory info of device memory; `index` its
  // ephost device index among the library's served devices.
  OrtDevice(const OrtEpLibrary& library, const OrtEpDevice& ep_device, const OrtMemoryInfo& memory,
            const std::string& plugin_name, uint32_t index, const EphostDeviceInfo& info);

  const OrtMemoryInfo& memory_info() const { return memory_; }
  const OrtEpDevice& ep_device() const { return ep_device_; }

  bool has_streams() const override;
  bool has_device_to_device_copy() const override { return false; }
  EphostDeviceBuffer allocate(uint64_t bytes, const std::string& what, EphostMemoryKind kind) const override;
  void free(EphostDeviceBuffer buffer, EphostMemoryKind kind) const noexcept override;
  void copy_to_device(EphostStream* stream, const void* src, EphostDeviceBuffer dst, uint64_t bytes,
                      const std::string& what) const override;
  void copy_to_host(EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes,
                    const std::string& what) const override;
  void copy_to(const Device& dst_device, EphostStream* stream, EphostDeviceBuffer src, EphostDeviceBuffer dst,
               uint64_t bytes, const std::string& what) const override;
  EphostStream* create_stream(const std::string& what) const override;
  void synchronize(EphostStream* stream, const std::string& what) const override;
  void synchronize(EphostStream* stream, const char* why, const char* after_kind,
                   const std::string& after_name) const override;
  void release_stream(EphostStream* stream) const noexcept override;

 private:
  // Runs one plugin call marked `marker`; throws EP_FAIL "provider '<name>' device <i>: <describe()> failed: ...".
  template <typename Describe, typename Fn>
  void call(const char* marker, Describe&& describe, Fn&& fn) const;
  // CopyTensors of `bytes` bytes from `src` to `dst` (one of them host memory) on `stream`.
  void copy(EphostStream* stream, Tensor& src, Tensor& dst, const std::string& what) const;
  OrtSyncStream* own_stream(EphostStream* stream) const;

  const OrtEpLibrary& library_;
  const OrtEpDevice& ep_device_;
  OrtMemoryInfo memory_;
  std::string library_path_;
};

// The memory info of the device memory `tensor` lives in: its OrtDevice's, or the host's CPU memory info.
const OrtMemoryInfo& memory_info_of(const Tensor& tensor);

// Where a device tensor's elements are, as the EP's allocator handed them out (its pointer, `offset`
// bytes on); null for a device tensor that is not an ONNX Runtime EP's.
void* device_pointer(const Tensor& tensor);

}  // namespace ephost::ort_ep
