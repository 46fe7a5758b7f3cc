// The observer plugin (observer.h): counts what the host does to the plugin under test.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "observer.h"

namespace {

struct Observer {
  const EphostPlugin* target = nullptr;  // the plugin's own table
  const EphostHostApi* host = nullptr;
  EphostPlugin table{};                   // what the host calls
  std::atomic<uint64_t> calls[EPHOST_CTS_MEMBER_COUNT]{};
  std::atomic<uint64_t> failures[EPHOST_CTS_MEMBER_COUNT]{};
  std::atomic<uint64_t> kernel_computes{0}, max_kernel_computes{0};
  std::atomic<uint64_t> computes{0}, max_computes{0};
  std::mutex runs_mutex;
  std::map<const EphostProvider*, uint64_t> runs_in_flight;
  uint64_t max_runs = 0, ends_without_start = 0;
  std::mutex hook_mutex;
  EphostCtsJudgeHook judge_hook = nullptr;
  void* judge_hook_user = nullptr;
} g;

EphostStatus* counted(EphostCtsMember member, EphostStatus* status) {
  g.calls[member]++;
  if (status != nullptr) g.failures[member]++;
  return status;
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

// ---- compute units handed out by compile and context_load -------------------------------------------

struct Unit {
  EphostComputeInfo target;
};

EphostStatus* unit_create_state(void* user, void** out) {
  Unit* u = static_cast<Unit*>(user);
  return counted(EPHOST_CTS_CREATE_STATE, u->target.create_state(u->target.user, out));
}
EphostStatus* unit_compute(void* user, void* state, EphostKernelContext* context) {
  Unit* u = static_cast<Unit*>(user);
  InFlight in_flight(g.computes, g.max_computes);
  return counted(EPHOST_CTS_COMPUTE, u->target.compute(u->target.user, state, context));
}
void unit_release_state(void* user, void* state) {
  Unit* u = static_cast<Unit*>(user);
  g.calls[EPHOST_CTS_RELEASE_STATE]++;
  u->target.release_state(u->target.user, state);
}
void unit_release(void* user) {
  Unit* u = static_cast<Unit*>(user);
  g.calls[EPHOST_CTS_RELEASE]++;
  if (u->target.release) u->target.release(u->target.user);
  delete u;
}
void observe_unit(EphostComputeInfo* info) {
  Unit* u = new Unit{*info};
  info->user = u;
  info->create_state = u->target.create_state ? &unit_create_state : nullptr;
  info->compute = u->target.compute ? &unit_compute : nullptr;
  info->release_state = u->target.release_state ? &unit_release_state : nullptr;
  info->release = &unit_release;
}

// ---- the plugin's table ------------------------------------------------------------------------------

EphostStatus* describe(EphostPluginInfo* info) { return counted(EPHOST_CTS_DESCRIBE, g.target->describe(info)); }
EphostStatus* provider_create(const char* const* k, const char* const* v, size_t n, EphostProvider** out) {
  return counted(EPHOST_CTS_PROVIDER_CREATE, g.target->provider_create(k, v, n, out));
}
void provider_release(EphostProvider* p) {
  g.calls[EPHOST_CTS_PROVIDER_RELEASE]++;
  g.target->provider_release(p);
}
EphostStatus* get_capability(EphostProvider* p, const EphostGraph* graph, EphostCapability* c) {
  return counted(EPHOST_CTS_GET_CAPABILITY, g.target->get_capability(p, graph, c));
}
EphostStatus* kernel_create(EphostProvider* p, const EphostNode* node, EphostKernel** out) {
  return counted(EPHOST_CTS_KERNEL_CREATE, g.target->kernel_create(p, node, out));
}
EphostStatus* kernel_compute(EphostKernel* k, EphostKernelContext* context) {
  InFlight in_flight(g.kernel_computes, g.max_kernel_computes);
  return counted(EPHOST_CTS_KERNEL_COMPUTE, g.target->kernel_compute(k, context));
}
void kernel_release(EphostKernel* k) {
  g.calls[EPHOST_CTS_KERNEL_RELEASE]++;
  g.target->kernel_release(k);
}
EphostStatus* compile(EphostProvider* p, const EphostGraph* group, const char* name, EphostComputeInfo* out) {
  EphostStatus* status = g.target->compile(p, group, name, out);
  if (status == nullptr && out->compute != nullptr) observe_unit(out);
  return counted(EPHOST_CTS_COMPILE, status);
}
EphostStatus* on_run_start(EphostProvider* p) {
  {
    std::lock_guard<std::mutex> lock(g.runs_mutex);
    g.max_runs = std::max(g.max_runs, ++g.runs_in_flight[p]);
  }
  return counted(EPHOST_CTS_ON_RUN_START, g.target->on_run_start(p));
}
EphostStatus* on_run_end(EphostProvider* p) {
  {
    std::lock_guard<std::mutex> lock(g.runs_mutex);
    uint64_t& n = g.runs_in_flight[p];
    if (n == 0)
      g.ends_without_start++;
    else
      --n;
  }
  return counted(EPHOST_CTS_ON_RUN_END, g.target->on_run_end(p));
}
EphostStatus* context_emit(EphostProvider* p, const char* name, EphostContextSink* sink) {
  return counted(EPHOST_CTS_CONTEXT_EMIT, g.target->context_emit(p, name, sink));
}
EphostStatus* context_judge(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                            EphostContextVerdict* out_verdict, const char** out_reason) {
  EphostCtsJudgeHook hook = nullptr;
  void* user = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.hook_mutex);
    std::swap(hook, g.judge_hook);
    user = g.judge_hook_user;
  }
  if (hook) hook(user, g.host, g.target, p, node, blob, size);
  return counted(EPHOST_CTS_CONTEXT_JUDGE, g.target->context_judge(p, node, blob, size, out_verdict, out_reason));
}
EphostStatus* context_load(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                           EphostComputeInfo* out) {
  EphostStatus* status = g.target->context_load(p, node, blob, size, out);
  if (status == nullptr && out->compute != nullptr) observe_unit(out);
  return counted(EPHOST_CTS_CONTEXT_LOAD, status);
}

EphostPlugin observing_table(const EphostPlugin& target) {
  // The plugin's table may be an older, shorter one: only its struct_size bytes are its own.
  EphostPlugin t{};
  std::memcpy(&t, &target, std::min<size_t>(target.struct_size, sizeof(EphostPlugin)));
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
  return t;
}

EphostStatus* refuse(const EphostPluginNegotiation* n, const std::string& why) {
  return n->host_api->status_create(EPHOST_FAIL, ("ephost-plugin-cts observer: " + why).c_str());
}

}  // namespace

extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* n) {
  if (n == nullptr || n->host_api == nullptr) return nullptr;
  const char* path = std::getenv(EPHOST_CTS_TARGET_ENV);
  if (path == nullptr || *path == '\0') return refuse(n, std::string(EPHOST_CTS_TARGET_ENV) + " names no plugin");
  // Kept loaded for the process: the host may call the table until it unloads the observer.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return refuse(n, std::string("cannot load ") + path + ": " + dlerror());
  auto entry = reinterpret_cast<EphostPluginNegotiateFn>(dlsym(library, EPHOST_PLUGIN_ENTRY_POINT));
  if (entry == nullptr) return refuse(n, std::string(path) + " exports no " + EPHOST_PLUGIN_ENTRY_POINT);
  EphostStatus* status = entry(n);
  if (status != nullptr || n->plugin == nullptr) return status;
  if (g.target != n->plugin) {
    g.target = n->plugin;
    g.host = n->host_api;
    g.table = observing_table(*n->plugin);
  }
  n->plugin = &g.table;
  return nullptr;
}

extern "C" EPHOST_EXPORT void ephost_cts_observation(EphostCtsObservation* out) {
  for (int i = 0; i < EPHOST_CTS_MEMBER_COUNT; ++i) {
    out->calls[i] = g.calls[i].load();
    out->failures[i] = g.failures[i].load();
  }
  out->max_kernel_computes_in_flight = g.max_kernel_computes.load();
  out->max_computes_in_flight = g.max_computes.load();
  std::lock_guard<std::mutex> lock(g.runs_mutex);
  out->max_runs_in_flight = g.max_runs;
  out->run_ends_without_start = g.ends_without_start;
}

extern "C" EPHOST_EXPORT void ephost_cts_set_judge_hook(EphostCtsJudgeHook hook, void* user) {
  std::lock_guard<std::mutex> lock(g.hook_mutex);
  g.judge_hook = hook;
  g.judge_hook_user = user;
}
