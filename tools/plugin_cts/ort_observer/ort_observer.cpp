// The ONNX Runtime observer (ort_observer.h): proxies of an ONNX Runtime plugin EP's factories, EPs and
// compute infos (and of a kernel-registry EP's kernels) that record every call the host makes and pass it on
// to the plugin's own objects.
#include "ort_observer.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "observer/observer.h"
#include "plugin_call.h"

namespace {

using ephost::observer::PluginCall;

constexpr size_t kMaxFactories = 16;

// Everything recorded; never destroyed (the host may call in while the process exits).
struct Record {
  std::mutex mutex;
  std::vector<PluginCall> calls;
  EphostCtsObservation counts{};
  std::map<const void*, int> runs_in_flight;  // per plugin OrtEp
  uint64_t computes_in_flight = 0;
  uint64_t kernel_computes_in_flight = 0;
  EphostCtsOrtValidateHook hook = nullptr;
  void* hook_user = nullptr;
  const OrtApiBase* host = nullptr;
};
Record& record() {
  static Record* r = new Record;
  return *r;
}
std::atomic<uint64_t> ticks{0};

// One call under way: its PluginCall filled as it goes, kept and counted when it returns.
class Observed {
 public:
  Observed(const char* function, EphostCtsMember member, const void* object) : member_(member) {
    call_.plugin = "plugin under test";
    call_.function = function;
    call_.object = object;
    call_.thread = std::this_thread::get_id();
    call_.begin = ticks.fetch_add(1);
  }
  PluginCall& call() { return call_; }
  // Marks it failed when `status` is an error (statuses pass through untouched).
  OrtStatus* returns(OrtStatus* status) {
    call_.failed = status != nullptr;
    return status;
  }
  ~Observed() {
    call_.end = ticks.fetch_add(1);
    Record& r = record();
    std::lock_guard<std::mutex> lock(r.mutex);
    ++r.counts.calls[member_];
    if (call_.failed) ++r.counts.failures[member_];
    r.calls.push_back(std::move(call_));
  }

 private:
  EphostCtsMember member_;
  PluginCall call_;
};

// ---- proxies: the host holds these; each knows the plugin's own object ----

struct FactoryProxy {
  OrtEpFactory base;
  OrtEpFactory* real;
};
struct EpProxy {
  OrtEp base;
  OrtEp* real;
};
struct InfoProxy {
  OrtNodeComputeInfo base;
  OrtNodeComputeInfo* real;
};

OrtEpFactory* real(const OrtEpFactory* f) { return reinterpret_cast<const FactoryProxy*>(f)->real; }
OrtEp* real(const OrtEp* e) { return reinterpret_cast<const EpProxy*>(e)->real; }
OrtNodeComputeInfo* real(const OrtNodeComputeInfo* i) { return reinterpret_cast<const InfoProxy*>(i)->real; }

// ---- OrtNodeComputeInfo ----

OrtStatus* info_create_state(OrtNodeComputeInfo* self, OrtNodeComputeContext* context, void** state) {
  OrtNodeComputeInfo* r = real(self);
  Observed o("create_state", EPHOST_CTS_CREATE_STATE, r);
  OrtStatus* status = o.returns(r->CreateState(r, context, state));
  if (!status && state) o.call().made = *state;
  return status;
}

OrtStatus* info_compute(OrtNodeComputeInfo* self, void* state, OrtKernelContext* context) {
  OrtNodeComputeInfo* r = real(self);
  Observed o("compute", EPHOST_CTS_COMPUTE, r);
  o.call().state = state;
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    record().counts.max_computes_in_flight =
        std::max<uint64_t>(record().counts.max_computes_in_flight, ++record().computes_in_flight);
  }
  OrtStatus* status = o.returns(r->Compute(r, state, context));
  std::lock_guard<std::mutex> lock(record().mutex);
  --record().computes_in_flight;
  return status;
}

void info_release_state(OrtNodeComputeInfo* self, void* state) {
  OrtNodeComputeInfo* r = real(self);
  Observed o("release_state", EPHOST_CTS_RELEASE_STATE, r);
  o.call().state = state;
  r->ReleaseState(r, state);
}

OrtNodeComputeInfo* wrap_info(OrtNodeComputeInfo* r) {
  auto* p = new InfoProxy{};
  p->real = r;
  p->base.ort_version_supported = r->ort_version_supported;
  p->base.CreateState = r->CreateState ? info_create_state : nullptr;
  p->base.Compute = r->Compute ? info_compute : nullptr;
  p->base.ReleaseState = r->ReleaseState ? info_release_state : nullptr;
  return &p->base;
}

// ---- kernels of a kernel registry (API 24) ----
//
// The plugin adds its kernels through the OrtEpApi the observer hands it (observed_api_base below), whose
// KernelRegistry_AddKernel registers a proxy create function: the kernels it makes are proxies recording
// kernel_create (on the plugin's OrtEp), kernel_compute and kernel_release, as a native plugin's kernels.

struct KernelProxy {
  OrtKernelImpl base;
  OrtKernelImpl* real;
};
// What the plugin registered: its create function and state. Never freed (the registry may outlive
// everything the observer could tie it to); one per kernel definition.
struct CreateProxy {
  OrtKernelCreateFunc create;
  void* state;
};

OrtKernelImpl* real(const OrtKernelImpl* k) { return reinterpret_cast<const KernelProxy*>(k)->real; }
OrtEp* real(const OrtEp* e);

OrtStatus* kernel_compute(OrtKernelImpl* self, OrtKernelContext* context) {
  OrtKernelImpl* r = real(self);
  Observed o("kernel_compute", EPHOST_CTS_KERNEL_COMPUTE, r);
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    record().counts.max_kernel_computes_in_flight =
        std::max<uint64_t>(record().counts.max_kernel_computes_in_flight, ++record().kernel_computes_in_flight);
  }
  OrtStatus* status = o.returns(r->Compute(r, context));
  std::lock_guard<std::mutex> lock(record().mutex);
  --record().kernel_computes_in_flight;
  return status;
}

void kernel_release(OrtKernelImpl* self) {
  OrtKernelImpl* r = real(self);
  {
    Observed o("kernel_release", EPHOST_CTS_KERNEL_RELEASE, r);
    r->Release(r);
  }
  delete reinterpret_cast<KernelProxy*>(self);
}

// Pre-packing passes through unrecorded (the lifecycle rules have no member for it).
OrtStatus* kernel_prepack(OrtKernelImpl* self, const OrtValue* tensor, int input_index, OrtAllocator* allocator,
                          OrtSharedPrePackedWeightCache* cache, bool* is_packed) {
  return real(self)->PrePackWeight(real(self), tensor, input_index, allocator, cache, is_packed);
}
OrtStatus* kernel_set_shared(OrtKernelImpl* self, const void* const* buffers, const size_t* sizes, size_t n,
                             int input_index) {
  return real(self)->SetSharedPrePackedWeight(real(self), buffers, sizes, n, input_index);
}

const OrtApi* host_api() { return record().host->GetApi(EPHOST_ORT_API_VERSION_MIN); }

OrtStatus* kernel_create(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  const auto* c = static_cast<const CreateProxy*>(state);
  // The kernel's provider is the plugin's OrtEp behind the proxy the host holds.
  const OrtEp* ep = nullptr;
  if (OrtStatus* failed = host_api()->GetEpApi()->KernelInfo_GetEp(info, &ep)) return failed;
  Observed o("kernel_create", EPHOST_CTS_KERNEL_CREATE, ep ? real(ep) : nullptr);
  OrtKernelImpl* made = nullptr;
  OrtStatus* status = o.returns(c->create(c->state, info, &made));
  if (status || !made) {
    *out = made;
    return status;
  }
  o.call().made = made;
  auto* p = new KernelProxy{};
  p->real = made;
  p->base.ort_version_supported = made->ort_version_supported;
  p->base.flags = made->flags;
  p->base.Compute = made->Compute ? kernel_compute : nullptr;
  p->base.Release = made->Release ? kernel_release : nullptr;
  p->base.PrePackWeight = made->PrePackWeight ? kernel_prepack : nullptr;
  p->base.SetSharedPrePackedWeight = made->SetSharedPrePackedWeight ? kernel_set_shared : nullptr;
  *out = &p->base;
  return nullptr;
}

OrtStatus* observed_add_kernel(OrtKernelRegistry* registry, const OrtKernelDef* def, OrtKernelCreateFunc create,
                               void* state) {
  auto* c = new CreateProxy{create, state};
  return host_api()->GetEpApi()->KernelRegistry_AddKernel(registry, def, create ? kernel_create : nullptr, c);
}

// The host's tables with KernelRegistry_AddKernel observed (ephost's GetApi answers one full table for
// every version it serves, so one copy serves them all).
const OrtEpApi* observed_ep_api() {
  static const OrtEpApi table = [] {
    OrtEpApi t = *host_api()->GetEpApi();
    t.KernelRegistry_AddKernel = observed_add_kernel;
    return t;
  }();
  return &table;
}

const OrtApi* observed_get_api(uint32_t version) {
  const OrtApi* host = record().host->GetApi(version);
  if (!host) return nullptr;
  static const OrtApi table = [host] {
    OrtApi t = *host;
    t.GetEpApi = observed_ep_api;
    return t;
  }();
  return &table;
}

const char* observed_version_string() { return record().host->GetVersionString(); }

const OrtApiBase observed_api_base{observed_get_api, observed_version_string};

// ---- OrtEp ----

const char* ep_get_name(const OrtEp* self) { return real(self)->GetName(real(self)); }

OrtStatus* ep_get_capability(OrtEp* self, const OrtGraph* graph, OrtEpGraphSupportInfo* info) {
  Observed o("get_capability", EPHOST_CTS_GET_CAPABILITY, real(self));
  return o.returns(real(self)->GetCapability(real(self), graph, info));
}

OrtStatus* ep_compile(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused, size_t count,
                      OrtNodeComputeInfo** infos, OrtNode** context_nodes) {
  OrtEp* r = real(self);
  const uint64_t begin = ticks.fetch_add(1);
  std::vector<OrtNodeComputeInfo*> made(count, nullptr);
  OrtStatus* status = r->Compile(r, graphs, fused, count, made.data(), context_nodes);
  const uint64_t end = ticks.fetch_add(1);
  // One compile per fused node, as an ephost plugin compiles one group per call.
  std::lock_guard<std::mutex> lock(record().mutex);
  for (size_t i = 0; i < count; ++i) {
    PluginCall c;
    c.plugin = "plugin under test";
    c.function = "compile";
    c.object = r;
    c.begin = begin;
    c.end = end;
    c.thread = std::this_thread::get_id();
    c.failed = status != nullptr;
    if (!status) {
      c.made = made[i];
      infos[i] = made[i] ? wrap_info(made[i]) : nullptr;
    }
    ++record().counts.calls[EPHOST_CTS_COMPILE];
    if (c.failed) ++record().counts.failures[EPHOST_CTS_COMPILE];
    record().calls.push_back(std::move(c));
  }
  return status;
}

void ep_release_infos(OrtEp* self, OrtNodeComputeInfo** infos, size_t n) {
  OrtEp* r = real(self);
  std::vector<OrtNodeComputeInfo*> reals(n, nullptr);
  for (size_t i = 0; i < n; ++i) reals[i] = infos[i] ? real(infos[i]) : nullptr;
  const uint64_t begin = ticks.fetch_add(1);
  r->ReleaseNodeComputeInfos(r, reals.data(), n);
  const uint64_t end = ticks.fetch_add(1);
  std::lock_guard<std::mutex> lock(record().mutex);
  for (size_t i = 0; i < n; ++i) {
    PluginCall c;
    c.plugin = "plugin under test";
    c.function = "release";
    c.object = reals[i];
    c.begin = begin;
    c.end = end;
    c.thread = std::this_thread::get_id();
    ++record().counts.calls[EPHOST_CTS_RELEASE];
    record().calls.push_back(std::move(c));
    delete reinterpret_cast<InfoProxy*>(infos[i]);
  }
}

OrtStatus* ep_preferred_layout(OrtEp* self, OrtEpDataLayout* layout) {
  return real(self)->GetPreferredDataLayout(real(self), layout);
}
OrtStatus* ep_should_convert(OrtEp* self, const char* domain, const char* op, OrtEpDataLayout layout, int* out) {
  return real(self)->ShouldConvertDataLayoutForOp(real(self), domain, op, layout, out);
}
OrtStatus* ep_dynamic_options(OrtEp* self, const char* const* keys, const char* const* values, size_t n) {
  return real(self)->SetDynamicOptions(real(self), keys, values, n);
}

OrtStatus* ep_run_start(OrtEp* self, const OrtRunOptions* options) {
  OrtEp* r = real(self);
  Observed o("on_run_start", EPHOST_CTS_ON_RUN_START, r);
  OrtStatus* status = o.returns(r->OnRunStart(r, options));
  if (!status) {
    std::lock_guard<std::mutex> lock(record().mutex);
    const int now = ++record().runs_in_flight[r];
    record().counts.max_runs_in_flight = std::max<uint64_t>(record().counts.max_runs_in_flight, now);
  }
  return status;
}

OrtStatus* ep_run_end(OrtEp* self, const OrtRunOptions* options, bool sync) {
  OrtEp* r = real(self);
  Observed o("on_run_end", EPHOST_CTS_ON_RUN_END, r);
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    int& running = record().runs_in_flight[r];
    if (running == 0) ++record().counts.run_ends_without_start;
    else --running;
  }
  return o.returns(r->OnRunEnd(r, options, sync));
}

OrtStatus* ep_create_allocator(OrtEp* self, const OrtMemoryInfo* info, OrtAllocator** out) {
  return real(self)->CreateAllocator(real(self), info, out);
}
OrtStatus* ep_create_stream(OrtEp* self, const OrtMemoryDevice* device, OrtSyncStreamImpl** out) {
  return real(self)->CreateSyncStreamForDevice(real(self), device, out);
}
const char* ep_compatibility_info(OrtEp* self, const OrtGraph* graph) {
  Observed o("compatibility_info", EPHOST_CTS_CONTEXT_EMIT, real(self));
  return real(self)->GetCompiledModelCompatibilityInfo(real(self), graph);
}
OrtStatus* ep_kernel_registry(OrtEp* self, const OrtKernelRegistry** out) {
  return real(self)->GetKernelRegistry(real(self), out);
}
OrtStatus* ep_concurrent_runs(OrtEp* self, bool* out) { return real(self)->IsConcurrentRunSupported(real(self), out); }

// The member when the plugin's struct has it (its version) and set it; NULL otherwise, as the plugin's.
template <typename Fn>
Fn when(bool present, Fn real_member, Fn proxy_member) {
  return present && real_member ? proxy_member : nullptr;
}

OrtEp* wrap_ep(OrtEp* r) {
  auto* p = new EpProxy{};
  p->real = r;
  OrtEp& b = p->base;
  const uint32_t v = r->ort_version_supported;
  b.ort_version_supported = v;
  b.GetName = when(true, r->GetName, &ep_get_name);
  if (v >= 23) {
    b.GetCapability = when(true, r->GetCapability, &ep_get_capability);
    b.Compile = when(true, r->Compile, &ep_compile);
    b.ReleaseNodeComputeInfos = when(true, r->ReleaseNodeComputeInfos, &ep_release_infos);
    b.GetPreferredDataLayout = when(true, r->GetPreferredDataLayout, &ep_preferred_layout);
    b.ShouldConvertDataLayoutForOp = when(true, r->ShouldConvertDataLayoutForOp, &ep_should_convert);
    b.SetDynamicOptions = when(true, r->SetDynamicOptions, &ep_dynamic_options);
    b.OnRunStart = when(true, r->OnRunStart, &ep_run_start);
    b.OnRunEnd = when(true, r->OnRunEnd, &ep_run_end);
    b.CreateAllocator = when(true, r->CreateAllocator, &ep_create_allocator);
    b.CreateSyncStreamForDevice = when(true, r->CreateSyncStreamForDevice, &ep_create_stream);
    b.GetCompiledModelCompatibilityInfo = when(true, r->GetCompiledModelCompatibilityInfo, &ep_compatibility_info);
  }
  if (v >= 24) {
    b.GetKernelRegistry = when(true, r->GetKernelRegistry, &ep_kernel_registry);
    b.IsConcurrentRunSupported = when(true, r->IsConcurrentRunSupported, &ep_concurrent_runs);
  }
  return &b;
}

// ---- OrtEpFactory ----

const char* factory_name(const OrtEpFactory* self) { return real(self)->GetName(real(self)); }
const char* factory_vendor(const OrtEpFactory* self) { return real(self)->GetVendor(real(self)); }

OrtStatus* factory_devices(OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t n,
                           OrtEpDevice** out, size_t max, size_t* num) {
  Observed o("get_supported_devices", EPHOST_CTS_DESCRIBE, real(self));
  return o.returns(real(self)->GetSupportedDevices(real(self), devices, n, out, max, num));
}

OrtStatus* factory_create_ep(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                             const OrtKeyValuePairs* const* metadata, size_t n, const OrtSessionOptions* options,
                             const OrtLogger* logger, OrtEp** ep) {
  Observed o("provider_create", EPHOST_CTS_PROVIDER_CREATE, nullptr);
  OrtStatus* status = o.returns(real(self)->CreateEp(real(self), devices, metadata, n, options, logger, ep));
  if (!status && ep && *ep) {
    o.call().made = *ep;
    *ep = wrap_ep(*ep);
  }
  return status;
}

void factory_release_ep(OrtEpFactory* self, OrtEp* ep) {
  OrtEp* r = ep ? real(ep) : nullptr;
  {
    Observed o("provider_release", EPHOST_CTS_PROVIDER_RELEASE, r);
    real(self)->ReleaseEp(real(self), r);
  }
  delete reinterpret_cast<EpProxy*>(ep);
}

uint32_t factory_vendor_id(const OrtEpFactory* self) { return real(self)->GetVendorId(real(self)); }
const char* factory_version(const OrtEpFactory* self) { return real(self)->GetVersion(real(self)); }

OrtStatus* factory_validate(OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t n, const char* info,
                            OrtCompiledModelCompatibility* out) {
  EphostCtsOrtValidateHook hook = nullptr;
  void* user = nullptr;
  const OrtApiBase* host = nullptr;
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    std::swap(hook, record().hook);
    user = record().hook_user;
    host = record().host;
  }
  if (hook) hook(user, host, real(self), devices, n, info);
  Observed o("validate_compatibility", EPHOST_CTS_CONTEXT_JUDGE, real(self));
  return o.returns(real(self)->ValidateCompiledModelCompatibilityInfo(real(self), devices, n, info, out));
}

OrtStatus* factory_create_allocator(OrtEpFactory* self, const OrtMemoryInfo* info, const OrtKeyValuePairs* options,
                                    OrtAllocator** out) {
  return real(self)->CreateAllocator(real(self), info, options, out);
}
void factory_release_allocator(OrtEpFactory* self, OrtAllocator* allocator) {
  real(self)->ReleaseAllocator(real(self), allocator);
}
OrtStatus* factory_data_transfer(OrtEpFactory* self, OrtDataTransferImpl** out) {
  return real(self)->CreateDataTransfer(real(self), out);
}
bool factory_stream_aware(const OrtEpFactory* self) { return real(self)->IsStreamAware(real(self)); }
OrtStatus* factory_create_stream(OrtEpFactory* self, const OrtMemoryDevice* device, const OrtKeyValuePairs* options,
                                 OrtSyncStreamImpl** out) {
  return real(self)->CreateSyncStreamForDevice(real(self), device, options, out);
}

OrtEpFactory* wrap_factory(OrtEpFactory* r) {
  auto* p = new FactoryProxy{};
  p->real = r;
  OrtEpFactory& b = p->base;
  const uint32_t v = r->ort_version_supported;
  b.ort_version_supported = v;
  b.GetName = when(true, r->GetName, &factory_name);
  b.GetVendor = when(true, r->GetVendor, &factory_vendor);
  b.GetSupportedDevices = when(true, r->GetSupportedDevices, &factory_devices);
  b.CreateEp = when(true, r->CreateEp, &factory_create_ep);
  b.ReleaseEp = when(true, r->ReleaseEp, &factory_release_ep);
  if (v >= 23) {
    b.GetVendorId = when(true, r->GetVendorId, &factory_vendor_id);
    b.GetVersion = when(true, r->GetVersion, &factory_version);
    b.ValidateCompiledModelCompatibilityInfo =
        when(true, r->ValidateCompiledModelCompatibilityInfo, &factory_validate);
    b.CreateAllocator = when(true, r->CreateAllocator, &factory_create_allocator);
    b.ReleaseAllocator = when(true, r->ReleaseAllocator, &factory_release_allocator);
    b.CreateDataTransfer = when(true, r->CreateDataTransfer, &factory_data_transfer);
    b.IsStreamAware = when(true, r->IsStreamAware, &factory_stream_aware);
    b.CreateSyncStreamForDevice = when(true, r->CreateSyncStreamForDevice, &factory_create_stream);
  }
  return &b;
}

ReleaseEpApiFactoryFn target_release = nullptr;

OrtStatus* refuse(const OrtApiBase* base, const std::string& why) {
  const OrtApi* api = base ? base->GetApi(EPHOST_ORT_API_VERSION_MIN) : nullptr;
  return api ? api->CreateStatus(ORT_FAIL, ("ephost-plugin-cts ONNX Runtime observer: " + why).c_str()) : nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) OrtStatus* CreateEpFactories(
    const char* registered_name, const OrtApiBase* base, const OrtLogger* logger, OrtEpFactory** factories,
    size_t max_factories, size_t* num_factories) {
  const char* path = std::getenv(EPHOST_CTS_TARGET_ENV);
  if (path == nullptr || *path == '\0') return refuse(base, std::string(EPHOST_CTS_TARGET_ENV) + " names no plugin");
  // Kept loaded for the process: the host may call the factories until it releases them.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return refuse(base, std::string("cannot load ") + path + ": " + dlerror());
  auto create = reinterpret_cast<CreateEpApiFactoriesFn>(dlsym(library, ORT_EP_CREATE_FACTORIES_SYMBOL));
  target_release = reinterpret_cast<ReleaseEpApiFactoryFn>(dlsym(library, ORT_EP_RELEASE_FACTORY_SYMBOL));
  if (create == nullptr || target_release == nullptr)
    return refuse(base, std::string(path) + " exports no CreateEpFactories / ReleaseEpFactory");
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    record().host = base;
  }
  const size_t room = std::min(max_factories, kMaxFactories);
  OrtStatus* status = create(registered_name, &observed_api_base, logger, factories, room, num_factories);
  if (status != nullptr || factories == nullptr || num_factories == nullptr) return status;
  for (size_t i = 0; i < std::min(*num_factories, room); ++i)
    if (factories[i]) factories[i] = wrap_factory(factories[i]);
  return nullptr;
}

extern "C" __attribute__((visibility("default"))) OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  if (factory == nullptr || target_release == nullptr) return nullptr;
  OrtEpFactory* r = real(factory);
  delete reinterpret_cast<FactoryProxy*>(factory);
  return target_release(r);
}

extern "C" __attribute__((visibility("default"))) void ephost_cts_observation(EphostCtsObservation* out) {
  std::lock_guard<std::mutex> lock(record().mutex);
  *out = record().counts;
}

extern "C" __attribute__((visibility("default"))) void ephost_cts_calls(std::vector<PluginCall>* out) {
  std::lock_guard<std::mutex> lock(record().mutex);
  *out = record().calls;
}

extern "C" __attribute__((visibility("default"))) void ephost_cts_set_ort_validate_hook(EphostCtsOrtValidateHook hook,
                                                                                        void* user) {
  std::lock_guard<std::mutex> lock(record().mutex);
  record().hook = hook;
  record().hook_user = user;
}
