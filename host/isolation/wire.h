// The wire format between the host and a provider host process (isolated_provider.h): length-prefixed
// frames over a stream socket, each a flat record of little-endian integers and length-prefixed bytes.
// Both ends are built from the same sources and started together, so there is no versioning beyond the
// protocol number the host passes on the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace ephost::isolation {

inline constexpr int kProtocolVersion = 7;

// Requests the host sends; the provider host answers each with one reply frame. Every request starts
// with its op (u32) and its client (u64): the host's provider it is for, as several sessions' providers
// of one plugin share one provider host process (shared_provider_host.h).
enum class Op : uint32_t {
  // plugin path, provider name (a library may serve several: an ONNX Runtime plugin EP's factories), device
  // index, options -> flags (kCreatedEmitsContexts...)
  kCreate = 1,
  kGraph,          // graph id, serialized ModelProto: the graph the plugin may claim, once per graph
  kClaims,         // graph id, graph path, occasion -> claims (node indices)
  // The requests that make a unit (kCreateKernel, kCompile, kLoadContext) answer its id and what the
  // provider says after making it (a unit reply): whether it emits contexts now (u32; an ONNX Runtime
  // plugin EP does once Compile made an EPContext node) and its compiled-model compatibility info (bytes).
  kCreateKernel,   // graph id, graph path, node index -> unit reply
  kCompile,        // graph id, graph path, node indices, fused name -> unit reply
  kCreateState,    // unit id
  // unit id, arena size, threads, stream id, first output buffer id, input slots (in the arena, a shared
  // region or device buffers), output count, output places (count; each output index, region id, offset,
  // element type, shape, capacity: where the host wants that output: a shared tensor it is bound to, of
  // that type and shape; or, element type 0 and no shape, shared memory the host allocated for it, which
  // takes an output of any type and shape up to `capacity` bytes) -> arena size, output slots (in the
  // arena, at the place asked for, or in new device buffers)
  kCompute,
  kRunStart,
  kRunEnd,
  kReleaseUnit,    // unit id
  kEmitContext,    // fused name -> the blobs the plugin wrote
  kJudgeContext,   // graph id, graph path, node index, blob -> has judge, verdict, reason
  kLoadContext,    // graph id, graph path, node index, blob -> unit reply
  // Requests sent ahead without a reply of their own (on_run_start, on_run_end), then the request that
  // has one: count, each request's bytes, the request -> count of failed on_run_end, (message)*, the
  // request's reply bytes. A failing on_run_start answers for the whole batch (the request is not run).
  kBatch,
  kDestroy,        // the client's provider, graphs and units are released (its session ended)
  // Device memory (plugin ABI 3 devices that work on their own memory, isolated_device.h). Buffers and
  // streams are named by ids the host chooses, never reused, so an id of a process that is gone is
  // unknown to its successor instead of naming someone else's memory. Free and stream release may be
  // sent ahead (kBatch): they have nothing to answer.
  kDeviceAllocate,  // buffer id, bytes
  kDeviceFree,      // buffer id (unknown ids are ignored: their process is gone)
  // stream id (0: none), buffer id, offset, bytes, arena size, region id (0: the arena), offset of the
  // bytes in the arena or the region. On a stream the upload is only queued and the reply does not wait
  // for it: the provider host keeps those arena bytes unwritten (and the arena unmapped never) until the
  // stream is finished (served_device_memory.h).
  kCopyToDevice,
  // stream id, buffer id, offset, bytes, arena size, region id (0: the arena), offset -> arena size; the
  // bytes are at that offset, the stream finished (after another stream's queued uploads, which are
  // finished first).
  kCopyToHost,
  kCopyOnDevice,    // stream id, source buffer id, offset, destination buffer id, offset, bytes
  kStreamCreate,    // stream id
  kStreamSynchronize,  // stream id
  kStreamRelease,   // stream id
  // Shared tensor memory of the application (shared_region.h). Attach: region id, size, and the memfd
  // passed with the frame (SCM_RIGHTS). Detach (may be sent ahead): region id; unknown ids are ignored.
  kAttachRegion,
  kDetachRegion,
  // The provider's device work is waited for (Provider::sync: an ONNX Runtime plugin EP's OrtEp::Sync):
  // why it is asked (text) -> nothing.
  kSync,
  // The session's profile began at `origin` (i64: steady-clock nanoseconds since the clock's epoch, one
  // clock for every process of the machine): the provider starts its own profile (Provider::start_profiling)
  // -> nothing.
  kStartProfiling,
  // The provider's own events go into the host's profile (Provider::end_profiling) -> count, then each
  // event's category, name, start and duration (i64 microseconds since origin), argument count, (key, value)*.
  kEndProfiling,
};

// kCreate's reply flags.
inline constexpr uint32_t kCreatedEmitsContexts = 1;
inline constexpr uint32_t kCreatedObservesRuns = 2;
inline constexpr uint32_t kCreatedDeviceHasStreams = 4;
inline constexpr uint32_t kCreatedDeviceCopiesBetweenDevices = 8;
inline constexpr uint32_t kCreatedSyncs = 16;

// Where a compute's input or output slot lives: absent, in the shared arena (host memory), in a device
// buffer of the provider host (by id and offset), or in a shared region the application holds (by
// region id and offset: shared_region.h).
enum class SlotPlace : uint32_t { kAbsent = 0, kArena = 1, kDevice = 2, kRegion = 3 };

// A reply starts with kReplyOk, or with an EphostStatusCode and the message.
inline constexpr uint32_t kReplyOk = 0;

class MessageWriter {
 public:
  MessageWriter& u32(uint32_t v) { return raw(&v, sizeof v); }
  MessageWriter& u64(uint64_t v) { return raw(&v, sizeof v); }
  MessageWriter& i64(int64_t v) { return raw(&v, sizeof v); }
  MessageWriter& bytes(std::string_view s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  const std::string& data() const { return data_; }

 private:
  MessageWriter& raw(const void* p, size_t n) {
    data_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string data_;
};

// Reads a frame; a frame shorter than what is read from it throws EP_FAIL (a confused peer).
class MessageReader {
 public:
  explicit MessageReader(std::string_view data) : data_(data) {}
  uint32_t u32() { return fixed<uint32_t>(); }
  uint64_t u64() { return fixed<uint64_t>(); }
  int64_t i64() { return fixed<int64_t>(); }
  std::string_view bytes();
  std::string str() { return std::string(bytes()); }

 private:
  template <typename T>
  T fixed() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  void take(void* out, size_t n);
  std::string_view data_;
  size_t pos_ = 0;
};

// Writes one frame; false when the peer is gone (EPIPE is an answer here, never a signal). `pass_fd`
// (>= 0) is a descriptor sent with the frame's first byte (SCM_RIGHTS).
bool write_frame(int fd, const std::string& payload, int pass_fd = -1);

// How waiting for a frame ended.
enum class ReadResult { kFrame, kClosed, kTimedOut, kStopped };

// Reads one frame into `payload`, waiting until `deadline`. `should_stop` (may be empty) is asked
// every few milliseconds while waiting: true ends the wait with kStopped.
template <typename ShouldStop>
ReadResult read_frame(int fd, std::chrono::steady_clock::time_point deadline, std::string& payload,
                      ShouldStop&& should_stop);
// `received_fd` (may be null): where a descriptor passed with the frame goes (-1 when none; one that is
// still there is closed first). Without it, descriptors a peer passes are dropped by the kernel.
ReadResult read_frame_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& payload,
                            bool (*should_stop)(const void*), const void* stop_arg, int* received_fd = nullptr);

template <typename ShouldStop>
ReadResult read_frame(int fd, std::chrono::steady_clock::time_point deadline, std::string& payload,
                      ShouldStop&& should_stop) {
  return read_frame_until(
      fd, deadline, payload, [](const void* f) { return (*static_cast<const std::remove_reference_t<ShouldStop>*>(f))(); },
      &should_stop);
}

}  // namespace ephost::isolation
