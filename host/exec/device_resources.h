// What runs need of devices (plugin ABI 3), kept across runs: memory-pattern blocks in device memory
// and streams; and the streams of one run. All thread-safe: concurrent runs each take their own.
#pragma once

#include <cstddef>
#include <functional>
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
  // A block of at least `bytes`; `describe` names what it holds, in errors (called only when a block
  // must be allocated).
  std::shared_ptr<DeviceAllocation> take(const Device& device, size_t bytes,
                                         const std::function<std::string()>& describe);

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
  // A stream of `device` nobody else uses until give_back; `what` names the work it is made for, in
  // errors.
  EphostStream* take(const Device& device, const std::string& what);
  // A synchronized stream, back for the next run.
  void give_back(const Device& device, EphostStream* stream);

 private:
  std::mutex mutex_;
  std::map<const Device*, std::vector<EphostStream*>> free_;
};

// The streams of one run and of the subgraph runs inside it: one per device, taken from the pool when
// first needed. Each remembers whether work was enqueued on it since it was last synchronized, and
// what (the value copied, the node computed), so that a synchronization names what it waits for and
// an idle stream is not synchronized at all. Its destructor waits for every stream with pending work
// (so that no memory a stream may still use is freed under it) and gives them back.
class RunStreams {
 public:
  explicit RunStreams(StreamPool& pool) : pool_(pool) {}
  ~RunStreams();
  RunStreams(const RunStreams&) = delete;
  RunStreams& operator=(const RunStreams&) = delete;

  // This run's stream on `device` for work about to be enqueued on it, or null when the device's
  // plugin has no streams. `kind` and `name` say what the work is for ("value", "output", "node",
  // "fused group" and its name): they must outlive the run (graph and plan names do), and name the
  // work in errors (of stream_create now, of a later synchronization).
  EphostStream* stream(const Device& device, const char* kind, const std::string& name);
  // Waits for `device`'s stream (if this run has one with pending work); `why` says why, and errors
  // name the last work enqueued.
  void synchronize(const Device& device, const char* why);
  // Waits for every stream of the run with pending work; throws the first failure (EP_FAIL naming
  // the provider, the call and the last work enqueued).
  void synchronize_all(const char* why);

 private:
  struct Entry {
    const Device* device;
    EphostStream* stream;
    const char* kind = nullptr;        // the last work enqueued since the last synchronization, or null
    const std::string* name = nullptr;
  };
  void synchronize(Entry& e, const char* why);
  StreamPool& pool_;
  std::vector<Entry> streams_;
};

}  // namespace ephost
