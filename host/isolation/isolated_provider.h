// The isolated kind of provider: a proxy behind the one door (provider/provider.h) whose plugin runs
// in a provider host process (provider_process.h, served by provider_host_server.h). Partitioning,
// compiling, EPContext and execution see a Provider like any other.
//
// What crosses: each graph the plugin is asked about once (its ModelProto, graph_snapshot.h), then
// claims, kernels, compiles, contexts and computes by index over the socket; a compute's host-memory
// tensors through the shared arena (the plugin writes its outputs there; the host copies them into the
// run's buffers). On a device that works on its own memory (plugin ABI 3), the provider's device is an
// isolated_device.h: device memory and streams stay in the provider host process and the host holds
// ids, so a compute passes buffer ids, never bytes; its device outputs stay there too, under ids the
// host reserved. A process lost takes them with it; the next one makes them again as they are named,
// with the constant initializers the session uploaded (isolated_device.h). Such a provider cannot fall
// back unit by unit: its values live where only its process reaches. After too many failures its
// units fail, and the session plans its placement again without it (session/provider_fallback.h).
//
// When the process dies (a crash, an abort, a kill) or a call passes its deadline (the process is then
// killed): that call fails with EP_FAIL naming the plugin, the call and the signal or deadline, and
// nothing else is touched. The next call starts a new process, which rebuilds the graphs and the
// compute units it needs on first use: a unit made from an EPContext node is loaded again, and so is a
// compiled group whose context the plugin emitted (the session generated an EPContext cache:
// restart_context.h), instead of compiling it again. A compile that dies is tried again in a new process. After
// `max_failures` failures within `failure_window`, the provider falls back: its compute units are
// compiled by the fallback provider (the session's CPU plugin) on first use, and it never starts a
// process again (a unit loaded from an EPContext node has no nodes to compile: the session plans again,
// running its source model's nodes: session/context_source_fallback.h). A provider told it cannot fall
// back (set_fallback_blocked: such a node has no source model) is restarted instead, each time. Its
// state (running, restarting, fallen back) and failures can be read at any time, and a callback hears
// every change (a failure, and the new process that takes over).
//
// One process per provider and env (shared_provider_host.h; a library with several providers, an ONNX Runtime
// plugin EP's factories, runs one process for each): the env's sessions' providers of the plugin
// are clients of it, each with its own provider, graphs and units there, and its own failures and
// fallback. A process lost in one client's call fails that call only; the others make their provider
// and units again in the new process on their next call.
//
// Thread-safety: calls into the process are serialized (one socket, the shared host's lock); compute
// may be called from several threads, and a fallen-back provider computes through the fallback
// concurrently.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "isolation/isolated_device.h"
#include "isolation/isolation_options.h"
#include "isolation/provider_health.h"
#include "isolation/provider_process.h"
#include "isolation/shared_region.h"
#include "isolation/shared_provider_host.h"
#include "isolation/wire.h"
#include "provider/provider.h"

namespace ephost {

class IsolatedProvider final : public Provider {
 public:
  using HealthCallback = std::function<void(const std::string& provider, const IsolatedProviderHealth& health)>;

  // Starts the provider host `executable` and creates the plugin's provider in it with `options`, on
  // the plugin's device `device_index` (its own order, as record.probed_devices lists them; -1: none).
  // The plugin is never loaded in this process. A provider_create that crashes, hangs or fails throws
  // EP_FAIL saying so.
  // The process is the one of this plugin for `env` (shared_provider_host.h: any pointer naming the
  // env), shared with the env's other sessions.
  IsolatedProvider(const void* env, const PluginRecord& record,
                   const std::vector<std::pair<std::string, std::string>>& options, int64_t device_index,
                   IsolationSettings settings, std::string executable);
  ~IsolatedProvider() override;

  // Whether a provider host process can serve `record` on its probed device `device_index` (-1: none):
  // "" when it can, else why not (for the error or the warning). Every device the probe saw can be
  // served, those that work on device memory included (isolated_device.h).
  static std::string cannot_serve(const PluginRecord& record, int64_t device_index);

  // The provider whose units replace this one's after too many failures (the session's CPU provider);
  // null: none (then a fallen-back provider's computes fail). Set before the first compile. On a device
  // that works on its own memory the units are not replaced (the run's values are there, which no other
  // provider reads): the session plans again without this provider, and this one names the fallback in
  // its messages only.
  void set_fallback(Provider* fallback) { fallback_ = fallback; }
  // Says why this provider's work cannot go to other providers (an EPContext node it loaded whose
  // source model is unknown: session/context_source_fallback.h): after too many failures it is then
  // restarted, not fallen back, and the failure that would have made it fall back says `why`.
  // Empty: it falls back as usual.
  void set_fallback_blocked(std::string why);
  // Whether the provider's values live in its device's memory, in the provider host process
  // (isolated_device.h): then a fallback needs the session's placement planned again.
  bool values_on_device() const { return isolated_device_ != nullptr; }
  // Device buffers the host side holds ids of (with the kept initializer copies); 0 without a device.
  size_t device_buffers_held() const;
  void set_health_callback(HealthCallback callback);
  IsolatedProviderHealth health() const;
  // Bytes of host-memory tensors this provider's calls copied through its process's arena since the
  // session began (inputs in, outputs out, copies to and from its device), and bytes that crossed in
  // place instead: tensors in shared memory the application holds (shared_region.h), read or written
  // where they are.
  uint64_t bytes_copied() const { return bytes_copied_.load(std::memory_order_relaxed); }
  uint64_t bytes_in_place() const { return bytes_in_place_.load(std::memory_order_relaxed); }
  const IsolationSettings& settings() const { return settings_; }

  std::vector<EphostCapability::Claim> claims(const GraphView& graph, const char* occasion) const override;
  std::unique_ptr<ComputeUnit> create_kernel(const Node& node) const override;
  std::unique_ptr<ComputeUnit> compile(const GraphView& group, const std::string& fused_name) const override;
  void create_state(ComputeUnit& unit) const override;
  void compute(const ComputeUnit& unit, EphostKernelContext* context) const override;
  void run_start() const override;
  void run_end() const override;
  bool observes_runs() const override { return observes_runs_; }
  // The plugin's sync in its provider host (a round trip), when it has one.
  void sync(const char* why) const override;
  bool syncs() const override { return syncs_; }
  // The plugin's own profile (an ONNX Runtime plugin EP's profiler) kept in the provider host, counting from
  // the host profile's origin; its events come back into `profiler` at end_profiling. Failures, and a
  // process lost meanwhile (its events with it), are logged, never thrown.
  void start_profiling(Profiler& profiler) const override;
  void end_profiling() const override;
  bool emits_contexts() const override { return emits_contexts_; }
  void emit_context(const std::string& fused_name, EphostContextSink& sink) const override;
  // What the plugin said about the model it compiled (an ONNX Runtime plugin EP's
  // GetCompiledModelCompatibilityInfo), as the provider host last answered it; "" for none.
  std::string compiled_model_compatibility_info() const override;
  std::optional<ContextJudgement> judge_context(const Node& context_node, const void* blob,
                                                size_t blob_size) const override;
  std::unique_ptr<ComputeUnit> load_context(const Node& context_node, const void* blob,
                                            size_t blob_size) const override;

 private:
  friend class isolation::IsolatedDevice;  // its calls are requests of this provider's, under its lock
  class Unit;
  struct GraphRecord;
  using Clock = std::chrono::steady_clock;

  IsolatedProvider(const void* env, const PluginRecord& record,
                   const std::vector<std::pair<std::string, std::string>>& options, int64_t device_index,
                   IsolationSettings settings, std::string executable,
                   std::unique_ptr<isolation::IsolatedDevice> device);
  // The device of a provider on `record`'s device `device_index` when that device works on its own
  // memory; null otherwise (no device, or one that works on host memory).
  static std::unique_ptr<isolation::IsolatedDevice> device_for(const IsolatedProvider& owner,
                                                                const PluginRecord& record, int64_t device_index);

  // The record of the main graph `graph` belongs to, made on first sight.
  GraphRecord& graph_record_locked(const Graph& graph) const;
  // A process that runs this provider: the current one, or a new one (created with the options).
  void ensure_process_locked(const std::string& what) const;
  void ensure_graph_locked(GraphRecord& graph, const std::string& what) const;
  // Makes `unit` (and its state) in the current process when it was made in an earlier one.
  void ensure_unit_locked(Unit& unit) const;
  // One request and its reply (the reply's status checked: a plugin's error is thrown as it came).
  std::string request_locked(const std::string& request, const std::string& what,
                             Clock::duration timeout, const std::function<bool()>& should_stop = {}) const;
  // request_locked with the posted requests sent ahead of `request` in one frame (Op::kBatch).
  std::string batch_request_locked(const std::string& request, const std::string& what, Clock::duration timeout,
                                   const std::function<bool()>& should_stop) const;
  // The Op::kBatch frame carrying the posted requests ahead of `request` (posted_ is emptied), and the
  // inner reply of its reply (failed on_run_end logged), or an error status with `error` filled.
  std::string batch_frame_locked(const std::string& request) const;
  std::string batch_inner_reply_locked(const std::string& reply, const std::string& what) const;
  // `count` requests, each made by `make(i)` right before it is sent (it may write the arena: a chunk of
  // a copy in), sent one after the other without waiting for the replies in between; then every reply
  // is read, each successful one handed to `on_reply(i, reply)` as it comes (may be empty; a chunk of a
  // copy out is read from the arena there while the provider host copies the next). The first error
  // among them is thrown once all replies are in, so the socket stays in step. `make` must not throw.
  // The posted requests go ahead of the first.
  void pipelined_requests_locked(size_t count, const std::function<std::string(size_t)>& make,
                                 const std::string& what, Clock::duration timeout,
                                 const std::function<void(size_t, const std::string&)>& on_reply = {}) const;
  // Where in the arena a copy of `bytes` to the device on stream `stream` (0: none) may put its bytes,
  // the arena grown to hold them: after the uploads still queued on the same stream, else at 0 once
  // those of another stream are finished (ProviderProcess::PendingUploads).
  size_t upload_room_locked(uint64_t stream, size_t bytes) const;
  // Has the provider host finish the stream whose uploads still read the arena, before the arena's
  // first bytes are written again (a host-memory compute, a synchronous copy, another stream's copy).
  void settle_uploads_locked() const;
  // The id of shared region `region` in the current process, which maps it first when it has not yet
  // (Op::kAttachRegion, the memfd passed with the request); regions released since are detached there.
  uint64_t region_in_process_locked(const isolation::SharedRegion& region, const std::string& what) const;
  // Posts on_run_start or on_run_end: sent ahead of the next request (see run_start).
  void post_locked(isolation::Op op) const;
  // Posts `request` (one that answers nothing: on_run_*, a device free, a stream release) likewise.
  void post_request_locked(std::string request) const;
  // Counts a lost process, decides between restarting and falling back, and throws the call's error.
  [[noreturn]] void lose_process_locked(const std::string& what, const isolation::ProcessLost& lost) const;
  // Makes `unit` in the current process from the context its plugin emitted; false (and forgets the
  // context) when the plugin refuses it.
  bool load_unit_context_locked(Unit& unit) const;
  // Reads a unit reply (wire.h): keeps what the provider said (contexts, compatibility info) and returns
  // the unit's id in the process.
  uint64_t read_unit_reply_locked(const std::string& reply) const;
  // Keeps the context emitted for compiled group `fused_name`, for a new process to load (restart_context.h).
  void keep_context_locked(const std::string& fused_name, const EphostContextSink& sink) const;
  // Makes a unit in the process, trying again in a new process after a loss, until it falls back.
  std::unique_ptr<ComputeUnit> make_unit(std::unique_ptr<Unit> unit) const;
  void compute_remote_locked(Unit& unit, EphostKernelContext* context) const;
  // Where the host wants an output written in place: a shared tensor of the application it is bound to
  // (`destination`, of its type and shape), or shared memory the host allocated for it (no destination:
  // any type and shape of up to `capacity` bytes; the value then stays there).
  struct OutputPlace {
    size_t index = 0;
    isolation::RegionSpan span;
    const Tensor* destination = nullptr;
    uint64_t capacity = 0;
  };
  // At most this many regions of shared memory per output (pooled_output_region_locked).
  static constexpr size_t kPooledOutputRegions = 4;
  // Input `index` of `unit` in shared memory when it is one of the compiled group's constant initializers
  // (copied there on first use, again only when its bytes moved); nullopt for any other input.
  std::optional<isolation::RegionSpan> constant_in_shared_memory_locked(Unit& unit, size_t index,
                                                                        const Tensor& input) const;
  // The compute's outputs that go to shared memory, each region mapped in the current process: those
  // bound to shared tensors, and those that may stay in shared memory of the host's (pooled_output_region).
  std::vector<OutputPlace> output_places_locked(Unit& unit, EphostKernelContext* context,
                                                const std::string& what) const;
  // Shared memory for output `index` of `unit` when it is read only by the application and this provider's
  // steps (so no kernel of this process sees it change) and took at least kSharedOutputMinBytes before: a
  // region of the unit's pool that no value occupies any more, or a new one; null when the output should
  // go through the arena (isolation_shared_outputs=0, small, unknown size, or every region in use).
  std::shared_ptr<isolation::SharedRegion> pooled_output_region_locked(Unit& unit, EphostKernelContext* context,
                                                                       size_t index) const;
  // A compute on the isolated device: inputs and outputs are device buffers named by id.
  void compute_on_device(Unit& unit, EphostKernelContext* context) const;
  void compute_fallback(Unit& unit, EphostKernelContext* context) const;
  void release_unit(Unit& unit) const;
  void notify(const IsolatedProviderHealth& health) const;
  // notify() with the shared host's lock (held) let go meanwhile.
  void notify_outside_lock(const IsolatedProviderHealth& health) const;
  Unit& own(const ComputeUnit& unit) const;

  const IsolationSettings settings_;
  const std::string executable_;
  const std::shared_ptr<isolation::SharedProviderHost> host_;
  const uint64_t client_;  // this provider's id in the shared process
  isolation::MessageWriter create_request_;
  int64_t device_index_ = -1;
  // The device, when it works on its own memory (the base's device() and memory_device() point to it).
  const std::unique_ptr<isolation::IsolatedDevice> isolated_device_;
  mutable std::atomic<bool> emits_contexts_{false};  // set at a process start or a unit reply
  mutable std::string compatibility_info_;  // guarded by mutex_
  mutable std::atomic<bool> observes_runs_{false};
  mutable std::atomic<bool> syncs_{false};
  mutable Profiler* profiler_ = nullptr;  // guarded by mutex_: the session's profile while the plugin profiles
  Provider* fallback_ = nullptr;
  std::string fallback_blocked_;  // guarded by mutex_: set_fallback_blocked

  // The shared host's: its lock guards this provider's state below too.
  std::mutex& mutex_;
  std::unique_ptr<isolation::ProviderProcess>& process_;
  uint64_t& generation_;  // bumped at each process start
  mutable uint64_t created_generation_ = 0;  // the process generation this provider was created in
  mutable std::map<std::tuple<const Graph*, size_t, size_t>, std::unique_ptr<GraphRecord>> graphs_;
  mutable uint64_t next_graph_id_ = 1;
  mutable std::deque<Clock::time_point> recent_failures_;
  mutable IsolatedProviderHealth health_;
  mutable std::shared_ptr<HealthCallback> callback_;
  mutable std::map<std::string, Unit*> compiled_;  // compiled groups by fused name (their contexts are kept)
  mutable std::vector<std::string> posted_;  // on_run_start / on_run_end requests not sent yet, in order
  mutable std::atomic<uint64_t> bytes_copied_{0};
  mutable std::atomic<uint64_t> bytes_in_place_{0};
};

}  // namespace ephost
