#include "recording_plugin.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "plugin_call_record.h"

#ifndef EPHOST_TEST_PLUGIN_MAX_ABI
#define EPHOST_TEST_PLUGIN_MAX_ABI EPHOST_PLUGIN_ABI_VERSION
#endif

namespace ephost_test::recording {

namespace {

// Records "unload" when the library's static destructors run (dlclose). Defined before `g_library`, so
// destroyed after it: it reads nothing of it.
struct UnloadRecorder {
  const char* plugin = nullptr;
  ~UnloadRecorder() {
    if (plugin == nullptr) return;  // never negotiated
    PluginCall call;
    call.plugin = plugin;
    call.function = "unload";
    call.thread = std::this_thread::get_id();
    call.begin = call.end = plugin_call_clock_tick();
    record_plugin_call(std::move(call));
  }
} g_unload;

struct KernelInfo {
  const EphostProvider* provider = nullptr;
  const EphostNode* node = nullptr;
};

struct Library {
  const char* name = "?";
  const EphostPlugin* sdk = nullptr;  // the SDK's table, which does the work
  const EphostHostApi* host = nullptr;
  EphostPlugin table{};               // the recording table the host calls
  std::mutex mutex;
  std::map<const EphostKernel*, KernelInfo> kernels;  // live kernels, for what their computes are about
} g_library;

// One call being recorded: started when constructed, recorded by done().
class Call {
 public:
  explicit Call(const char* function) {
    c_.plugin = g_library.name;
    c_.function = function;
    c_.thread = std::this_thread::get_id();
    c_.begin = plugin_call_clock_tick();
  }
  PluginCall* operator->() { return &c_; }
  EphostStatus* done(EphostStatus* status) {
    c_.failed = status != nullptr;
    done();
    return status;
  }
  void done() {
    c_.end = plugin_call_clock_tick();
    record_plugin_call(std::move(c_));
  }

 private:
  PluginCall c_;
};

std::string node_name(const EphostNode* node) { return node ? g_library.host->node_name(node) : ""; }

// ---- compute units (EphostComputeInfo from compile and context_load) ----------------------------------

// What the host holds as a compute unit's `user`: the SDK's unit and what the record says about it.
struct Unit {
  EphostComputeInfo sdk;
  const EphostProvider* provider;
  std::string name;
};

EphostStatus* create_state(void* user, void** out_state) {
  Unit* unit = static_cast<Unit*>(user);
  Call call("create_state");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  EphostStatus* status = unit->sdk.create_state(unit->sdk.user, out_state);
  if (status == nullptr) call->made = *out_state;
  return call.done(status);
}

EphostStatus* compute(void* user, void* state, EphostKernelContext* context) {
  Unit* unit = static_cast<Unit*>(user);
  Call call("compute");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  call->state = state;
  return call.done(unit->sdk.compute(unit->sdk.user, state, context));
}

void release_state(void* user, void* state) {
  Unit* unit = static_cast<Unit*>(user);
  Call call("release_state");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  call->state = state;
  unit->sdk.release_state(unit->sdk.user, state);
  call.done();
}

void release(void* user) {
  Unit* unit = static_cast<Unit*>(user);
  Call call("release");
  call->object = user;
  call->provider = unit->provider;
  call->name = unit->name;
  if (unit->sdk.release) unit->sdk.release(unit->sdk.user);
  delete unit;
  call.done();
}

// Puts the recording functions in front of a compute unit the SDK made; returns the new `user`.
void* record_unit(EphostComputeInfo* info, const EphostProvider* provider, std::string name) {
  Unit* unit = new Unit{*info, provider, std::move(name)};
  info->user = unit;
  info->create_state = unit->sdk.create_state ? &create_state : nullptr;
  info->compute = unit->sdk.compute ? &compute : nullptr;
  info->release_state = unit->sdk.release_state ? &release_state : nullptr;
  info->release = &release;  // frees the Unit even when the SDK's unit needs no release
  return unit;
}

// ---- the recording table (EphostPlugin) -----------------------------------------------------------

EphostStatus* describe(EphostPluginInfo* info) {
  Call call("describe");
  call->info_size = info->struct_size;
  call->version = g_library.host->abi_version;
  call->host_api_size = g_library.host->struct_size;
  return call.done(g_library.sdk->describe(info));
}

EphostStatus* provider_create(const char* const* keys, const char* const* values, size_t num_options,
                              EphostProvider** out_provider) {
  Call call("provider_create");
  for (size_t i = 0; i < num_options; ++i) call->options.emplace_back(keys[i], values[i]);
  EphostStatus* status = g_library.sdk->provider_create(keys, values, num_options, out_provider);
  if (status == nullptr) call->made = *out_provider;
  return call.done(status);
}

void provider_release(EphostProvider* provider) {
  Call call("provider_release");
  call->object = provider;
  g_library.sdk->provider_release(provider);
  call.done();
}

EphostStatus* get_capability(EphostProvider* provider, const EphostGraph* graph, EphostCapability* capability) {
  Call call("get_capability");
  call->object = provider;
  call->name = g_library.host->graph_name(graph);
  call->node = node_name(g_library.host->graph_parent_node(graph));
  return call.done(g_library.sdk->get_capability(provider, graph, capability));
}

EphostStatus* kernel_create(EphostProvider* provider, const EphostNode* node, EphostKernel** out_kernel) {
  Call call("kernel_create");
  call->object = provider;
  call->node = node_name(node);
  EphostStatus* status = g_library.sdk->kernel_create(provider, node, out_kernel);
  if (status == nullptr) {
    call->made = *out_kernel;
    std::lock_guard<std::mutex> lock(g_library.mutex);
    g_library.kernels[*out_kernel] = KernelInfo{provider, node};
  }
  return call.done(status);
}

EphostStatus* kernel_compute(EphostKernel* kernel, EphostKernelContext* context) {
  Call call("kernel_compute");
  call->object = kernel;
  KernelInfo info;
  {
    std::lock_guard<std::mutex> lock(g_library.mutex);
    auto it = g_library.kernels.find(kernel);
    if (it != g_library.kernels.end()) info = it->second;
  }
  call->provider = info.provider;
  // Read through the host now: the header promises the node stays valid as long as the session.
  call->node = node_name(info.node);
  return call.done(g_library.sdk->kernel_compute(kernel, context));
}

void kernel_release(EphostKernel* kernel) {
  Call call("kernel_release");
  call->object = kernel;
  {
    std::lock_guard<std::mutex> lock(g_library.mutex);
    auto it = g_library.kernels.find(kernel);
    if (it != g_library.kernels.end()) {
      call->provider = it->second.provider;
      g_library.kernels.erase(it);
    }
  }
  g_library.sdk->kernel_release(kernel);
  call.done();
}

EphostStatus* compile(EphostProvider* provider, const EphostGraph* group, const char* fused_name,
                      EphostComputeInfo* out_compute) {
  Call call("compile");
  call->object = provider;
  call->name = fused_name;
  EphostStatus* status = g_library.sdk->compile(provider, group, fused_name, out_compute);
  if (status == nullptr) call->made = record_unit(out_compute, provider, fused_name);
  return call.done(status);
}

EphostStatus* on_run_start(EphostProvider* provider) {
  Call call("on_run_start");
  call->object = provider;
  return call.done(g_library.sdk->on_run_start(provider));
}

EphostStatus* on_run_end(EphostProvider* provider) {
  Call call("on_run_end");
  call->object = provider;
  return call.done(g_library.sdk->on_run_end(provider));
}

EphostStatus* context_emit(EphostProvider* provider, const char* fused_name, EphostContextSink* sink) {
  Call call("context_emit");
  call->object = provider;
  call->name = fused_name;
  return call.done(g_library.sdk->context_emit(provider, fused_name, sink));
}

EphostStatus* context_judge(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                            size_t blob_size, EphostContextVerdict* out_verdict, const char** out_reason) {
  Call call("context_judge");
  call->object = provider;
  call->node = node_name(context_node);
  EphostStatus* status = g_library.sdk->context_judge(provider, context_node, blob, blob_size, out_verdict, out_reason);
  if (status == nullptr) call->verdict = *out_verdict;
  return call.done(status);
}

EphostStatus* context_load(EphostProvider* provider, const EphostNode* context_node, const void* blob,
                           size_t blob_size, EphostComputeInfo* out_compute) {
  Call call("context_load");
  call->object = provider;
  call->node = node_name(context_node);
  EphostStatus* status = g_library.sdk->context_load(provider, context_node, blob, blob_size, out_compute);
  if (status == nullptr) call->made = record_unit(out_compute, provider, call->node);
  return call.done(status);
}

// The SDK's table with each member it fills replaced by its recording twin (NULL stays NULL).
EphostPlugin recording_table(const EphostPlugin& sdk) {
  EphostPlugin t = sdk;
  auto twin = [](auto& member, auto recording) {
    if (member != nullptr) member = recording;
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
  return t;
}

}  // namespace

EphostStatus* negotiate(const char* plugin_name, EphostPluginNegotiateFn sdk_entry, EphostPluginNegotiation* n) {
  g_library.name = plugin_name;
  g_unload.plugin = plugin_name;
  Call call("negotiate");
  if (n == nullptr || n->host_api == nullptr) return call.done(sdk_entry(n));
  call->offered_min = n->host_min_abi_version;
  call->offered_max = n->host_max_abi_version;
  call->host_api_size = n->host_api->struct_size;
  // A plugin built for an older ABI knows no newer one: the SDK sees the offer capped there.
  const uint32_t offered_max = n->host_max_abi_version;
  n->host_max_abi_version = std::min<uint32_t>(offered_max, EPHOST_TEST_PLUGIN_MAX_ABI);
  EphostStatus* status = sdk_entry(n);
  n->host_max_abi_version = offered_max;
  if (status == nullptr && n->plugin != nullptr) {
    // Another env loading the library again gets the same answer: the table the first env's host
    // reads is then left as it is.
    if (g_library.sdk != n->plugin) {
      g_library.sdk = n->plugin;
      g_library.host = n->host_api;
      g_library.table = recording_table(*n->plugin);
    }
    n->plugin = &g_library.table;
    call->version = n->plugin_abi_version;
  }
  return call.done(status);
}

}  // namespace ephost_test::recording
