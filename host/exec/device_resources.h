// What runs need of devices (plugin ABI 3), kept across runs: memory-pattern blocks in device memory
// and streams; and the streams of one run. All thread-safe: concurrent runs each take their own.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"

namespace ephost {

// Device memory blocks for memory patterns: BlockPool's counterpart for device memory. A block goes
// back to the pool when its last reference drops (the run holding it has synchronized its streams by
// then), or is freed when the pool is full or gone.
class DeviceBlockPool {
 public:
  explicit DeviceBlockPool(size_t max_free_per_device = 2);
  std::shared_ptr<DeviceAllocation> take(const Device& device, size_t bytes);

 private:
  struct State {
    std::mutex mutex;
    size_t max_free;
    std::map<const Device*, std::vector<std::unique_ptr<DeviceAllocation>>> free;
  };
  std::shared_ptr<State> state_;
};

// Streams kept per device across runs (creating one can cost as much as a small run).
class StreamPool {
 public:
  StreamPool() = default;
  ~StreamPool();
  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;
  // A stream of `device` nobody else uses until give_back.
  EphostStream* take(const Device& device);
  // A synchronized stream, back for the next run.
  void give_back(const Device& device, EphostStream* stream);

 private:
  std::mutex mutex_;
  std::map<const Device*, std::vector<EphostStream*>> free_;
};

// The streams of one run and of the subgraph runs inside it: one per device, taken from the pool when
// first needed. Its destructor waits for every stream (so that no memory a stream may still use is
// freed under it) and gives them back.
class RunStreams {
 public:
  explicit RunStreams(StreamPool& pool) : pool_(pool) {}
  ~RunStreams();
  RunStreams(const RunStreams&) = delete;
  RunStreams& operator=(const RunStreams&) = delete;

  // This run's stream on `device`, or null when the device's plugin has no streams.
  EphostStream* stream(const Device& device);
  // Waits for `device`'s stream (if this run has one); `what` says why, for errors.
  void synchronize(const Device& device, const std::string& what);
  // Waits for every stream of the run; throws the first failure (EP_FAIL naming the provider).
  void synchronize_all(const std::string& what);

 private:
  StreamPool& pool_;
  std::vector<std::pair<const Device*, EphostStream*>> streams_;
};

}  // namespace ephost
