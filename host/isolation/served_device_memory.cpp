#include "isolation/served_device_memory.h"

#include <algorithm>
#include <utility>

#include "core/device.h"
#include "core/error.h"
#include "discovery/plugin_record.h"

namespace ephost::isolation {

ServedDeviceMemory::~ServedDeviceMemory() {
  // Work still queued may read buffers: the streams finish first, then everything is given back.
  for (auto& [id, s] : streams_) {
    try {
      s.device->synchronize(s.stream, "release of the provider host's streams");
    } catch (...) {
    }
    s.device->release_stream(s.stream);
  }
  buffers_.clear();
}

const Device& ServedDeviceMemory::device(uint64_t device_index) const {
  if (!record_) fail(EPHOST_EP_FAIL, "provider host: device memory asked for before the plugin was loaded");
  if (device_index >= record_->devices.size() || !record_->devices[device_index])
    fail(EPHOST_EP_FAIL, "provider host: plugin '{}' has no device {}", record_->name, device_index);
  return *record_->devices[device_index];
}

void ServedDeviceMemory::allocate(uint64_t id, uint64_t device_index, uint64_t bytes) {
  if (buffers_.count(id)) fail(EPHOST_EP_FAIL, "provider host: device buffer {} exists already", id);
  const Device& d = device(device_index);
  auto allocation = std::make_shared<DeviceAllocation>(d, bytes, "a buffer the host asked for");
  Buffer b;
  b.buffer = allocation->buffer();
  b.holder = std::move(allocation);
  b.device = &d;
  b.bytes = bytes;
  buffers_.emplace(id, std::move(b));
}

void ServedDeviceMemory::free(uint64_t id) { buffers_.erase(id); }

const ServedDeviceMemory::Buffer& ServedDeviceMemory::buffer(uint64_t id, uint64_t offset, uint64_t bytes) const {
  auto it = buffers_.find(id);
  if (it == buffers_.end())
    fail(EPHOST_EP_FAIL, "provider host: device buffer {} does not exist (it was made by a process that is gone, or "
         "freed)", id);
  if (offset > it->second.bytes || bytes > it->second.bytes - offset)
    fail(EPHOST_EP_FAIL, "provider host: {} bytes at offset {} lie outside device buffer {} ({} bytes)", bytes, offset,
         id, it->second.bytes);
  return it->second;
}

Tensor ServedDeviceMemory::tensor(uint64_t id, uint64_t offset, int32_t elem_type, std::vector<int64_t> shape) const {
  const Buffer& b = buffer(id, offset, byte_count(elem_type, shape));
  return Tensor::on_device(*b.device, elem_type, std::move(shape), at(b, offset), b.holder);
}

void ServedDeviceMemory::adopt(uint64_t id, const Tensor& tensor) {
  if (buffers_.count(id)) fail(EPHOST_EP_FAIL, "provider host: device buffer {} exists already", id);
  Buffer b;
  b.holder = tensor.holder();
  b.buffer = tensor.device_buffer();
  b.device = tensor.device();
  b.bytes = tensor.byte_size();
  buffers_.emplace(id, std::move(b));
}

void ServedDeviceMemory::finish(uint64_t stream, const char* what) {
  if (!stream) return;
  streams_.at(stream).device->synchronize(streams_.at(stream).stream, what);
  if (stream == pending_stream_) {
    pending_stream_ = 0;
    pending_end_ = 0;
  }
}

void ServedDeviceMemory::settle_uploads() {
  if (!pending_stream_) return;
  const uint64_t stream = pending_stream_;
  pending_stream_ = 0;
  pending_end_ = 0;
  finish(stream, "uploads from the host's shared memory");
}

void ServedDeviceMemory::copy_to_device(uint64_t stream, uint64_t id, uint64_t offset, const void* src, uint64_t bytes,
                                        size_t arena_end) {
  const Buffer& b = buffer(id, offset, bytes);
  // One stream's uploads are pending at a time (the host settles the others first; so does this).
  if (pending_stream_ && pending_stream_ != stream) settle_uploads();
  b.device->copy_to_device(this->stream(stream), src, at(b, offset), bytes, "a tensor from the host");
  if (!stream) return;  // done already
  pending_stream_ = stream;
  pending_end_ = std::max(pending_end_, arena_end);
}

void ServedDeviceMemory::copy_to_host(uint64_t stream, uint64_t id, uint64_t offset, void* dst, uint64_t bytes) {
  const Buffer& b = buffer(id, offset, bytes);
  // The arena is written next: another stream's queued uploads finish first; this stream's run before
  // the copy anyway (plugin ABI 3: in order on a stream), and are finished with it below.
  if (pending_stream_ != stream) settle_uploads();
  b.device->copy_to_host(this->stream(stream), at(b, offset), dst, bytes, "a tensor for the host");
  finish(stream, "a copy into the host's shared memory");
}

void ServedDeviceMemory::copy_on_device(uint64_t stream, uint64_t src, uint64_t src_offset, uint64_t dst,
                                        uint64_t dst_offset, uint64_t bytes) {
  const Buffer& from = buffer(src, src_offset, bytes);
  const Buffer& to = buffer(dst, dst_offset, bytes);
  from.device->copy_to(*to.device, this->stream(stream), at(from, src_offset), at(to, dst_offset), bytes,
                       "a tensor between devices");
}

void ServedDeviceMemory::create_stream(uint64_t id, uint64_t device_index) {
  if (streams_.count(id)) fail(EPHOST_EP_FAIL, "provider host: stream {} exists already", id);
  const Device& d = device(device_index);
  streams_[id] = Stream{&d, d.create_stream("a stream the host asked for")};
}

void ServedDeviceMemory::synchronize(uint64_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end()) fail(EPHOST_EP_FAIL, "provider host: stream {} does not exist", id);
  it->second.device->synchronize(it->second.stream, "the host waits for the stream");
  if (id == pending_stream_) {
    pending_stream_ = 0;
    pending_end_ = 0;
  }
}

void ServedDeviceMemory::release_stream(uint64_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  if (id == pending_stream_) settle_uploads();  // a stream is released synchronized
  it->second.device->release_stream(it->second.stream);
  streams_.erase(it);
}

EphostStream* ServedDeviceMemory::stream(uint64_t id) const {
  if (!id) return nullptr;
  auto it = streams_.find(id);
  if (it == streams_.end()) fail(EPHOST_EP_FAIL, "provider host: stream {} does not exist", id);
  return it->second.stream;
}

const Device* ServedDeviceMemory::stream_device(uint64_t id) const {
  if (!id) return nullptr;
  auto it = streams_.find(id);
  if (it == streams_.end()) fail(EPHOST_EP_FAIL, "provider host: stream {} does not exist", id);
  return it->second.device;
}

}  // namespace ephost::isolation
