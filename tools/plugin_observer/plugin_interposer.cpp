#include "plugin_interposer.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace ephost::observer {

namespace {

struct KernelInfo {
  const EphostProvider* provider = nullptr;
  const EphostNode* node = nullptr;
};

// The observer of this library: the plugin's table, the observing table the host calls, the counts.
struct Observer {
  ObserverOptions options;
  const EphostPlugin* target = nullptr;  // the plugin's own table
  const EphostHostApi* host = nullptr;
  EphostPlugin table{};                   // what the host calls
  std::mutex mutex;                       // kernels, counts, runs, hook
  std::map<const EphostKernel*, KernelInfo> kernels;  // live kernels, for what their computes are about
  ObservedCounts counts;
  std::map<const EphostProvider*, uint64_t> runs_in_flight;
  std::atomic<uint64_t> kernel_computes{0}, computes{0};
  std::atomic<uint64_t> max_kernel_computes{0}, max_computes{0};
  JudgeHook judge_hook;
};
Observer& observer() {
  static Observer* o = new Observer;  // never destroyed: unload records may come after static destructors
  return *o;
}

uint64_t own_clock() {
  static std::atomic<uint64_t> ticks{0};
  return ++ticks;
}
uint64_t tick() {
  CallClock clock = observer().options.clock;
  return clock ? clock() : own_clock();
}

// Counts the calls in flight while it lives, and the most there were at once.
class InFlight {
 public:
  InFlight(std::atomic<uint64_t>& now, std::atomic<uint64_t>& most) : now_(now) {
    uint64_t n = ++now_;
    uint64_t seen = most.load();
    while (n > seen && !most.compare_exchange_weak(seen, n)) {
    }
  }
  ~InFlight() { --now_; }

 private:
  std::atomic<uint64_t>& now_;
};

std::string node_name(const EphostNode* node) {
  const EphostHostApi* host = observer().host;
  return node && host ? host->node_name(node) : "";
}

// ---- compute units (EphostComputeInfo from compile and context_load) ----------------------------------

// What the host holds as a compute unit's `user`: the plugin's unit and what the record says about it.
struct Unit {
  EphostComputeInfo target;
  const EphostProvider* provider;
  std::string name;
};

EphostStatus* create_state(void* user, void** out_state) {
  Unit* unit = static_cast<Unit*>(user);
  ObservedCall call("create_state");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  EphostStatus* status = unit->target.create_state(unit->target.user, out_state);
  if (status == nullptr) call->made = *out_state;
  return call.done(status);
}

EphostStatus* compute(void* user, void* state, EphostKernelContext* context) {
  Unit* unit = static_cast<Unit*>(user);
  ObservedCall call("compute");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  call->state = state;
  InFlight in_flight(observer().computes, observer().max_computes);
  return call.done(unit->target.compute(unit->target.user, state, context));
}

void release_state(void* user, void* state) {
  Unit* unit = static_cast<Unit*>(user);
  ObservedCall call("release_state");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  call->state = state;
  unit->target.release_state(unit->target.user, state);
  call.done();
}

void release(void* user) {
  Unit* unit = static_cast<Unit*>(user);
  ObservedCall call("release");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  if (unit->target.release) unit->target.release(unit->target.user);
  delete unit;
  call.done();
}

// Puts the observing functions in front of a compute unit the plugin made; returns the new `user`.
void* observe_unit(EphostComputeInfo* info, const EphostProvider* provider, std::string name) {
  Unit* unit = new Unit{*info, provider, std::move(name)};
  info->user = unit;
  info->create_state = unit->target.create_state ? &create_state : nullptr;
  info->compute = unit->target.compute ? &compute : nullptr;
  info->release_state = unit->target.release_state ? &release_state : nullptr;
  info->release = &release;  // frees the Unit even when the plugin's unit needs no release
  return unit;
}

// ---- the observing table (EphostPlugin) -------------------------------------------------------------

const EphostPlugin& target() { return *observer().target; }

EphostStatus* describe(EphostPluginInfo* info) {
  ObservedCall call("describe");
  call->info_size = info->struct_size;
  call->version = observer().host->abi_version;
  call->host_api_size = observer().host->struct_size;
  return call.done(target().describe(info));
}

void record_options(PluginCall* c, const char* const* keys, const char* const* values, size_t n) {
  for (size_t i = 0; i < n; ++i) c->options.emplace_back(keys[i], values[i]);
}

EphostStatus* provider_create(const char* const* keys, const char* const* values, size_t num_options,
                              EphostProvider** out_provider) {
  ObservedCall call("provider_create");
  record_options(call.operator->(), keys, values, num_options);
  EphostStatus* status = target().provider_create(keys, values, num_options, out_provider);
  if (status == nullptr) call->made = *out_provider;
  return call.done(status);
}

void provider_release(EphostProvider* provider) {
  ObservedCall call("provider_release");
  call->object = provider;
  target().provider_release(provider);
  call.done();
}

EphostStatus* get_capability(EphostProvider* provider, const EphostGraph* graph, EphostCapability* capability) {
  ObservedCall call("get_capability");
  call->object = provider;
  call->name = observer().host->graph_name(graph);
  call->node = node_name(observer().host->graph_parent_node(graph));
  return call.done(target().get_capability(provider, graph, capability));
}

EphostStatus* kernel_create(EphostProvider* provider, const EphostNode* node, EphostKernel** out_kernel) {
  ObservedCall call("kernel_create");
  call->object = provider;
  call->node = node_name(node);
  EphostStatus* status = target().kernel_create(provider, node, out_kernel);
  if (status == nullptr) {
    call->made = *out_kernel;
    std::lock_guard<std::mutex> lock(observer().mutex);
    observer().kernels[*out_kernel] = KernelInfo{provider, node};
  }
  return call.done(status);
}

EphostStatus* kernel_compute(EphostKernel* kernel, EphostKernelContext* context) {
  ObservedCall call("kernel_compute");
  call->object = kernel;
  KernelInfo info;
  {
    std::lock_guard<std::mutex> lock(observer().mutex);
    auto it = observer().kernels.find(kernel);
    if (it != observer().kernels.end()) info = it->second;
  }
  call->provider = info.provider;
  // Read through the host now: the header promises the node stays valid as long as the session.
  call->node = node_name(info.node);
  InFlight in_flight(observer().kernel_computes, observer().max_kernel_computes);
  return call.done(target().kernel_compute(kernel, context));
}

void kernel_release(EphostKernel* kernel) {
  ObservedCall call("kernel_release");
  call->object = kernel;
  {
    std::lock_guard<std::mutex> lock(observer().mutex);
    auto it = observer().kernels.find(kernel);
    if (it != observer().kernels.end()) {
      call->provider = it->second.provider;
      observer().kernels.erase(it);
    }
  }
  target().kernel_release(kernel);
  call.done();
}

EphostStatus* compile(EphostProvider* provider, const EphostGraph* group, const char* fused_name,
                      EphostComputeInfo* out_compute) {
  ObservedCall call("compile");
  call->object = provider;
  call->name = fused_name;
  EphostStatus* status = target().compile(provider, group, fused_name, out_compute);
  if (status == nullptr) call->made = observe_unit(out_compute, provider, fused_name);
  return call.done(status);
}

EphostStatus* on_run_start(EphostProvider* provider) {
  ObservedCall call("on_run_start");
  call->object = provider;
  {
    Observer& o = observer();
    std::lock_guard<std::mutex> lock(o.mutex);
    o.counts.max_runs_in_flight = std::max(o.counts.max_runs_in_flight, ++o.runs_in_flight[provider]);
  }
  return call.done(target().on_run_start(provider));
}

EphostStatus* on_run_end(EphostProvider* provider) {
  ObservedCall call("on_run_end");
  call->object = provider;
  {
    Observer& o = observer();
    std::lock_guard<std::mutex> lock(o.mutex);
    uint64_t& n = o.runs_in_flight[provider];
    if (n == 0)
      o.counts.run_ends_without_start++;
    else
      --n;
  }
  return call.done(target().on_run_end(provider));
}

EphostStatus* context_emit(EphostProvider* provider, const char* fused_name, EphostContextSink* sink) {
  ObservedCall call("context_emit");
  call->object = provider;
  call->name = fused_name;
  return call.done(target().context_emit(provider, fused_name, sink));
}

EphostStatus* context_judge(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                            size_t blob_size, EphostContextVerdict* out_verdict, const char** out_reason) {
  JudgeHook hook;
  {
    std::lock_guard<std::mutex> lock(observer().mutex);
    std::swap(hook, observer().judge_hook);
  }
  if (hook) hook(observer().host, observer().target, provider, context_node, blob, blob_size);
  ObservedCall call("context_judge");
  call->object = provider;
  call->node = node_name(context_node);
  EphostStatus* status = target().context_judge(provider, context_node, blob, blob_size, out_verdict, out_reason);
  if (status == nullptr) call->verdict = *out_verdict;
  return call.done(status);
}

EphostStatus* context_load(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                           size_t blob_size, EphostComputeInfo* out_compute) {
  ObservedCall call("context_load");
  call->object = provider;
  call->node = node_name(context_node);
  EphostStatus* status = target().context_load(provider, context_node, blob, blob_size, out_compute);
  if (status == nullptr) call->made = observe_unit(out_compute, provider, call->node);
  return call.done(status);
}

// ---- devices (plugin ABI 3) ---------------------------------------------------------------------------

EphostStatus* device_count(uint32_t* out_count) {
  ObservedCall call("device_count");
  return call.done(target().device_count(out_count));
}

EphostStatus* device_describe(uint32_t device, EphostDeviceInfo* info) {
  ObservedCall call("device_describe");
  call->device = device;
  return call.done(target().device_describe(device, info));
}

EphostStatus* provider_create_for_device(uint32_t device, const char* const* keys, const char* const* values,
                                         size_t num_options, EphostProvider** out_provider) {
  ObservedCall call("provider_create_for_device");
  call->device = device;
  record_options(call.operator->(), keys, values, num_options);
  EphostStatus* status = target().provider_create_for_device(device, keys, values, num_options, out_provider);
  if (status == nullptr) call->made = *out_provider;
  return call.done(status);
}

EphostStatus* device_allocate(uint32_t device, int32_t kind, uint64_t bytes, EphostDeviceBuffer* out) {
  ObservedCall call("device_allocate");
  call->device = device;
  call->bytes = bytes;
  EphostStatus* status = target().device_allocate(device, kind, bytes, out);
  if (status == nullptr) {
    call->made = out->handle;
    call->offset = out->offset;
    std::lock_guard<std::mutex> lock(observer().mutex);
    ++observer().counts.live_device_buffers;
  }
  return call.done(status);
}

void device_free(uint32_t device, int32_t kind, EphostDeviceBuffer buffer) {
  ObservedCall call("device_free");
  call->device = device;
  call->object = buffer.handle;
  call->offset = buffer.offset;
  target().device_free(device, kind, buffer);
  {
    std::lock_guard<std::mutex> lock(observer().mutex);
    --observer().counts.live_device_buffers;
  }
  call.done();
}

EphostStatus* copy_to_device(uint32_t device, EphostStream* stream, const void* src, EphostDeviceBuffer dst,
                             uint64_t bytes) {
  ObservedCall call("copy_to_device");
  call->device = device;
  call->stream = stream;
  call->bytes = bytes;
  return call.done(target().copy_to_device(device, stream, src, dst, bytes));
}

EphostStatus* copy_to_host(uint32_t device, EphostStream* stream, EphostDeviceBuffer src, void* dst, uint64_t bytes) {
  ObservedCall call("copy_to_host");
  call->device = device;
  call->stream = stream;
  call->bytes = bytes;
  return call.done(target().copy_to_host(device, stream, src, dst, bytes));
}

EphostStatus* copy_between_devices(EphostStream* stream, uint32_t src_device, EphostDeviceBuffer src,
                                   uint32_t dst_device, EphostDeviceBuffer dst, uint64_t bytes) {
  ObservedCall call("copy_between_devices");
  call->device = dst_device;
  call->stream = stream;
  call->bytes = bytes;
  return call.done(target().copy_between_devices(stream, src_device, src, dst_device, dst, bytes));
}

EphostStatus* stream_create(uint32_t device, EphostStream** out_stream) {
  ObservedCall call("stream_create");
  call->device = device;
  EphostStatus* status = target().stream_create(device, out_stream);
  if (status == nullptr) call->made = *out_stream;
  return call.done(status);
}

EphostStatus* stream_synchronize(EphostStream* stream) {
  ObservedCall call("stream_synchronize");
  call->object = stream;
  return call.done(target().stream_synchronize(stream));
}

void stream_release(EphostStream* stream) {
  ObservedCall call("stream_release");
  call->object = stream;
  target().stream_release(stream);
  call.done();
}

// The plugin's table with each member it fills replaced by its observing twin (NULL stays NULL). The
// plugin's table may be an older, shorter one: only its struct_size bytes are its own.
EphostPlugin observing_table(const EphostPlugin& plugin) {
  EphostPlugin t{};
  std::memcpy(&t, &plugin, std::min<size_t>(plugin.struct_size, sizeof(EphostPlugin)));
  auto twin = [](auto& member, auto observing) {
    if (member != nullptr) member = observing;
  };
  twin(t.describe, &describe);
  twin(t.provider_create, &provider_create);
  twin(t.provider_release, &provider_release);
  twin(t.get_capability, &get_capability);
  twin(t.kernel_create, &kernel_create);
  twin(t.kernel_compute, &kernel_compute);
  twin(t.kernel_release, &kernel_release);
  twin(t.compile, &compile);
  twin(t.on_run_start, &on_run_start);
  twin(t.on_run_end, &on_run_end);
  twin(t.context_emit, &context_emit);
  twin(t.context_judge, &context_judge);
  twin(t.context_load, &context_load);
  twin(t.device_count, &device_count);
  twin(t.device_describe, &device_describe);
  twin(t.provider_create_for_device, &provider_create_for_device);
  twin(t.device_allocate, &device_allocate);
  twin(t.device_free, &device_free);
  twin(t.copy_to_device, &copy_to_device);
  twin(t.copy_to_host, &copy_to_host);
  twin(t.copy_between_devices, &copy_between_devices);
  twin(t.stream_create, &stream_create);
  twin(t.stream_synchronize, &stream_synchronize);
  twin(t.stream_release, &stream_release);
  return t;
}

}  // namespace

ObservedCall::ObservedCall(const char* function) {
  call_.plugin = observer().options.plugin_name;
  call_.function = function;
  call_.thread = std::this_thread::get_id();
  call_.begin = tick();
}

EphostStatus* ObservedCall::done(EphostStatus* status) {
  call_.failed = status != nullptr;
  done();
  return status;
}

void ObservedCall::done() {
  call_.end = tick();
  Observer& o = observer();
  {
    std::lock_guard<std::mutex> lock(o.mutex);
    ++o.counts.calls[call_.function];
    if (call_.failed) ++o.counts.failures[call_.function];
  }
  if (o.options.sink) o.options.sink(std::move(call_));
}

void set_observer_options(const ObserverOptions& options) { observer().options = options; }

const EphostPlugin* observe_plugin(const EphostPlugin* plugin, const EphostHostApi* host,
                                   const ObserverOptions& options) {
  Observer& o = observer();
  o.options = options;
  // Another env loading the library again gets the same answer: the table the first env's host reads
  // is then left as it is.
  if (o.target != plugin) {
    o.target = plugin;
    o.host = host;
    o.table = observing_table(*plugin);
  }
  return &o.table;
}

ObservedCounts observed_counts() {
  Observer& o = observer();
  std::lock_guard<std::mutex> lock(o.mutex);
  ObservedCounts c = o.counts;
  c.max_kernel_computes_in_flight = o.max_kernel_computes.load();
  c.max_computes_in_flight = o.max_computes.load();
  return c;
}

void reset_observed_counts() {
  Observer& o = observer();
  std::lock_guard<std::mutex> lock(o.mutex);
  const int64_t live = o.counts.live_device_buffers;
  o.counts = ObservedCounts{};
  o.counts.live_device_buffers = live;
  o.max_kernel_computes = 0;
  o.max_computes = 0;
}

void set_judge_hook(JudgeHook hook) {
  std::lock_guard<std::mutex> lock(observer().mutex);
  observer().judge_hook = std::move(hook);
}

}  // namespace ephost::observer
