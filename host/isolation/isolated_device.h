// The device of an isolated provider whose device works on its own memory (plugin ABI 3): the host's
// side of device memory that stays in the provider host process. A buffer or stream here is an id
// (the EphostDeviceBuffer handle, the EphostStream pointer): the plugin's buffers and streams exist only
// in the provider host (served_device_memory.h), and each call below is one request to it over the
// isolated provider's socket, serialized with its other calls. Copies between host and device memory go
// through the shared arena, except those from or into the application's shared tensor memory
// (shared_region.h), which the provider host reads or writes where it is; copies between two devices of the same provider host stay in it. A copy to
// the device is sent in chunks without waiting for each reply: the provider host uploads a chunk while
// the host writes the next one into the arena.
//
// When the provider host process is lost, its buffers and streams die with it. The ids outlive it:
// each is made again in the next process when a request next names it (a stream empty, a buffer with
// undefined contents), except that a buffer whose whole contents came from host memory in one copy
// without a stream (what the executor does for constant initializers, once, when a session is created)
// is uploaded again from a copy kept here. So a session's runs after a restart read the same
// initializers, without the session uploading anything itself. Frees and stream releases are sent
// ahead of the provider's next request (they answer nothing); those of a process that is gone are
// dropped.
//
// Thread-safety: every method takes the isolated provider's lock (the shared provider host's).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/device.h"
#include "isolation/shared_region_pool.h"

namespace ephost {

class IsolatedProvider;
struct ProbedDevice;

namespace isolation {

class IsolatedDevice final : public Device {
 public:
  // Device `index` of plugin `plugin_name` (`library`), as the probe described it, served through
  // `owner`'s provider host process.
  IsolatedDevice(const IsolatedProvider& owner, const std::string& plugin_name, const std::string& library,
                 uint32_t index, const ProbedDevice& probed);

  // What the provider host's plugin said of the device when the provider was created there.
  void set_capabilities(bool has_streams, bool copies_between_devices) {
    has_streams_ = has_streams;
    copies_between_devices_ = copies_between_devices;
  }
  bool has_streams() const override { return has_streams_; }
  bool has_device_to_device_copy() const override { return copies_between_devices_; }

  EphostDeviceBuffer allocate(uint64_t bytes, const std::string& what,
                              EphostMemoryKind kind = EPHOST_MEMORY_DEVICE) const override;
  void free(EphostDeviceBuffer buffer, EphostMemoryKind kind = EPHOST_MEMORY_DEVICE) const noexcept override;
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
  // Shared memory (a region of a small pool, reused once nothing holds the output that lay there), so
  // that the copy of the output goes straight from the device into it; null below 4 KiB, when the
  // provider's isolation_shared_outputs is 0, or when every region of the pool still holds an output.
  std::shared_ptr<void> host_memory_for_output(uint64_t bytes) const override;

  // ---- for the isolated provider's compute (its lock held) ----
  // The id of `buffer` in the current process, made there again first when it was made in an earlier one.
  // The request reads (`read`) or writes `bytes` from the buffer's offset. A buffer made again without a
  // kept copy has undefined bytes until written: reading bytes not written since (a value of a run in
  // flight when the process was lost) throws EP_FAIL, so such a run fails instead of reading garbage.
  uint64_t buffer_id_locked(EphostDeviceBuffer buffer, uint64_t bytes, bool read) const;
  // The id of `stream` in the current process (0 for none), made again likewise.
  uint64_t stream_id_locked(EphostStream* stream) const;
  // Reserves ids for `count` device outputs of a compute; the first is returned.
  static uint64_t reserve_ids(uint64_t count);
  // Takes over output buffer `id` (`bytes`) the provider host kept for the host.
  void adopt_locked(uint64_t id, uint64_t bytes) const;
  // The device buffer of id `id`.
  static EphostDeviceBuffer handle(uint64_t id, uint64_t offset = 0);
  // The buffers not freed yet (takes the lock): what the session's plans and runs hold on the device.
  size_t buffers_held() const;

 private:
  struct Buffer {
    uint64_t bytes = 0;
    uint64_t generation = 0;  // the provider host process it exists in
    std::shared_ptr<const std::string> contents;  // uploaded again in a new process (see the header)
    // Made again without contents: only the byte ranges written since ([begin, end)) may be read.
    bool undefined = false;
    std::vector<std::pair<uint64_t, uint64_t>> written;
  };
  void synchronize_id(EphostStream* stream, const std::string& what) const;
  // A copy of host bytes `src` to buffer `id` at `offset` staged through the arena, in chunks.
  void copy_through_arena_locked(uint64_t stream_id, const void* src, uint64_t id, uint64_t offset, uint64_t bytes,
                                 const std::string& call) const;
  // Makes buffer `id` of a lost process again in the current one, with its kept contents if any.
  void revive_locked(uint64_t id, Buffer& b) const;
  Buffer& known_buffer_locked(uint64_t id, const char* call) const;

  const IsolatedProvider& owner_;
  // Set under the lock at each process start, read by the executor without it.
  std::atomic<bool> has_streams_{false};
  std::atomic<bool> copies_between_devices_{false};
  mutable std::unordered_map<uint64_t, Buffer> buffers_;
  mutable std::unordered_map<uint64_t, uint64_t> streams_;  // id -> the generation it exists in
  // Streams with nothing queued since the provider host last finished them: a copy to host memory
  // finishes its stream there (the host reads the shared memory once the reply is in), so the
  // synchronization a run ends with, after its outputs were copied to the host, needs no request.
  // A copy to the device on a stream is only queued (its arena bytes are kept until the stream is
  // finished: ProviderProcess::PendingUploads), so the compute after it is sent at once, as in process.
  mutable std::unordered_set<uint64_t> idle_streams_;
  // host_memory_for_output's regions (their own lock: handed out outside the provider's).
  mutable std::mutex output_regions_mutex_;
  mutable SharedRegionPool output_regions_{8};
};

}  // namespace isolation
}  // namespace ephost
