#include "exec/device_resources.h"

namespace ephost {

DeviceBlockPool::DeviceBlockPool(size_t max_free_per_device) : state_(std::make_shared<State>()) {
  state_->max_free = max_free_per_device;
}

std::shared_ptr<DeviceAllocation> DeviceBlockPool::take(const Device& device, size_t bytes) {
  std::unique_ptr<DeviceAllocation> block;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto& free = state_->free[&device];
    // The smallest free block that fits.
    size_t best = free.size();
    for (size_t i = 0; i < free.size(); ++i)
      if (free[i]->bytes() >= bytes && (best == free.size() || free[i]->bytes() < free[best]->bytes())) best = i;
    if (best < free.size()) {
      block = std::move(free[best]);
      free.erase(free.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  if (!block) block = std::make_unique<DeviceAllocation>(device, bytes, "a memory-pattern block");
  std::weak_ptr<State> weak = state_;
  return std::shared_ptr<DeviceAllocation>(block.release(), [weak](DeviceAllocation* b) {
    std::unique_ptr<DeviceAllocation> owned(b);
    if (auto state = weak.lock()) {
      std::lock_guard<std::mutex> lock(state->mutex);
      auto& free = state->free[&b->device()];
      if (free.size() < state->max_free) free.push_back(std::move(owned));
    }
  });
}

StreamPool::~StreamPool() {
  for (auto& [device, streams] : free_)
    for (EphostStream* s : streams) device->release_stream(s);
}

EphostStream* StreamPool::take(const Device& device) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& free = free_[&device];
    if (!free.empty()) {
      EphostStream* s = free.back();
      free.pop_back();
      return s;
    }
  }
  return device.create_stream();
}

void StreamPool::give_back(const Device& device, EphostStream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_[&device].push_back(stream);
}

RunStreams::~RunStreams() {
  for (auto& [device, stream] : streams_) {
    try {
      device->synchronize(stream, "end of run");
      pool_.give_back(*device, stream);
    } catch (...) {
      // A stream that failed to synchronize is not trusted with another run.
      device->release_stream(stream);
    }
  }
}

EphostStream* RunStreams::stream(const Device& device) {
  if (!device.has_streams()) return nullptr;
  for (auto& [d, s] : streams_)
    if (d == &device) return s;
  EphostStream* s = pool_.take(device);
  streams_.emplace_back(&device, s);
  return s;
}

void RunStreams::synchronize(const Device& device, const std::string& what) {
  for (auto& [d, s] : streams_)
    if (d == &device) d->synchronize(s, what);
}

void RunStreams::synchronize_all(const std::string& what) {
  for (auto& [d, s] : streams_) d->synchronize(s, what);
}

}  // namespace ephost
