#include "isolation/isolated_provider.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "core/run_control.h"
#include "core/runtime_value.h"
#include "core/tensor.h"
#include "discovery/plugin_record.h"
#include "isolation/crossing_values.h"
#include "isolation/fallback_group.h"
#include "isolation/graph_snapshot.h"
#include "isolation/restart_context.h"
#include "model/model.h"
#include "isolation/served_context.h"
#include "isolation/shared_provider_host.h"
#include "isolation/shared_region_pool.h"
#include "partition/partition.h"

namespace ephost {

using isolation::MessageReader;
using isolation::MessageWriter;
using isolation::Op;
using isolation::ProcessLost;

namespace {

// A release never waits long for a process that is busy dying.
constexpr std::chrono::milliseconds kReleaseTimeout{2000};
// At most this many on_run_start/on_run_end wait for a request to go ahead of (runs that never call the
// provider); then they are sent alone.
constexpr size_t kMaxPosted = 64;

// The error of a call whose process was lost: the retry loops of compile know it from a plugin's error.
class ProcessLostError : public Error {
 public:
  using Error::Error;
};

MessageWriter request(Op op, uint64_t client) {
  MessageWriter w;
  w.u32(static_cast<uint32_t>(op)).u64(client);
  return w;
}

uint64_t take_client_id(isolation::SharedProviderHost& host) {
  std::lock_guard<std::mutex> lock(host.mutex);
  return host.next_client++;
}

}  // namespace

const char* isolated_provider_state_name(IsolatedProviderState state) {
  switch (state) {
    case IsolatedProviderState::kRunning: return "running";
    case IsolatedProviderState::kRestarting: return "restarting";
    case IsolatedProviderState::kFallenBack: return "fallen_back";
  }
  return "running";
}

struct IsolatedProvider::GraphRecord {
  uint64_t id = 0;
  const Graph* main = nullptr;
  std::string model;  // sent instead of main's model when set: a compiled group's context (restart_context.h)
  uint64_t sent_generation = 0;  // the process generation that has it; 0: none yet
};

// A kernel or compute unit made in the provider host: how to make it again in a new process (the
// request), its id there, and what the fallback provider needs to make it instead.
class IsolatedProvider::Unit final : public ComputeUnit {
 public:
  Unit(const IsolatedProvider& owner, bool fused, std::string name, std::string what)
      : ComputeUnit(fused, std::move(name)), owner(owner), what(std::move(what)) {}
  ~Unit() override { owner.release_unit(*this); }

  const IsolatedProvider& owner;
  const std::string what;          // "compute of fused group 'g'", "kernel for node 'n' (Add)": for errors
  GraphRecord* graph = nullptr;
  std::string make_request;        // the request that makes it (kCreateKernel, kCompile, kLoadContext)
  const Graph* ir_graph = nullptr; // the nodes the fallback compiles (none for a loaded context)
  std::vector<const Node*> nodes;
  bool wants_state = false;
  uint64_t remote = 0;
  uint64_t generation = 0;         // the process generation that made it; 0: none
  uint64_t state_generation = 0;
  size_t output_bytes = 0;         // the last compute's output bytes: reserved ahead in the arena
  std::unique_ptr<FallbackGroup> fallback;  // the fallback provider's kernels, once fallen back
  // A compiled group: its EPContext node's inputs and outputs; once the plugin emitted its context, what
  // a new process loads instead of compiling (the context's graph and the kLoadContext request).
  std::optional<isolation::ContextSignature> signature;
  std::unique_ptr<GraphRecord> context_graph;
  std::string load_request;
  bool loaded_from_context = false;  // made from its context in the current process: reads the node's inputs
  // A compiled group's constant initializers (inputs its signature leaves out), copied once into shared
  // memory, so that each compute passes them in place instead of copying them through the arena: by
  // input index, with the bytes they were copied from.
  struct ConstantCopy {
    const void* source = nullptr;
    size_t bytes = 0;
    std::shared_ptr<isolation::SharedRegion> region;
  };
  std::map<size_t, ConstantCopy> constants;
  // Per output: shared memory the host allocated for it (isolation_shared_outputs), reused by a later
  // compute once nothing holds the value that lay there, and the most bytes the output took so far.
  struct OutputPool {
    size_t bytes = 0;
    isolation::SharedRegionPool regions{kPooledOutputRegions};
  };
  std::vector<OutputPool> output_pools;
};

IsolatedProvider::IsolatedProvider(const void* env, const PluginRecord& record,
                                   const std::vector<std::pair<std::string, std::string>>& options,
                                   int64_t device_index, IsolationSettings settings, std::string executable)
    : IsolatedProvider(env, record, options, device_index, std::move(settings), std::move(executable),
                       device_for(*this, record, device_index)) {}

IsolatedProvider::IsolatedProvider(const void* env, const PluginRecord& record,
                                   const std::vector<std::pair<std::string, std::string>>& options,
                                   int64_t device_index, IsolationSettings settings, std::string executable,
                                   std::unique_ptr<isolation::IsolatedDevice> device)
    : Provider(record, device.get()), settings_(std::move(settings)), executable_(std::move(executable)),
      host_(isolation::shared_provider_host(env, record.path, record.name)), client_(take_client_id(*host_)),
      device_index_(device_index), isolated_device_(std::move(device)), mutex_(host_->mutex),
      process_(host_->process), generation_(host_->generation) {
  if (device_index >= 0 && static_cast<size_t>(device_index) >= record.probed_devices.size())
    fail(EPHOST_INVALID_ARGUMENT, "provider '{}': plugin '{}' has no device {}", name(), name(), device_index);
  const std::string why_not = cannot_serve(record, device_index);
  if (!why_not.empty())
    fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' {}: run it in process (ep.{}.isolation=in_process)", name(), why_not,
         name());
  create_request_ = request(Op::kCreate, client_);
  create_request_.bytes(record.path).bytes(record.name).i64(device_index_).u64(options.size());
  for (const auto& [key, value] : options) create_request_.bytes(key).bytes(value);
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_process_locked("provider_create");
}

std::unique_ptr<isolation::IsolatedDevice> IsolatedProvider::device_for(const IsolatedProvider& owner,
                                                                         const PluginRecord& record,
                                                                         int64_t device_index) {
  if (device_index < 0 || static_cast<size_t>(device_index) >= record.probed_devices.size()) return nullptr;
  const ProbedDevice& probed = record.probed_devices[static_cast<size_t>(device_index)];
  if (probed.host_memory_usable) return nullptr;
  return std::make_unique<isolation::IsolatedDevice>(owner, record.name, record.path,
                                                     static_cast<uint32_t>(device_index), probed);
}

std::string IsolatedProvider::cannot_serve(const PluginRecord& record, int64_t device_index) {
  if (device_index < 0) return "";
  if (static_cast<size_t>(device_index) >= record.probed_devices.size())
    return fmt::format("has no device {} ('ephost plugins' lists its devices)", device_index);
  return "";
}

IsolatedProvider::~IsolatedProvider() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!process_ || !process_->alive() || created_generation_ != generation_) return;
  try {
    // The last run's on_run_end, still waiting for a request to go ahead of, is delivered; then this
    // provider's part of the shared process is released (the process ends with its last client).
    request_locked(request(Op::kDestroy, client_).data(), "release", kReleaseTimeout);
  } catch (...) {
    // A process that dies now is started again by the next client that needs it.
  }
}

void IsolatedProvider::set_health_callback(HealthCallback callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  callback_ = callback ? std::make_shared<HealthCallback>(std::move(callback)) : nullptr;
}

size_t IsolatedProvider::device_buffers_held() const {
  return isolated_device_ ? isolated_device_->buffers_held() : 0;
}

IsolatedProviderHealth IsolatedProvider::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  IsolatedProviderHealth h = health_;
  h.process_id = process_ && process_->alive() ? process_->pid() : -1;
  return h;
}

void IsolatedProvider::notify(const IsolatedProviderHealth& health) const {
  std::shared_ptr<HealthCallback> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    callback = callback_;
  }
  if (callback) (*callback)(name(), health);
}

void IsolatedProvider::notify_outside_lock(const IsolatedProviderHealth& health) const {
  // The callback runs without the provider's lock, on the thread of the call that saw the change.
  mutex_.unlock();
  try {
    notify(health);
  } catch (...) {
  }
  mutex_.lock();
}

IsolatedProvider::Unit& IsolatedProvider::own(const ComputeUnit& unit) const {
  auto& isolated = const_cast<Unit&>(static_cast<const Unit&>(unit));
  if (&isolated.owner != this)
    fail(EPHOST_FAIL, "provider '{}' was handed compute unit '{}' of another provider (internal error)", name(),
         unit.name());
  return isolated;
}

// ---- the process ----------------------------------------------------------------------------------------

void IsolatedProvider::ensure_process_locked(const std::string& what) const {
  if (health_.state == IsolatedProviderState::kFallenBack)
    throw ProcessLostError(EPHOST_EP_FAIL, fmt::format("provider '{}' {}: the provider fell back after {} failures "
                                                       "and runs no process any more (last: {})",
                                                       name(), what, health_.failures, health_.last_failure));
  std::string how;
  if (process_ && process_->ended_between_calls(how)) {
    // Counted as a failure, but no call was in it: nothing fails now, a new process starts.
    try {
      lose_process_locked(what + " (between calls)", ProcessLost(how, false));
    } catch (const ProcessLostError&) {
      if (health_.state == IsolatedProviderState::kFallenBack) throw;
    }
  }
  if (!process_ || !process_->alive()) {
    process_ = std::make_unique<isolation::ProviderProcess>(executable_);
    ++generation_;
  }
  if (created_generation_ == generation_) return;
  posted_.clear();  // they were for a process that is gone
  // This provider in the (new, or shared) process. A provider_create that fails cleanly leaves the
  // process to its other clients.
  const std::string reply = request_locked(create_request_.data(), what, settings_.compile_timeout);
  created_generation_ = generation_;
  MessageReader in(reply);
  in.u32();
  const uint32_t flags = in.u32();
  // Sticky: an ONNX Runtime plugin EP emits contexts once it compiled (read_unit_reply_locked), and the
  // provider made in a new process has compiled nothing yet.
  if (flags & isolation::kCreatedEmitsContexts) emits_contexts_ = true;
  observes_runs_ = flags & isolation::kCreatedObservesRuns;
  syncs_ = flags & isolation::kCreatedSyncs;
  if (isolated_device_)
    isolated_device_->set_capabilities(flags & isolation::kCreatedDeviceHasStreams,
                                       flags & isolation::kCreatedDeviceCopiesBetweenDevices);
  if (health_.state != IsolatedProviderState::kRestarting) return;
  health_.state = IsolatedProviderState::kRunning;
  IsolatedProviderHealth snapshot = health_;
  snapshot.process_id = process_->pid();
  notify_outside_lock(snapshot);
  // Other calls may have run while the callback did: the process is made sure of again.
  ensure_process_locked(what);
}

std::string IsolatedProvider::request_locked(const std::string& message, const std::string& what,
                                             Clock::duration timeout, const std::function<bool()>& should_stop) const {
  if (!posted_.empty()) return batch_request_locked(message, what, timeout, should_stop);
  std::string reply;
  try {
    reply = process_->call(message, timeout, should_stop);
  } catch (const ProcessLost& lost) {
    lose_process_locked(what, lost);
  }
  MessageReader in(reply);
  const uint32_t status = in.u32();
  if (status != isolation::kReplyOk) throw Error(static_cast<EphostStatusCode>(status), in.str());
  return reply;
}

std::string IsolatedProvider::batch_frame_locked(const std::string& message) const {
  MessageWriter batch = request(Op::kBatch, client_);
  batch.u64(posted_.size());
  for (const std::string& ahead : posted_) batch.bytes(ahead);
  batch.bytes(message);
  posted_.clear();
  return batch.data();
}

std::string IsolatedProvider::batch_inner_reply_locked(const std::string& reply, const std::string& what) const {
  MessageReader in(reply);
  if (in.u32() != isolation::kReplyOk) return reply;  // the batch failed as a whole: its error is the reply
  for (uint64_t n = in.u64(); n > 0; --n)
    log_warning(fmt::format("provider '{}' on_run_end (sent ahead of {}): {}", name(), what, in.str()));
  return std::string(in.bytes());
}

std::string IsolatedProvider::batch_request_locked(const std::string& message, const std::string& what,
                                                   Clock::duration timeout,
                                                   const std::function<bool()>& should_stop) const {
  const std::string batch = batch_frame_locked(message);
  // A crash or hang may have been in the calls sent ahead: the error names them too.
  const std::string reply =
      request_locked(batch, what + " (after on_run_start/on_run_end sent ahead)", timeout, should_stop);
  const std::string inner = batch_inner_reply_locked(reply, what);
  MessageReader inner_in(inner);
  const uint32_t status = inner_in.u32();
  if (status != isolation::kReplyOk) throw Error(static_cast<EphostStatusCode>(status), inner_in.str());
  return inner;
}

void IsolatedProvider::pipelined_requests_locked(size_t count, const std::function<std::string(size_t)>& make,
                                                 const std::string& what, Clock::duration timeout,
                                                 const std::function<void(size_t, const std::string&)>& on_reply) const {
  const auto deadline = Clock::now() + timeout;
  const bool batched = !posted_.empty();
  std::optional<Error> first_error;
  try {
    for (size_t i = 0; i < count; ++i) {
      const std::string message = make(i);
      process_->send(i == 0 && batched ? batch_frame_locked(message) : message);
    }
    for (size_t i = 0; i < count; ++i) {
      std::string reply = process_->receive(deadline, {}, timeout);
      if (i == 0 && batched) reply = batch_inner_reply_locked(reply, what);
      MessageReader in(reply);
      const uint32_t status = in.u32();
      if (status != isolation::kReplyOk) {
        if (!first_error) first_error.emplace(static_cast<EphostStatusCode>(status), in.str());
      } else if (on_reply && !first_error) {
        try {
          on_reply(i, reply);
        } catch (const Error& e) {
          first_error.emplace(e);  // the replies after it are read all the same
        }
      }
    }
  } catch (const ProcessLost& lost) {
    lose_process_locked(what, lost);
  }
  if (first_error) throw *first_error;
}

size_t IsolatedProvider::upload_room_locked(uint64_t stream, size_t bytes) const {
  isolation::ProviderProcess::PendingUploads& pending = process_->pending_uploads();
  isolation::SharedArena& arena = process_->arena();
  if (stream && pending.stream == stream) {
    // Behind the uploads still queued on this stream: the provider host finishes them before it maps a
    // grown arena again (provider_host_server.cpp), so growing here is safe.
    arena.reserve(pending.end + bytes);
    return pending.end;
  }
  settle_uploads_locked();
  arena.reserve(bytes);
  return 0;
}

void IsolatedProvider::settle_uploads_locked() const {
  isolation::ProviderProcess::PendingUploads& pending = process_->pending_uploads();
  if (!pending.stream) return;
  MessageWriter m = request(Op::kStreamSynchronize, client_);
  m.u64(pending.stream);
  request_locked(m.data(), "stream_synchronize (uploads still reading the shared memory)", settings_.call_timeout);
  pending = {};
}

void IsolatedProvider::post_locked(Op op) const { post_request_locked(request(op, client_).data()); }

void IsolatedProvider::post_request_locked(std::string message) const {
  posted_.push_back(std::move(message));
  // Runs that never call this provider post without sending: past a bound they go on their own.
  if (posted_.size() < kMaxPosted) return;
  std::string last = std::move(posted_.back());
  posted_.pop_back();
  request_locked(last, "on_run_start/on_run_end", settings_.call_timeout);
}

void IsolatedProvider::lose_process_locked(const std::string& what, const ProcessLost& lost) const {
  const auto now = Clock::now();
  std::string consequence;
  if (lost.stopped) {
    health_.state = IsolatedProviderState::kRestarting;
    consequence = "the next call starts a new one";
  } else {
    ++health_.failures;
    recent_failures_.push_back(now);
    while (!recent_failures_.empty() && now - recent_failures_.front() > settings_.failure_window)
      recent_failures_.pop_front();
    const bool too_many = static_cast<int>(recent_failures_.size()) >= settings_.max_failures;
    if (too_many && !fallback_blocked_.empty()) {
      health_.state = IsolatedProviderState::kRestarting;
      consequence = fmt::format("that is {} failures within {} s, but its work cannot go to other providers: {}; so "
                                "the next call starts a new provider host process",
                                recent_failures_.size(),
                                std::chrono::duration_cast<std::chrono::seconds>(settings_.failure_window).count(),
                                fallback_blocked_);
    } else if (too_many) {
      health_.state = IsolatedProviderState::kFallenBack;
      std::string to = "no other provider (none is left)";
      if (fallback_ && isolated_device_)
        to = "the providers after it, ending with provider '" + fallback_->name() +
             "' (the session plans the placement again without it: at its next run, or now while it is created)";
      else if (fallback_)
        to = "provider '" + fallback_->name() + "'";
      consequence = fmt::format("that is {} failures within {} s, so its work goes to {}", recent_failures_.size(),
                                std::chrono::duration_cast<std::chrono::seconds>(settings_.failure_window).count(), to);
    } else {
      health_.state = IsolatedProviderState::kRestarting;
      consequence = "the next call starts a new one";
    }
  }
  const std::string message = fmt::format("provider '{}' {}: its provider host process {} (plugin {}); {}", name(), what,
                                          lost.what(), library_path(), consequence);
  if (!lost.stopped) {
    health_.last_failure = message;
    log_warning(message);
  }
  IsolatedProviderHealth snapshot = health_;
  snapshot.process_id = -1;
  process_.reset();
  posted_.clear();  // they were for the process that is gone
  notify_outside_lock(snapshot);
  throw ProcessLostError(EPHOST_EP_FAIL, message);
}

void IsolatedProvider::set_fallback_blocked(std::string why) {
  std::lock_guard<std::mutex> lock(mutex_);
  fallback_blocked_ = std::move(why);
}

IsolatedProvider::GraphRecord& IsolatedProvider::graph_record_locked(const Graph& graph) const {
  const Graph& main = isolation::main_graph_of(graph);
  auto& slot = graphs_[{&main, main.nodes.size(), main.values.size()}];
  if (!slot) {
    slot = std::make_unique<GraphRecord>();
    slot->id = next_graph_id_++;
    slot->main = &main;
  }
  return *slot;
}

void IsolatedProvider::ensure_graph_locked(GraphRecord& graph, const std::string& what) const {
  if (graph.sent_generation == generation_) return;
  MessageWriter m = request(Op::kGraph, client_);
  m.u64(graph.id).bytes(graph.model.empty() ? isolation::snapshot_model(*graph.main) : graph.model);
  request_locked(m.data(), what, settings_.compile_timeout);
  graph.sent_generation = generation_;
}

void IsolatedProvider::ensure_unit_locked(Unit& unit) const {
  // A group whose context the plugin emitted is loaded from it in a new process, not compiled again.
  if (unit.generation != generation_ && unit.generation != 0 && unit.context_graph && load_unit_context_locked(unit))
    unit.generation = generation_;
  if (unit.generation != generation_) {
    unit.loaded_from_context = false;
    if (unit.graph) ensure_graph_locked(*unit.graph, unit.what);
    const std::string reply = request_locked(unit.make_request, unit.what, settings_.compile_timeout);
    unit.remote = read_unit_reply_locked(reply);
    unit.generation = generation_;
  }
  if (unit.wants_state && unit.state_generation != generation_) {
    MessageWriter m = request(Op::kCreateState, client_);
    m.u64(unit.remote);
    request_locked(m.data(), "create_state for " + unit.name(), settings_.compile_timeout);
    unit.state_generation = generation_;
  }
}

uint64_t IsolatedProvider::read_unit_reply_locked(const std::string& reply) const {
  MessageReader in(reply);
  in.u32();
  const uint64_t remote = in.u64();
  if (in.u32()) emits_contexts_ = true;
  std::string info = in.str();
  if (!info.empty()) compatibility_info_ = std::move(info);
  return remote;
}

std::string IsolatedProvider::compiled_model_compatibility_info() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compatibility_info_;
}

bool IsolatedProvider::load_unit_context_locked(Unit& unit) const {
  const std::string what = fmt::format("context_load for '{}' (restart)", unit.name());
  std::string reply;
  try {
    ensure_graph_locked(*unit.context_graph, what);
    reply = request_locked(unit.load_request, what, settings_.compile_timeout);
  } catch (const ProcessLostError&) {
    throw;
  } catch (const Error& e) {
    // The plugin refused its own context: compiled again, as without one.
    log_warning(fmt::format("provider '{}' {} failed, so the group is compiled again: {}", name(), what, e.what()));
    unit.context_graph.reset();
    unit.load_request.clear();
    return false;
  }
  unit.remote = read_unit_reply_locked(reply);
  unit.loaded_from_context = true;
  log_info(fmt::format("provider '{}': group '{}' loaded from its context in the new provider host process", name(),
                       unit.name()));
  return true;
}

std::unique_ptr<ComputeUnit> IsolatedProvider::make_unit(std::unique_ptr<Unit> unit) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (;;) {
    // Made by the fallback on use (a device provider's are not: the session plans again without it).
    if (health_.state == IsolatedProviderState::kFallenBack && fallback_ && !isolated_device_) return unit;
    try {
      ensure_process_locked(unit->what);
      ensure_unit_locked(*unit);
      return unit;
    } catch (const ProcessLostError&) {
      // Tried again in a new process, until the failures make the provider fall back (or would have, for one
      // that cannot fall back).
      if (health_.state == IsolatedProviderState::kFallenBack && (!fallback_ || isolated_device_)) throw;
      if (!fallback_blocked_.empty() && static_cast<int>(recent_failures_.size()) >= settings_.max_failures) throw;
    }
  }
}

void IsolatedProvider::release_unit(Unit& unit) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto named = compiled_.find(unit.name());
  if (named != compiled_.end() && named->second == &unit) compiled_.erase(named);
  if (!process_ || !process_->alive() || unit.generation != generation_) return;
  MessageWriter m = request(Op::kReleaseUnit, client_);
  m.u64(unit.remote);
  try {
    if (!posted_.empty()) {
      MessageWriter batch = request(Op::kBatch, client_);
      batch.u64(posted_.size());
      for (const std::string& ahead : posted_) batch.bytes(ahead);
      batch.bytes(m.data());
      posted_.clear();
      process_->call(batch.data(), kReleaseTimeout);
    } else {
      process_->call(m.data(), kReleaseTimeout);
    }
  } catch (...) {
    // A process that dies while releasing is started again when it is next needed.
    process_.reset();
  }
}

// ---- the door's calls -------------------------------------------------------------------------------------

std::vector<EphostCapability::Claim> IsolatedProvider::claims(const GraphView& view, const char* occasion) const {
  const std::string what = occasion ? fmt::format("get_capability ({})", occasion) : std::string("get_capability");
  if (!view.graph || view.nodes.size() != view.graph->nodes.size())
    fail(EPHOST_EP_FAIL, "provider '{}' {}: an isolated provider is asked about whole graphs only (internal error)",
         name(), what);
  std::string reply;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ensure_process_locked(what);
    GraphRecord& graph = graph_record_locked(*view.graph);
    ensure_graph_locked(graph, what);
    MessageWriter m = request(Op::kClaims, client_);
    m.u64(graph.id);
    isolation::write_graph_path(m, *view.graph);
    m.bytes(occasion ? occasion : "");
    reply = request_locked(m.data(), what, settings_.call_timeout);
  }
  MessageReader in(reply);
  in.u32();
  std::vector<EphostCapability::Claim> claims(in.u64());
  for (auto& claim : claims) {
    claim.fused = in.u32() != 0;
    claim.refused = in.str();
    for (uint64_t n = in.u64(); n > 0; --n) {
      const uint64_t index = in.u64();
      if (index >= view.graph->nodes.size())
        fail(EPHOST_EP_FAIL, "provider '{}' {}: the provider host claimed node {} of a graph of {} nodes", name(), what,
             index, view.graph->nodes.size());
      claim.nodes.push_back(view.graph->nodes[index].get());
    }
    if (claim.refused.empty()) claim.refused = isolation::why_claim_cannot_cross(claim.nodes, name());
  }
  return claims;
}

std::unique_ptr<ComputeUnit> IsolatedProvider::create_kernel(const Node& node) const {
  auto unit = std::make_unique<Unit>(*this, false, node.name, fmt::format("kernel for node '{}' ({})", node.name,
                                                                            node.op_type));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unit->graph = &graph_record_locked(*node.owner);
  }
  MessageWriter m = request(Op::kCreateKernel, client_);
  m.u64(unit->graph->id);
  isolation::write_graph_path(m, *node.owner);
  m.u64(node.index);
  unit->make_request = m.data();
  unit->ir_graph = node.owner;
  unit->nodes = {&node};
  return make_unit(std::move(unit));
}

std::unique_ptr<ComputeUnit> IsolatedProvider::compile(const GraphView& group, const std::string& fused_name) const {
  if (!group.graph) fail(EPHOST_EP_FAIL, "provider '{}': fused group '{}' has no graph (internal error)", name(), fused_name);
  auto unit = std::make_unique<Unit>(*this, true, fused_name, fmt::format("compile of fused group '{}' ({} nodes)",
                                                                          fused_name, group.nodes.size()));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unit->graph = &graph_record_locked(*group.graph);
  }
  MessageWriter m = request(Op::kCompile, client_);
  m.u64(unit->graph->id);
  isolation::write_graph_path(m, *group.graph);
  m.u64(group.nodes.size());
  for (const Node* n : group.nodes) m.u64(n->index);
  m.bytes(fused_name);
  unit->make_request = m.data();
  unit->ir_graph = group.graph;
  unit->nodes = group.nodes;
  unit->signature = isolation::context_signature(group);
  std::unique_ptr<ComputeUnit> made = make_unit(std::move(unit));
  std::lock_guard<std::mutex> lock(mutex_);
  compiled_[fused_name] = static_cast<Unit*>(made.get());
  return made;
}

void IsolatedProvider::create_state(ComputeUnit& computeUnit) const {
  Unit& unit = own(computeUnit);
  if (!unit.fused()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  unit.wants_state = true;
  if (health_.state == IsolatedProviderState::kFallenBack) return;  // the fallback unit gets its state when made
  ensure_process_locked("create_state for " + unit.name());
  ensure_unit_locked(unit);
}

void IsolatedProvider::compute(const ComputeUnit& computeUnit, EphostKernelContext* context) const {
  Unit& unit = own(computeUnit);
  if (isolated_device_) return compute_on_device(unit, context);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (health_.state != IsolatedProviderState::kFallenBack) return compute_remote_locked(unit, context);
  }
  compute_fallback(unit, context);
}

void IsolatedProvider::compute_remote_locked(Unit& unit, EphostKernelContext* context) const {
  const std::string what = unit.fused() ? fmt::format("compute of fused group '{}'", unit.name())
                                        : fmt::format("compute of {}", unit.what);
  ensure_process_locked(what);
  ensure_unit_locked(unit);
  settle_uploads_locked();
  isolation::SharedArena& arena = process_->arena();
  // The inputs go to the arena, and room for the outputs is kept after them (as much as last time); an
  // input in the application's shared tensor memory is read where it is.
  // A group loaded from its context reads its node's inputs: the group's, less the constant initializers.
  std::vector<size_t> read(context->num_inputs());
  for (size_t i = 0; i < read.size(); ++i) read[i] = i;
  if (unit.loaded_from_context && unit.signature) read = unit.signature->input_indices;
  std::vector<const Tensor*> inputs(read.size(), nullptr);
  std::vector<std::optional<isolation::RegionSpan>> shared(read.size());
  size_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RuntimeValue* v = read[i] < context->num_inputs() ? context->input(read[i]) : nullptr;
    if (!v) continue;
    if (!v->is_tensor() || v->tensor().elem_type() == EPHOST_ELEMENT_STRING || v->tensor().device())
      fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' {}: input {} is {}, which does not cross to a provider host process "
           "(only numeric tensors in host memory do); run the provider in process (ep.{}.isolation=in_process)",
           name(), what, i, v->describe(), name());
    inputs[i] = &v->tensor();
    shared[i] = isolation::find_shared_region(inputs[i]->data(), inputs[i]->byte_size());
    if (!shared[i]) shared[i] = constant_in_shared_memory_locked(unit, read[i], *inputs[i]);
    if (!shared[i]) bytes = isolation::SharedArena::align(bytes + inputs[i]->byte_size());
  }
  const std::vector<OutputPlace> places = output_places_locked(unit, context, what);
  arena.reserve(bytes + unit.output_bytes);
  MessageWriter m = request(Op::kCompute, client_);
  // Host memory: no device (-1), no stream (0), no device outputs (0).
  m.u64(unit.remote).u64(arena.size()).i64(context->num_threads()).i64(-1).u64(0).u64(0).u64(inputs.size());
  size_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    if (t && shared[i]) {
      isolation::write_region_slot(m, *t, region_in_process_locked(*shared[i]->region, what), shared[i]->offset);
      bytes_in_place_ += t->byte_size();
      continue;
    }
    isolation::write_tensor_slot(m, t, offset);
    if (!t) continue;
    if (t->byte_size()) std::memcpy(arena.base() + offset, t->data(), t->byte_size());
    bytes_copied_ += t->byte_size();
    offset = isolation::SharedArena::align(offset + t->byte_size());
  }
  m.u64(context->num_outputs()).u64(places.size());
  for (const OutputPlace& p : places) {
    m.u64(p.index).u64(p.span.region->id()).u64(p.span.offset);
    if (!p.destination) {  // memory of the host's for the output: any type and shape that fits
      m.i64(EPHOST_ELEMENT_UNDEFINED).u64(0).u64(p.capacity);
      continue;
    }
    m.i64(p.destination->elem_type()).u64(p.destination->shape().size());
    for (int64_t d : p.destination->shape()) m.i64(d);
    m.u64(p.capacity);
  }
  const RunLimits* limits = context->run_limits();
  std::function<bool()> stop;
  if (limits && limits->limited()) stop = [limits] { return limits->stop_reason().has_value(); };
  std::string reply;
  try {
    reply = request_locked(m.data(), what, settings_.call_timeout, stop);
  } catch (const ProcessLostError&) {
    // A run stopped by its own limits reports the stop, not the process it ended.
    if (limits) limits->check();
    throw;
  }
  MessageReader in(reply);
  in.u32();
  arena.follow(in.u64());
  const uint64_t outputs = in.u64();
  size_t output_bytes = 0;
  for (uint64_t i = 0; i < outputs; ++i) {
    const auto place = static_cast<isolation::SlotPlace>(in.u32());
    if (place == isolation::SlotPlace::kAbsent) continue;
    const auto elem_type = static_cast<int32_t>(in.i64());
    std::vector<int64_t> shape(in.u64());
    for (int64_t& d : shape) d = in.i64();
    const size_t size = byte_count(elem_type, shape);
    if (i < unit.output_pools.size()) unit.output_pools[i].bytes = std::max(unit.output_pools[i].bytes, size);
    const char* from = nullptr;
    if (place == isolation::SlotPlace::kRegion) {
      // Only where the host asked: a provider host names no other memory of the application.
      const uint64_t region = in.u64(), at = in.u64();
      auto asked = std::find_if(places.begin(), places.end(), [&](const OutputPlace& p) { return p.index == i; });
      if (asked == places.end() || asked->span.region->id() != region || asked->span.offset != at ||
          size > asked->capacity)
        fail(EPHOST_EP_FAIL, "provider '{}' {}: output {} was placed in shared memory the host did not offer", name(),
             what, i);
      from = asked->span.region->base() + at;
      if (!asked->destination) {
        // The host's memory for this output: the value stays there, held by whoever reads it.
        std::shared_ptr<void> holder = std::const_pointer_cast<isolation::SharedRegion>(asked->span.region);
        context->set_output(i, Tensor::borrow(elem_type, std::move(shape), const_cast<char*>(from), std::move(holder)));
        bytes_in_place_ += size;
        continue;
      }
    } else {
      const uint64_t at = in.u64();
      if (place != isolation::SlotPlace::kArena || at > arena.size() || size > arena.size() - at)
        fail(EPHOST_EP_FAIL, "provider '{}' {}: output {} lies outside the shared memory", name(), what, i);
      from = arena.base() + at;
      output_bytes = isolation::SharedArena::align(output_bytes + size);
    }
    Tensor& out = context->allocate_output(i, elem_type, std::move(shape));
    if (out.data() == from) {
      bytes_in_place_ += size;  // written in place: the tensor the output is bound to
      continue;
    }
    if (size) std::memcpy(out.data(), from, size);
    bytes_copied_ += size;
  }
  unit.output_bytes = output_bytes;
}

std::optional<isolation::RegionSpan> IsolatedProvider::constant_in_shared_memory_locked(Unit& unit, size_t index,
                                                                                       const Tensor& input) const {
  if (!unit.signature || unit.loaded_from_context || input.byte_size() == 0) return std::nullopt;
  const std::vector<size_t>& variable = unit.signature->input_indices;
  if (std::find(variable.begin(), variable.end(), index) != variable.end()) return std::nullopt;
  Unit::ConstantCopy& copy = unit.constants[index];
  if (!copy.region || copy.source != input.data() || copy.bytes != input.byte_size()) {
    copy.region = isolation::SharedRegion::create(input.byte_size());
    std::memcpy(copy.region->base(), input.data(), input.byte_size());
    copy.source = input.data();
    copy.bytes = input.byte_size();
    bytes_copied_ += input.byte_size();  // once
  }
  return isolation::RegionSpan{copy.region, 0};
}

std::vector<IsolatedProvider::OutputPlace> IsolatedProvider::output_places_locked(Unit& unit,
                                                                                   EphostKernelContext* context,
                                                                                   const std::string& what) const {
  std::vector<OutputPlace> places;
  unit.output_pools.resize(context->num_outputs());
  for (size_t i = 0; i < context->num_outputs(); ++i) {
    const Tensor* dst = context->output_destination(i);
    if (!dst) {
      if (std::shared_ptr<isolation::SharedRegion> region = pooled_output_region_locked(unit, context, i)) {
        region_in_process_locked(*region, what);
        const uint64_t capacity = region->size();
        places.push_back(OutputPlace{i, isolation::RegionSpan{std::move(region), 0}, nullptr, capacity});
      }
      continue;
    }
    if (dst->device() || dst->elem_type() == EPHOST_ELEMENT_STRING) continue;
    std::optional<isolation::RegionSpan> span = isolation::find_shared_region(dst->data(), dst->byte_size());
    if (!span) continue;
    region_in_process_locked(*span->region, what);
    places.push_back(OutputPlace{i, std::move(*span), dst, dst->byte_size()});
  }
  return places;
}

std::shared_ptr<isolation::SharedRegion> IsolatedProvider::pooled_output_region_locked(
    Unit& unit, EphostKernelContext* context, size_t index) const {
  Unit::OutputPool& pool = unit.output_pools[index];
  // Before the output's first compute its size is unknown (pool.bytes 0): that compute goes through the arena.
  if (!settings_.shared_outputs || pool.bytes < isolation::kSharedOutputMinBytes ||
      !context->output_read_only_by_provider(index))
    return nullptr;
  // Every region still holding a value (the application keeps outputs, or runs overlap): null, and the
  // output is copied through the arena, as without shared outputs.
  return pool.regions.take(pool.bytes);
}

uint64_t IsolatedProvider::region_in_process_locked(const isolation::SharedRegion& region,
                                                    const std::string& what) const {
  std::unordered_set<uint64_t>& attached = process_->attached_regions();
  if (attached.count(region.id())) return region.id();
  // Regions the application released since they were mapped there are unmapped first (sent ahead).
  for (auto it = attached.begin(); it != attached.end();) {
    if (isolation::SharedRegion::alive(*it)) {
      ++it;
      continue;
    }
    MessageWriter detach = request(Op::kDetachRegion, client_);
    detach.u64(*it);
    post_request_locked(detach.data());
    it = attached.erase(it);
  }
  MessageWriter m = request(Op::kAttachRegion, client_);
  m.u64(region.id()).u64(region.size());
  process_->pass_fd_with_next_request(region.fd());
  request_locked(m.data(), what + " (mapping shared tensor memory)", settings_.call_timeout);
  attached.insert(region.id());
  return region.id();
}

namespace {

// A compute's output as the provider host described it.
struct RemoteOutput {
  isolation::SlotPlace place = isolation::SlotPlace::kAbsent;
  int32_t elem_type = 0;
  std::vector<int64_t> shape;
  uint64_t id = 0;     // kDevice: the buffer the provider host keeps
  Tensor host;         // kArena: copied out of the arena
};

}  // namespace

void IsolatedProvider::compute_on_device(Unit& unit, EphostKernelContext* context) const {
  const std::string what = unit.fused() ? fmt::format("compute of fused group '{}'", unit.name())
                                        : fmt::format("compute of {}", unit.what);
  const isolation::IsolatedDevice& device = *isolated_device_;
  // Asked before the lock: reading an input may copy it to the device now, and the run's stream may be
  // made now, each a request of its own.
  std::vector<const RuntimeValue*> values(context->num_inputs());
  for (size_t i = 0; i < values.size(); ++i) values[i] = context->input(i);
  EphostStream* stream = context->stream();
  const RunLimits* limits = context->run_limits();
  std::function<bool()> stop;
  if (limits && limits->limited()) stop = [limits] { return limits->stop_reason().has_value(); };

  std::vector<RemoteOutput> outputs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (health_.state == IsolatedProviderState::kFallenBack)
      fail(EPHOST_EP_FAIL, "provider '{}' {}: the provider fell back after {} failures, and its device's memory, "
           "where this run's values were placed, is reached by its provider host process only; the session's next "
           "run plans the placement again without it (last failure: {})", name(), what, health_.failures,
           health_.last_failure);
    ensure_process_locked(what);
    ensure_unit_locked(unit);
    std::vector<size_t> read(values.size());
    for (size_t i = 0; i < read.size(); ++i) read[i] = i;
    if (unit.loaded_from_context && unit.signature) read = unit.signature->input_indices;
    isolation::SharedArena& arena = process_->arena();
    const uint64_t first_output_id = isolation::IsolatedDevice::reserve_ids(context->num_outputs());
    MessageWriter m = request(Op::kCompute, client_);
    m.u64(unit.remote).u64(arena.size()).i64(context->num_threads()).i64(device_index_)
        .u64(device.stream_id_locked(stream)).u64(first_output_id).u64(read.size());
    for (size_t i = 0; i < read.size(); ++i) {
      const RuntimeValue* v = read[i] < values.size() ? values[read[i]] : nullptr;
      if (!v) {
        isolation::write_tensor_slot(m, nullptr, 0);
        continue;
      }
      if (!v->is_tensor() || v->tensor().device() != &device)
        fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' {}: input {} is {}, which does not cross to a provider host "
             "process (only tensors in its device's memory do); run the provider in process "
             "(ep.{}.isolation=in_process)", name(), what, i, v->describe(), name());
      const Tensor& t = v->tensor();
      isolation::write_device_slot(m, t, device.buffer_id_locked(t.device_buffer(), t.byte_size(), true), t.device_buffer().offset);
    }
    m.u64(context->num_outputs()).u64(0);  // device outputs stay on the device: no places in host memory
    std::string reply;
    try {
      reply = request_locked(m.data(), what, settings_.call_timeout, stop);
    } catch (const ProcessLostError&) {
      if (limits) limits->check();  // a run stopped by its own limits reports the stop
      throw;
    }
    MessageReader in(reply);
    in.u32();
    arena.follow(in.u64());
    outputs.resize(in.u64());
    for (RemoteOutput& o : outputs) {
      o.place = static_cast<isolation::SlotPlace>(in.u32());
      if (o.place == isolation::SlotPlace::kAbsent) continue;
      o.elem_type = static_cast<int32_t>(in.i64());
      o.shape.resize(in.u64());
      for (int64_t& d : o.shape) d = in.i64();
      if (o.place == isolation::SlotPlace::kDevice) {
        o.id = in.u64();
        in.u64();  // the offset: an adopted output starts its buffer
        continue;
      }
      const uint64_t at = in.u64();
      const size_t size = byte_count(o.elem_type, o.shape);
      if (at > arena.size() || size > arena.size() - at)
        fail(EPHOST_EP_FAIL, "provider '{}' {}: an output lies outside the shared memory", name(), what);
      o.host = Tensor::allocate(o.elem_type, o.shape);
      if (size) std::memcpy(o.host.data(), arena.base() + at, size);
      bytes_copied_ += size;
    }
    for (const RemoteOutput& o : outputs)
      if (o.place == isolation::SlotPlace::kDevice) device.adopt_locked(o.id, byte_count(o.elem_type, o.shape));
  }
  // Outside the lock: a buffer freed here (an output the context refuses) is a request of its own. Every
  // device output gets its holder first, so none is left behind if one is refused.
  std::vector<RuntimeValue> made(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    RemoteOutput& o = outputs[i];
    if (o.place == isolation::SlotPlace::kArena) {
      made[i] = std::move(o.host);
    } else if (o.place == isolation::SlotPlace::kDevice) {
      const uint64_t id = o.id;
      std::shared_ptr<void> holder(reinterpret_cast<void*>(static_cast<uintptr_t>(id)),
                                   [&device, id](void*) { device.free(isolation::IsolatedDevice::handle(id)); });
      made[i] = Tensor::on_device(device, o.elem_type, std::move(o.shape), isolation::IsolatedDevice::handle(id),
                                  std::move(holder));
    }
  }
  for (size_t i = 0; i < made.size(); ++i)
    if (made[i].is_set()) context->set_output(i, std::move(made[i]));
}

void IsolatedProvider::compute_fallback(Unit& unit, EphostKernelContext* context) const {
  const FallbackGroup* fallback = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!unit.fallback) {
      if (!fallback_)
        fail(EPHOST_EP_FAIL, "provider '{}' {}: the provider fell back after {} failures and the session has no "
             "provider to take its work (session.disable_cpu_ep_fallback=1?); last failure: {}", name(), unit.what,
             health_.failures, health_.last_failure);
      if (!unit.ir_graph)
        fail(EPHOST_EP_FAIL, "provider '{}' {}: the provider fell back, and its cached EPContext node cannot be run "
             "by provider '{}' (the session runs the source model's nodes instead from its next run on); last "
             "failure: {}", name(), unit.what, fallback_->name(), health_.last_failure);
      unit.fallback = std::make_unique<FallbackGroup>(*fallback_, *unit.ir_graph, unit.nodes, unit.fused(), unit.name());
    }
    fallback = unit.fallback.get();
  }
  fallback->compute(context);
}

// on_run_start and on_run_end are sent ahead of the provider's next request, in one frame with it
// (Op::kBatch): a run costs one round trip per compute, not two more for its start and end. The plugin
// sees them in the same order as in process. A failing on_run_start fails that next request; a failing
// on_run_end is logged (its run had returned already).
void IsolatedProvider::run_start() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (health_.state == IsolatedProviderState::kFallenBack) return;
  // A process lost in the last run is started again here, before this run's first compute.
  ensure_process_locked("on_run_start");
  if (observes_runs_) post_locked(Op::kRunStart);
}

void IsolatedProvider::run_end() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (health_.state == IsolatedProviderState::kFallenBack || !observes_runs_ || !process_ || !process_->alive()) return;
  post_locked(Op::kRunEnd);
}

void IsolatedProvider::sync(const char* why) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (health_.state == IsolatedProviderState::kFallenBack || !syncs_ || !process_ || !process_->alive()) return;
  MessageWriter m = request(Op::kSync, client_);
  m.bytes(why);
  request_locked(m.data(), fmt::format("Sync ({})", why), settings_.call_timeout);
}

void IsolatedProvider::emit_context(const std::string& fused_name, EphostContextSink& sink) const {
  const std::string what = fmt::format("context_emit for '{}'", fused_name);
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_process_locked(what);
  MessageWriter m = request(Op::kEmitContext, client_);
  m.bytes(fused_name);
  const std::string reply = request_locked(m.data(), what, settings_.compile_timeout);
  MessageReader in(reply);
  in.u32();
  for (uint64_t n = in.u64(); n > 0; --n) {
    const std::string_view piece = in.bytes();
    sink.pieces.emplace_back(piece.begin(), piece.end());
  }
  for (uint64_t n = in.u64(); n > 0; --n) {
    std::string key = in.str();
    sink.attributes.emplace_back(std::move(key), in.str());
  }
  keep_context_locked(fused_name, sink);
}

void IsolatedProvider::keep_context_locked(const std::string& fused_name, const EphostContextSink& sink) const {
  auto it = compiled_.find(fused_name);
  if (it == compiled_.end() || !it->second->signature || !it->second->graph || !it->second->graph->main) return;
  Unit& unit = *it->second;
  std::vector<std::pair<std::string, int64_t>> opsets;
  if (const Model* model = unit.graph->main->model; model && model->proto)
    for (const auto& op : model->proto->opset_import()) opsets.emplace_back(op.domain(), op.version());
  isolation::RestartContext context = isolation::restart_context(*unit.signature, fused_name, sink, record(), opsets);
  unit.context_graph = std::make_unique<GraphRecord>();
  unit.context_graph->id = next_graph_id_++;
  unit.context_graph->model = std::move(context.model);
  MessageWriter m = request(Op::kLoadContext, client_);
  m.u64(unit.context_graph->id).u64(0).u64(0).bytes(context.blob);
  unit.load_request = m.data();
}

std::optional<ContextJudgement> IsolatedProvider::judge_context(const Node& context_node, const void* blob,
                                                                size_t blob_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_process_locked("context_judge");
  GraphRecord& graph = graph_record_locked(*context_node.owner);
  ensure_graph_locked(graph, "context_judge");
  MessageWriter m = request(Op::kJudgeContext, client_);
  m.u64(graph.id);
  isolation::write_graph_path(m, *context_node.owner);
  m.u64(context_node.index).bytes({static_cast<const char*>(blob), blob_size});
  const std::string reply = request_locked(m.data(), "context_judge", settings_.compile_timeout);
  MessageReader in(reply);
  in.u32();
  if (!in.u32()) return std::nullopt;
  ContextJudgement judgement;
  judgement.verdict = static_cast<EphostContextVerdict>(in.u32());
  judgement.reason = in.str();
  return judgement;
}

std::unique_ptr<ComputeUnit> IsolatedProvider::load_context(const Node& context_node, const void* blob,
                                                            size_t blob_size) const {
  auto unit = std::make_unique<Unit>(*this, true, context_node.name, "context_load");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    unit->graph = &graph_record_locked(*context_node.owner);
  }
  MessageWriter m = request(Op::kLoadContext, client_);
  m.u64(unit->graph->id);
  isolation::write_graph_path(m, *context_node.owner);
  m.u64(context_node.index).bytes({static_cast<const char*>(blob), blob_size});
  unit->make_request = m.data();
  // No fallback for a loaded context: its nodes are the plugin's own, which no other provider reads.
  return make_unit(std::move(unit));
}

}  // namespace ephost
