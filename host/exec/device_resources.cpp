#include "exec/device_resources.h"

namespace ephost {

DeviceBlockPool::DeviceBlockPool(size_t max_free_per_device) : state_(std::make_shared<State>()) {
  state_->max_free = max_free_per_device;
}

std::shared_ptr<DeviceAllocation> DeviceBlockPool::take(const Device& device, size_t bytes,
                                                       const std::function<std::string()>& describe) {
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
  if (!block) block = std::make_unique<DeviceAllocation>(device, bytes, describe());
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

EphostStream* StreamPool::take(const Device& device, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& free = free_[&device];
    if (!free.empty()) {
      EphostStream* s = free.back();
      free.pop_back();
      return s;
    }
  }
  return device.create_stream(what);
}

void StreamPool::give_back(const Device& device, EphostStream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_[&device].push_back(stream);
}

RunStreams::~RunStreams() {
  for (Entry& e : streams_) {
    try {
      synchronize(e, "end of run");
      pool_.give_back(*e.device, e.stream);
    } catch (...) {
      // A stream that failed to synchronize is not trusted with another run.
      e.device->release_stream(e.stream);
    }
  }
}

EphostStream* RunStreams::stream(const Device& device, const char* kind, const std::string& name) {
  if (!device.has_streams()) return nullptr;
  for (Entry& e : streams_)
    if (e.device == &device) {
      e.kind = kind;
      e.name = &name;
      return e.stream;
    }
  EphostStream* s = pool_.take(device, std::string(kind) + " '" + name + "'");
  streams_.push_back(Entry{&device, s, kind, &name});
  return s;
}

void RunStreams::synchronize(Entry& e, const char* why) {
  if (!e.kind) return;  // nothing enqueued since the last synchronization
  e.device->synchronize(e.stream, why, e.kind, *e.name);
  e.kind = nullptr;
  e.name = nullptr;
}

void RunStreams::synchronize(const Device& device, const char* why) {
  for (Entry& e : streams_)
    if (e.device == &device) synchronize(e, why);
}

void RunStreams::synchronize_all(const char* why) {
  for (Entry& e : streams_) synchronize(e, why);
}

}  // namespace ephost
