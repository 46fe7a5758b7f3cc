// The device memory and streams of a provider host process (plugin ABI 3 devices that work on their own
// memory), named by the ids the host chose (isolation/isolated_device.h is the host's side). Buffers
// are allocated through the plugin's devices in this process and never leave it: the host holds only
// the ids. A compute's device outputs are adopted here under ids the host reserved for them.
//
// Copies between host memory and a device go through the shared arena. A copy to the device given a
// stream is only enqueued on it (plugin ABI 3: the work enqueued after it on that stream runs after
// it), and its arena bytes are pending until the stream is finished: settle_uploads() finishes it, and
// the server calls it before anything else writes the arena or maps it again. A copy to the host is
// enqueued after the uploads of its own stream (settling another stream's first) and finishes its
// stream before the reply, since the host reads the bytes then.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "core/tensor.h"
#include "ephost/ephost_plugin.h"
#include "isolation/shared_arena.h"

namespace ephost {
class Device;
struct PluginRecord;
}  // namespace ephost

namespace ephost::isolation {

class ServedDeviceMemory {
 public:
  ServedDeviceMemory() = default;
  ~ServedDeviceMemory();
  ServedDeviceMemory(const ServedDeviceMemory&) = delete;
  ServedDeviceMemory& operator=(const ServedDeviceMemory&) = delete;

  // The plugin whose devices serve the requests (loaded in this process); set once it is.
  void serve(const PluginRecord& record) { record_ = &record; }

  void allocate(uint64_t id, uint64_t device_index, uint64_t bytes);
  // Unknown ids are ignored: they were allocated by a process that is gone.
  void free(uint64_t id);
  // A device tensor of buffer `id` at `offset` holding `bytes` (checked against the buffer's size).
  Tensor tensor(uint64_t id, uint64_t offset, int32_t elem_type, std::vector<int64_t> shape) const;
  // Keeps a compute's device output `tensor` as buffer `id` (its allocation lives until freed).
  void adopt(uint64_t id, const Tensor& tensor);

  // `src` is arena memory, up to `arena_end` (the arena offset after it).
  void copy_to_device(uint64_t stream, uint64_t id, uint64_t offset, const void* src, uint64_t bytes,
                      size_t arena_end);
  void copy_to_host(uint64_t stream, uint64_t id, uint64_t offset, void* dst, uint64_t bytes);
  void copy_on_device(uint64_t stream, uint64_t src, uint64_t src_offset, uint64_t dst, uint64_t dst_offset,
                      uint64_t bytes);

  // Finishes the stream whose queued uploads still read the arena (none: nothing to do).
  void settle_uploads();
  // The arena offset after the bytes queued uploads still read (0: none).
  size_t pending_arena_end() const { return pending_stream_ ? pending_end_ : 0; }

  void create_stream(uint64_t id, uint64_t device_index);
  void synchronize(uint64_t id);
  void release_stream(uint64_t id);
  // The plugin's stream of id `id`, null for 0 (no stream).
  EphostStream* stream(uint64_t id) const;
  // The device of stream `id`, or null for 0.
  const Device* stream_device(uint64_t id) const;
  const Device& device(uint64_t device_index) const;

 private:
  struct Buffer {
    std::shared_ptr<void> holder;  // the allocation: freed through the plugin when the last holder goes
    EphostDeviceBuffer buffer{};
    const Device* device = nullptr;
    uint64_t bytes = 0;
  };
  struct Stream {
    const Device* device = nullptr;
    EphostStream* stream = nullptr;
  };
  const Buffer& buffer(uint64_t id, uint64_t offset, uint64_t bytes) const;
  static EphostDeviceBuffer at(const Buffer& b, uint64_t offset) {
    EphostDeviceBuffer out = b.buffer;
    out.offset += offset;
    return out;
  }
  // Waits for a copy enqueued on `stream` (0: none, nothing to wait for).
  void finish(uint64_t stream, const char* what);

  const PluginRecord* record_ = nullptr;
  std::map<uint64_t, Buffer> buffers_;
  std::map<uint64_t, Stream> streams_;
  uint64_t pending_stream_ = 0;  // the stream with uploads queued from the arena, up to pending_end_
  size_t pending_end_ = 0;
};

}  // namespace ephost::isolation
