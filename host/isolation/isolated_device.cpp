#include "isolation/isolated_device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "discovery/plugin_record.h"
#include "discovery/probed_device_info.h"
#include "isolation/isolated_provider.h"
#include "isolation/shared_region.h"
#include "isolation/shared_region_pool.h"
#include "isolation/wire.h"

namespace ephost::isolation {
namespace {

// Ids are never reused in this process, so one of a process that is gone names nothing in the next.
std::atomic<uint64_t> next_id{1};

uint64_t id_of(EphostStream* stream) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(stream)); }

// A copy between host and device memory goes in chunks: the provider host uploads one while the host
// writes the next into the arena (or copies one into the arena while the host reads the last one out), so
// the two copies overlap instead of adding up. At most kMaxChunks of at least kMinChunk bytes: each chunk
// is a request (a wake-up of the other process), and the part that cannot overlap is one chunk.
constexpr uint64_t kMinChunk = uint64_t{1} << 20;
constexpr uint64_t kMaxChunks = 4;

uint64_t transfer_chunk(uint64_t bytes) {
  const uint64_t quarter = (bytes + kMaxChunks - 1) / kMaxChunks;
  return std::max(kMinChunk, (quarter + 65535) & ~uint64_t{65535});
}


}  // namespace

IsolatedDevice::IsolatedDevice(const IsolatedProvider& owner, const std::string& plugin_name,
                               const std::string& library, uint32_t index, const ProbedDevice& probed)
    : Device(nullptr, plugin_name, library, index, device_info_of(probed)), owner_(owner) {}

uint64_t IsolatedDevice::reserve_ids(uint64_t count) { return next_id.fetch_add(count); }

EphostDeviceBuffer IsolatedDevice::handle(uint64_t id, uint64_t offset) {
  return EphostDeviceBuffer{reinterpret_cast<void*>(static_cast<uintptr_t>(id)), offset};
}

size_t IsolatedDevice::buffers_held() const {
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  return buffers_.size();
}

IsolatedDevice::Buffer& IsolatedDevice::known_buffer_locked(uint64_t id, const char* call) const {
  auto it = buffers_.find(id);
  if (it == buffers_.end())
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} was handed a buffer this device does not hold (freed, or "
         "another device's)", plugin_name(), index(), call);
  return it->second;
}

EphostDeviceBuffer IsolatedDevice::allocate(uint64_t bytes, const std::string& what, EphostMemoryKind kind) const {
  if (kind != EPHOST_MEMORY_DEVICE)
    fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' device {}: only device memory is allocated in a provider host "
         "process, not memory kind {} (for {}); run the provider in process (ep.{}.isolation=in_process)",
         plugin_name(), index(), static_cast<int>(kind), what, plugin_name());
  const uint64_t asked = bytes == 0 ? 1 : bytes;  // as in process: every device tensor has a buffer of its own
  const std::string call = fmt::format("device_allocate of {} bytes for {}", asked, what);
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  owner_.ensure_process_locked(call);
  const uint64_t id = reserve_ids(1);
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kDeviceAllocate)).u64(owner_.client_).u64(id).u64(index()).u64(asked);
  owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
  buffers_[id] = Buffer{asked, owner_.generation_, nullptr, false, {}};
  return handle(id);
}

void IsolatedDevice::free(EphostDeviceBuffer buffer, EphostMemoryKind) const noexcept {
  const uint64_t id = reinterpret_cast<uintptr_t>(buffer.handle);
  try {
    std::lock_guard<std::mutex> lock(owner_.mutex_);
    auto it = buffers_.find(id);
    if (it == buffers_.end()) return;
    const uint64_t generation = it->second.generation;
    buffers_.erase(it);
    // A buffer of a process that is gone went with it.
    if (generation != owner_.generation_ || !owner_.process_ || !owner_.process_->alive() ||
        owner_.created_generation_ != owner_.generation_)
      return;
    MessageWriter m;
    m.u32(static_cast<uint32_t>(Op::kDeviceFree)).u64(owner_.client_).u64(id);
    owner_.post_request_locked(m.data());
  } catch (...) {
    // A process lost while the free went out took the buffer with it.
  }
}

uint64_t IsolatedDevice::buffer_id_locked(EphostDeviceBuffer buffer, uint64_t bytes, bool read) const {
  const uint64_t id = reinterpret_cast<uintptr_t>(buffer.handle);
  Buffer& b = known_buffer_locked(id, "a request");
  auto lost = [&] {
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: a value this run placed on the device was in a provider host "
         "process lost meanwhile; the next run runs in the new process", plugin_name(), index());
  };
  if (b.generation != owner_.generation_) {
    if (read && !b.contents) lost();
    revive_locked(id, b);
  }
  if (!b.undefined) return id;
  const uint64_t begin = buffer.offset, end = buffer.offset + bytes;
  if (!read) {
    if (begin == 0 && end >= b.bytes) {
      b.undefined = false;  // written whole: defined again
      b.written.clear();
    } else if (std::find(b.written.begin(), b.written.end(), std::make_pair(begin, end)) == b.written.end()) {
      b.written.emplace_back(begin, end);
    }
    return id;
  }
  for (const auto& range : b.written)
    if (range.first <= begin && end <= range.second) return id;
  lost();
  return id;
}

void IsolatedDevice::revive_locked(uint64_t id, Buffer& b) const {
  // Made in a process that is gone: made again here, with its contents when they came from the host.
  const std::string call = fmt::format("device_allocate of {} bytes (a buffer made again in a new provider host "
                                       "process)", b.bytes);
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kDeviceAllocate)).u64(owner_.client_).u64(id).u64(index()).u64(b.bytes);
  owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
  b.generation = owner_.generation_;
  if (b.contents) {
    owner_.settle_uploads_locked();
    SharedArena& arena = owner_.process_->arena();
    arena.reserve(b.contents->size());
    std::memcpy(arena.base(), b.contents->data(), b.contents->size());
    MessageWriter copy;
    copy.u32(static_cast<uint32_t>(Op::kCopyToDevice)).u64(owner_.client_).u64(0).u64(id).u64(0)
        .u64(b.contents->size()).u64(arena.size()).u64(0).u64(0);
    owner_.request_locked(copy.data(), "copy_to_device (contents uploaded again in a new provider host process)",
                          owner_.settings_.call_timeout);
  }
  b.undefined = !b.contents;
  b.written.clear();
}

uint64_t IsolatedDevice::stream_id_locked(EphostStream* stream) const {
  const uint64_t id = id_of(stream);
  if (!id) return 0;
  auto it = streams_.find(id);
  if (it == streams_.end())
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: a stream this device did not create was named", plugin_name(),
         index());
  idle_streams_.erase(id);  // the request it is named in may queue work on it
  if (it->second == owner_.generation_) return id;
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kStreamCreate)).u64(owner_.client_).u64(id).u64(index());
  owner_.request_locked(m.data(), "stream_create (a stream made again in a new provider host process)",
                        owner_.settings_.call_timeout);
  it->second = owner_.generation_;
  return id;
}

void IsolatedDevice::adopt_locked(uint64_t id, uint64_t bytes) const {
  buffers_[id] = Buffer{bytes, owner_.generation_, nullptr, false, {}};
}

void IsolatedDevice::copy_through_arena_locked(uint64_t stream_id, const void* src, uint64_t id, uint64_t offset,
                                               uint64_t bytes, const std::string& call) const {
  const size_t at = owner_.upload_room_locked(stream_id, bytes);
  SharedArena& arena = owner_.process_->arena();
  const auto* from = static_cast<const char*>(src);
  const uint64_t chunk = transfer_chunk(bytes);
  owner_.pipelined_requests_locked(
      static_cast<size_t>((bytes + chunk - 1) / chunk),
      [&](size_t i) {
        const uint64_t begin = i * chunk, n = std::min(chunk, bytes - begin);
        std::memcpy(arena.base() + at + begin, from + begin, n);
        MessageWriter m;
        m.u32(static_cast<uint32_t>(Op::kCopyToDevice)).u64(owner_.client_).u64(stream_id).u64(id)
            .u64(offset + begin).u64(n).u64(arena.size()).u64(0).u64(at + begin);
        return m.data();
      },
      call, owner_.settings_.call_timeout);
  owner_.bytes_copied_ += bytes;
  // On a stream the upload is only queued: its bytes stay untouched until the stream is finished.
  if (stream_id) owner_.process_->pending_uploads() = {stream_id, SharedArena::align(at + bytes)};
}

void IsolatedDevice::copy_to_device(EphostStream* stream, const void* src, EphostDeviceBuffer dst, uint64_t bytes,
                                    const std::string& what) const {
  if (bytes == 0) return;
  const std::string call = fmt::format("copy_to_device of {} ({} bytes)", what, bytes);
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  owner_.ensure_process_locked(call);
  const uint64_t id = buffer_id_locked(dst, bytes, false);
  const uint64_t stream_id = stream_id_locked(stream);
  if (std::optional<RegionSpan> shared = find_shared_region(src, bytes)) {
    // The application's shared tensor: the provider host uploads it from where it is, in one request.
    const uint64_t region = owner_.region_in_process_locked(*shared->region, call);
    MessageWriter m;
    m.u32(static_cast<uint32_t>(Op::kCopyToDevice)).u64(owner_.client_).u64(stream_id).u64(id).u64(dst.offset)
        .u64(bytes).u64(owner_.process_->arena().size()).u64(region).u64(shared->offset);
    owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
    owner_.bytes_in_place_ += bytes;
  } else {
    copy_through_arena_locked(stream_id, src, id, dst.offset, bytes, call);
  }
  Buffer& b = buffers_.at(id);
  // The whole buffer from host memory in one synchronous copy (a constant initializer's upload): kept,
  // for a new process to have it too. Anything else written into a buffer makes a kept copy stale.
  if (!stream && dst.offset == 0 && bytes == b.bytes)
    b.contents = std::make_shared<const std::string>(static_cast<const char*>(src), bytes);
  else
    b.contents.reset();
}

std::shared_ptr<void> IsolatedDevice::host_memory_for_output(uint64_t bytes) const {
  if (bytes < kSharedOutputMinBytes || !owner_.settings().shared_outputs) return nullptr;
  std::shared_ptr<SharedRegion> region;
  {
    std::lock_guard<std::mutex> lock(output_regions_mutex_);
    region = output_regions_.take(bytes);
  }
  if (!region) return nullptr;
  char* first = region->base();
  return std::shared_ptr<void>(region, first);  // the first byte, holding the region
}

void IsolatedDevice::copy_to_host(EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes,
                                  const std::string& what) const {
  if (bytes == 0) return;
  const std::string call = fmt::format("copy_to_host of {} ({} bytes)", what, bytes);
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  owner_.ensure_process_locked(call);
  const uint64_t id = buffer_id_locked(src, bytes, true);
  const uint64_t stream_id = stream_id_locked(stream);
  SharedArena& arena = owner_.process_->arena();
  if (std::optional<RegionSpan> shared = find_shared_region(dst, bytes)) {
    // Into the application's shared tensor (an output bound to one): the provider host writes it there.
    const uint64_t region = owner_.region_in_process_locked(*shared->region, call);
    MessageWriter m;
    m.u32(static_cast<uint32_t>(Op::kCopyToHost)).u64(owner_.client_).u64(stream_id).u64(id).u64(src.offset)
        .u64(bytes).u64(arena.size()).u64(region).u64(shared->offset);
    MessageReader in(owner_.request_locked(m.data(), call, owner_.settings_.call_timeout));
    in.u32();
    arena.follow(in.u64());
    owner_.bytes_in_place_ += bytes;
  } else {
    // In chunks, like a copy in: the host reads one out of the arena while the provider host copies the
    // next in. The first waits for the stream's work; each is finished before its reply.
    arena.reserve(bytes);
    auto* to = static_cast<char*>(dst);
    const uint64_t size = transfer_chunk(bytes);
    auto chunk = [&](size_t i) { return std::make_pair(i * size, std::min(size, bytes - i * size)); };
    owner_.pipelined_requests_locked(
        static_cast<size_t>((bytes + size - 1) / size),
        [&](size_t i) {
          const auto [begin, n] = chunk(i);
          MessageWriter m;
          m.u32(static_cast<uint32_t>(Op::kCopyToHost)).u64(owner_.client_).u64(stream_id).u64(id)
              .u64(src.offset + begin).u64(n).u64(arena.size()).u64(0).u64(begin);
          return m.data();
        },
        call, owner_.settings_.call_timeout,
        [&](size_t i, const std::string& reply) {
          const auto [begin, n] = chunk(i);
          MessageReader in(reply);
          in.u32();
          arena.follow(in.u64());
          if (begin > arena.size() || n > arena.size() - begin)
            fail(EPHOST_EP_FAIL, "provider '{}' device {}: {}: the provider host answered with less shared memory "
                 "than the copy", plugin_name(), index(), call);
          std::memcpy(to + begin, arena.base() + begin, n);
        });
    owner_.bytes_copied_ += bytes;
  }
  if (stream_id) idle_streams_.insert(stream_id);  // the provider host finished the stream (see the header)
  owner_.process_->pending_uploads() = {};  // and, before it wrote the arena, every queued upload
}

void IsolatedDevice::copy_to(const Device& dst_device, EphostStream* stream, EphostDeviceBuffer src,
                             EphostDeviceBuffer dst, uint64_t bytes, const std::string& what) const {
  if (bytes == 0) return;
  const auto* other = dynamic_cast<const IsolatedDevice*>(&dst_device);
  if (!other || &other->owner_.mutex_ != &owner_.mutex_) {
    // The destination is not in this provider host process: through host memory, synchronously.
    std::vector<char> staging(bytes);
    copy_to_host(stream, src, staging.data(), bytes, what);
    dst_device.copy_to_device(nullptr, staging.data(), dst, bytes, what);
    return;
  }
  const std::string call =
      fmt::format("copy_between_devices of {} to device {} ({} bytes)", what, dst_device.index(), bytes);
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  owner_.ensure_process_locked(call);
  const uint64_t from = buffer_id_locked(src, bytes, true);
  const uint64_t to = other->buffer_id_locked(dst, bytes, false);
  const uint64_t stream_id = stream_id_locked(stream);
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kCopyOnDevice)).u64(owner_.client_).u64(stream_id).u64(from).u64(src.offset)
      .u64(to).u64(dst.offset).u64(bytes);
  owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
  other->buffers_.at(to).contents.reset();
}

EphostStream* IsolatedDevice::create_stream(const std::string& what) const {
  const std::string call = "stream_create (for " + what + ")";
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  owner_.ensure_process_locked(call);
  const uint64_t id = reserve_ids(1);
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kStreamCreate)).u64(owner_.client_).u64(id).u64(index());
  owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
  streams_[id] = owner_.generation_;
  return reinterpret_cast<EphostStream*>(static_cast<uintptr_t>(id));
}

void IsolatedDevice::synchronize_id(EphostStream* stream, const std::string& call) const {
  std::lock_guard<std::mutex> lock(owner_.mutex_);
  auto it = streams_.find(id_of(stream));
  if (it == streams_.end())
    fail(EPHOST_EP_FAIL, "provider '{}' device {}: {} was handed a stream this device did not create", plugin_name(),
         index(), call);
  // Work enqueued in a process that is gone went with it (its run failed then): nothing to wait for.
  if (it->second != owner_.generation_ || !owner_.process_ || !owner_.process_->alive()) return;
  if (idle_streams_.count(it->first)) return;  // nothing queued since the provider host finished it
  owner_.ensure_process_locked(call);
  if (it->second != owner_.generation_) return;
  MessageWriter m;
  m.u32(static_cast<uint32_t>(Op::kStreamSynchronize)).u64(owner_.client_).u64(id_of(stream));
  owner_.request_locked(m.data(), call, owner_.settings_.call_timeout);
  idle_streams_.insert(it->first);
  if (owner_.process_->pending_uploads().stream == it->first) owner_.process_->pending_uploads() = {};
}

void IsolatedDevice::synchronize(EphostStream* stream, const std::string& what) const {
  synchronize_id(stream, "stream_synchronize (" + what + ")");
}

void IsolatedDevice::synchronize(EphostStream* stream, const char* why, const char* after_kind,
                                 const std::string& after_name) const {
  synchronize_id(stream, fmt::format("stream_synchronize ({}, after {} '{}')", why, after_kind, after_name));
}

void IsolatedDevice::release_stream(EphostStream* stream) const noexcept {
  try {
    std::lock_guard<std::mutex> lock(owner_.mutex_);
    auto it = streams_.find(id_of(stream));
    if (it == streams_.end()) return;
    const uint64_t generation = it->second;
    idle_streams_.erase(it->first);
    // The provider host finishes a stream's queued uploads before it releases it.
    if (owner_.process_ && owner_.process_->pending_uploads().stream == it->first)
      owner_.process_->pending_uploads() = {};
    streams_.erase(it);
    if (generation != owner_.generation_ || !owner_.process_ || !owner_.process_->alive() ||
        owner_.created_generation_ != owner_.generation_)
      return;
    MessageWriter m;
    m.u32(static_cast<uint32_t>(Op::kStreamRelease)).u64(owner_.client_).u64(id_of(stream));
    owner_.post_request_locked(m.data());
  } catch (...) {
  }
}

}  // namespace ephost::isolation
