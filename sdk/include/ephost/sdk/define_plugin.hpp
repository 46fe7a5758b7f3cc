// ephost plugin SDK — defining a plugin: its Description, and EPHOST_DEFINE_PLUGIN, which generates the
// exported entry point and the C function table, negotiates the ABI version and turns every exception
// into an EphostStatus so that none crosses the boundary.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/capability.hpp"
#include "ephost/sdk/devices.hpp"
#include "ephost/sdk/epcontext.hpp"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/kernel_context.hpp"
#include "ephost/sdk/provider.hpp"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

struct Description {
  std::string name;
  std::string vendor;
  std::string version = "0.1.0";
  EphostDeviceType device_type = EPHOST_DEVICE_CPU;
  std::vector<std::string> context_source_keys;
  std::string sdk_version;
  std::string hardware_architecture;
  std::string driver_version;
  int32_t default_priority = 0;
};

namespace detail {

// Strings handed to the host must outlive the library's use, so the description is kept here.
struct DescriptionStore {
  Description d;
  std::vector<const char*> keys;
};
inline DescriptionStore& description_store() {
  static DescriptionStore s;
  return s;
}

struct CompiledBox {
  std::unique_ptr<CompiledGroup> group;
};

// What the host holds as an EphostProvider*: the plugin's provider and the glue's state for it.
struct ProviderBox {
  std::unique_ptr<Provider> provider;
  ContextProvider* contexts = nullptr;  // the same object, when it caches contexts
  std::string judge_reason;             // context_judge's out_reason: valid until the next call
};

// A device plugin's Create takes the device too: (const Options&, uint32_t device).
template <typename Create>
constexpr bool kCreatesOnDevice = std::is_invocable_v<Create&, const Options&, uint32_t>;

// The provider type a Create callable makes (it returns std::unique_ptr<T>).
template <typename Create, bool OnDevice = kCreatesOnDevice<Create>>
struct created_provider {
  using type = typename std::invoke_result_t<Create&, const Options&>::element_type;
};
template <typename Create>
struct created_provider<Create, true> {
  using type = typename std::invoke_result_t<Create&, const Options&, uint32_t>::element_type;
};
template <typename Create>
using created_provider_t = typename created_provider<Create>::type;

// No devices: a host-memory plugin (DevicesT = NoDevices).
struct NoDevices {};

template <typename Describe, typename Create, typename DevicesT = NoDevices>
struct PluginGlue {
  static constexpr bool kHasDevices = !std::is_same_v<DevicesT, NoDevices>;
  static_assert(!kHasDevices || std::is_base_of_v<Devices, DevicesT>, "DEVICES must derive from ephost::sdk::Devices");
  static_assert(!kHasDevices || kCreatesOnDevice<Create>,
                "a device plugin's Create takes (const Options&, uint32_t device)");
  static Describe& describe_fn() {
    static Describe fn;
    return fn;
  }
  static Create& create_fn() {
    static Create fn;
    return fn;
  }
  // EPContext slots are filled only for providers that implement them (see ContextProvider).
  static constexpr bool kCachesContexts = std::is_base_of_v<ContextProvider, created_provider_t<Create>>;

  static ProviderBox* box(EphostProvider* p) { return reinterpret_cast<ProviderBox*>(p); }
  static Provider* provider(EphostProvider* p) { return box(p)->provider.get(); }

  static EphostStatus* describe(EphostPluginInfo* info) {
    return guard([&] {
      auto& store = description_store();
      store.d = describe_fn()();
      store.keys.clear();
      for (const auto& k : store.d.context_source_keys) store.keys.push_back(k.c_str());
      auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
      info->name = store.d.name.c_str();
      info->vendor = store.d.vendor.c_str();
      info->version = store.d.version.c_str();
      info->device_type = store.d.device_type;
      info->context_source_keys = store.keys.empty() ? nullptr : store.keys.data();
      info->num_context_source_keys = store.keys.size();
      info->sdk_version = opt(store.d.sdk_version);
      info->hardware_architecture = opt(store.d.hardware_architecture);
      info->driver_version = opt(store.d.driver_version);
      info->default_priority = store.d.default_priority;
    });
  }
  static std::unique_ptr<Provider> create(const Options& options, uint32_t device) {
    if constexpr (kCreatesOnDevice<Create>)
      return create_fn()(options, device);
    else
      return create_fn()(options);
  }
  static EphostStatus* provider_create(const char* const* keys, const char* const* values, size_t n,
                                       EphostProvider** out) {
    return provider_create_for_device(0, keys, values, n, out);
  }
  static EphostStatus* provider_create_for_device(uint32_t device, const char* const* keys, const char* const* values,
                                                  size_t n, EphostProvider** out) {
    return guard([&] {
      Options options;
      for (size_t i = 0; i < n; ++i) options.emplace_back(keys[i], values[i]);
      auto b = std::make_unique<ProviderBox>();
      b->provider = create(options, device);
      if (!b->provider) fail(EPHOST_FAIL, "the plugin's Create returned no provider");
      b->contexts = dynamic_cast<ContextProvider*>(b->provider.get());
      // The table was built from Create's return type; a ContextProvider hidden behind
      // std::unique_ptr<Provider> would silently never be cached, so say how to fix it instead.
      if (b->contexts != nullptr && !kCachesContexts)
        fail(EPHOST_FAIL, "the provider is a ContextProvider but the plugin's Create returns std::unique_ptr<Provider>: "
                          "return std::unique_ptr<YourProvider> so that EPHOST_DEFINE_PLUGIN fills the EPContext slots");
      *out = reinterpret_cast<EphostProvider*>(b.release());
    });
  }
  static void provider_release(EphostProvider* p) { delete box(p); }
  static EphostStatus* get_capability(EphostProvider* p, const EphostGraph* g, EphostCapability* c) {
    return guard([&] {
      Capability cap(c);
      provider(p)->get_capability(Graph(g), cap);
    });
  }
  static EphostStatus* kernel_create(EphostProvider* p, const EphostNode* node, EphostKernel** out) {
    return guard([&] {
      CurrentProviderScope current(p);
      std::unique_ptr<Kernel> k = provider(p)->create_kernel(Node(node));
      *out = reinterpret_cast<EphostKernel*>(k.release());
    });
  }
  static EphostStatus* kernel_compute(EphostKernel* k, EphostKernelContext* c) {
    return guard([&] {
      CurrentKernelContextScope current(c);
      KernelContext ctx(c);
      reinterpret_cast<Kernel*>(k)->compute(ctx);
    });
  }
  static void kernel_release(EphostKernel* k) { delete reinterpret_cast<Kernel*>(k); }

  static EphostStatus* compiled_create_state(void* user, void** out_state) {
    return guard([&] { *out_state = static_cast<CompiledBox*>(user)->group->create_state(); });
  }
  static EphostStatus* compiled_compute(void* user, void* state, EphostKernelContext* c) {
    return guard([&] {
      CurrentKernelContextScope current(c);
      KernelContext ctx(c);
      static_cast<CompiledBox*>(user)->group->compute(state, ctx);
    });
  }
  static void compiled_release_state(void* user, void* state) {
    try {
      static_cast<CompiledBox*>(user)->group->release_state(state);
    } catch (...) {
    }
  }
  static void compiled_release(void* user) { delete static_cast<CompiledBox*>(user); }
  // Hands a compiled group to the host (compile and context_load).
  static void export_group(std::unique_ptr<CompiledGroup> group, const std::string& what, EphostComputeInfo* out) {
    if (!group) fail(EPHOST_EP_FAIL, what + " returned nothing");
    auto compiled = std::make_unique<CompiledBox>();
    compiled->group = std::move(group);
    out->user = compiled.release();
    out->create_state = &compiled_create_state;
    out->compute = &compiled_compute;
    out->release_state = &compiled_release_state;
    out->release = &compiled_release;
  }
  static EphostStatus* compile(EphostProvider* p, const EphostGraph* g, const char* name, EphostComputeInfo* out) {
    return guard([&] {
      CurrentProviderScope current(p);
      export_group(provider(p)->compile(Graph(g), name), std::string("compile of ") + name, out);
    });
  }
  static EphostStatus* on_run_start(EphostProvider* p) { return guard([&] { provider(p)->on_run_start(); }); }
  static EphostStatus* on_run_end(EphostProvider* p) { return guard([&] { provider(p)->on_run_end(); }); }

  static EphostStatus* context_emit(EphostProvider* p, const char* fused_name, EphostContextSink* s) {
    return guard([&] {
      ContextSink sink(s);
      box(p)->contexts->emit_context(fused_name, sink);
    });
  }
  static EphostStatus* context_judge(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                                     EphostContextVerdict* out_verdict, const char** out_reason) {
    return guard([&] {
      ProviderBox* b = box(p);
      ContextJudgement j = b->contexts->judge_context(Node(node), static_cast<const uint8_t*>(blob), size);
      b->judge_reason = std::move(j.reason);
      *out_verdict = j.verdict;
      *out_reason = b->judge_reason.empty() ? nullptr : b->judge_reason.c_str();
    });
  }
  static EphostStatus* context_load(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                                    EphostComputeInfo* out) {
    return guard([&] {
      Node context_node(node);
      export_group(box(p)->contexts->load_context(context_node, static_cast<const uint8_t*>(blob), size),
                   "load_context of '" + context_node.name() + "'", out);
    });
  }

  // --- plugin ABI 3: devices ---
  static DevicesT& devices() {
    static DevicesT d;
    return d;
  }
  static std::vector<DeviceDescription>& device_list() {
    static std::vector<DeviceDescription> list;
    return list;
  }
  static EphostStatus* device_count(uint32_t* out) {
    return guard([&] {
      device_list() = devices().enumerate();
      *out = static_cast<uint32_t>(device_list().size());
    });
  }
  static EphostStatus* device_describe(uint32_t device, EphostDeviceInfo* info) {
    return guard([&] {
      if (device >= device_list().size()) fail(EPHOST_INVALID_ARGUMENT, "no device " + std::to_string(device));
      const DeviceDescription& d = device_list()[device];
      info->device_type = d.type;
      info->vendor = d.vendor.c_str();
      info->name = d.name.c_str();
      info->driver_version = d.driver_version.c_str();
      info->hardware_architecture = d.hardware_architecture.c_str();
      info->memory_bytes = d.memory_bytes;
      info->host_memory_usable = d.host_memory_usable ? 1 : 0;
      info->memory_kinds = d.memory_kinds;
    });
  }
  static EphostStatus* device_allocate(uint32_t device, int32_t kind, uint64_t bytes, EphostDeviceBuffer* out) {
    return guard([&] { *out = devices().allocate(device, static_cast<EphostMemoryKind>(kind), bytes); });
  }
  static void device_free(uint32_t device, int32_t kind, EphostDeviceBuffer buffer) {
    devices().free(device, static_cast<EphostMemoryKind>(kind), buffer);
  }
  static EphostStatus* copy_to_device(uint32_t device, EphostStream* stream, const void* src, EphostDeviceBuffer dst,
                                      uint64_t bytes) {
    return guard([&] { devices().copy_to_device(device, stream, src, dst, bytes); });
  }
  static EphostStatus* copy_to_host(uint32_t device, EphostStream* stream, EphostDeviceBuffer src, void* dst,
                                    uint64_t bytes) {
    return guard([&] { devices().copy_to_host(device, stream, src, dst, bytes); });
  }
  static EphostStatus* copy_between_devices(EphostStream* stream, uint32_t src_device, EphostDeviceBuffer src,
                                            uint32_t dst_device, EphostDeviceBuffer dst, uint64_t bytes) {
    return guard([&] { devices().copy_between_devices(stream, src_device, src, dst_device, dst, bytes); });
  }
  static EphostStatus* stream_create(uint32_t device, EphostStream** out) {
    return guard([&] { *out = devices().create_stream(device); });
  }
  static EphostStatus* stream_synchronize(EphostStream* stream) {
    return guard([&] { devices().synchronize(stream); });
  }
  static void stream_release(EphostStream* stream) { devices().release_stream(stream); }

  // The table for ABI `version` (the functions are the same; the table says which ABI it speaks and
  // ends with that version's last member).
  static const EphostPlugin* table(uint32_t version) {
    static const EphostPlugin tables[] = {make_table(1), make_table(2), make_table(3), make_table(4), make_table(5)};
    static_assert(sizeof(tables) / sizeof(tables[0]) == EPHOST_PLUGIN_ABI_VERSION, "one table per plugin ABI version");
    return &tables[version - 1];
  }
  static EphostPlugin make_table(uint32_t version) {
    EphostPlugin t{};
    t.struct_size = EphostPluginSize(version);
    t.abi_version = version;
    t.describe = &describe;
    t.provider_create = &provider_create;
    t.provider_release = &provider_release;
    t.get_capability = &get_capability;
    t.kernel_create = &kernel_create;
    t.kernel_compute = &kernel_compute;
    t.kernel_release = &kernel_release;
    t.compile = &compile;
    t.on_run_start = &on_run_start;
    t.on_run_end = &on_run_end;
    if constexpr (kCachesContexts) {
      t.context_emit = &context_emit;
      t.context_judge = &context_judge;
      t.context_load = &context_load;
    }
    if constexpr (kHasDevices) {
      if (EphostPluginAbiIncludes(version, EPHOST_PLUGIN_ABI_DEVICES)) {
        t.device_count = &device_count;
        t.device_describe = &device_describe;
        t.provider_create_for_device = &provider_create_for_device;
        t.device_allocate = &device_allocate;
        t.device_free = &device_free;
        t.copy_to_device = &copy_to_device;
        t.copy_to_host = &copy_to_host;
        if (devices().has_device_to_device_copy()) t.copy_between_devices = &copy_between_devices;
        if (devices().has_streams()) {
          t.stream_create = &stream_create;
          t.stream_synchronize = &stream_synchronize;
          t.stream_release = &stream_release;
        }
      }
    }
    return t;
  }

  static EphostStatus* negotiate(EphostPluginNegotiation* n) {
    if (n == nullptr || n->host_api == nullptr) return nullptr;  // cannot even report
    host_api_slot() = n->host_api;
    // Speak the newest version both sides know; refuse when it is older than either side accepts.
    const uint32_t version = n->host_max_abi_version < EPHOST_PLUGIN_ABI_VERSION ? n->host_max_abi_version
                                                                                  : EPHOST_PLUGIN_ABI_VERSION;
    if (!EphostPluginAbiIncludes(version, EPHOST_PLUGIN_ABI_MIN_VERSION) ||
        !EphostPluginAbiIncludes(version, n->host_min_abi_version)) {
      std::string msg = "plugin speaks plugin ABI " + std::to_string(EPHOST_PLUGIN_ABI_MIN_VERSION) + ".." +
                        std::to_string(EPHOST_PLUGIN_ABI_VERSION) + "; the host offers " +
                        std::to_string(n->host_min_abi_version) + ".." + std::to_string(n->host_max_abi_version);
      return n->host_api->status_create(EPHOST_NOT_IMPLEMENTED, msg.c_str());
    }
    n->plugin_abi_version = version;
    n->plugin = table(version);
    negotiated_abi_version_slot() = version;
    return nullptr;
  }
};

}  // namespace detail

}  // namespace ephost::sdk

// Defines the plugin's entry point.
//   ENTRY     the symbol name: ephost_plugin_negotiate for a loadable plugin.
//   DESCRIBE  a default-constructible callable type: () -> ephost::sdk::Description
//   CREATE    a default-constructible callable type: (const Options&) -> std::unique_ptr<P>, P derived
//             from Provider; the EPContext slots are filled when P derives from ContextProvider
#define EPHOST_DEFINE_PLUGIN_ENTRY(ENTRY, DESCRIBE, CREATE)                                       \
  extern "C" EphostStatus* ENTRY(EphostPluginNegotiation* negotiation) {                          \
    return ::ephost::sdk::detail::PluginGlue<DESCRIBE, CREATE>::negotiate(negotiation);           \
  }

// A loadable plugin library: exports ephost_plugin_negotiate.
#define EPHOST_DEFINE_PLUGIN(DESCRIBE, CREATE)                                                    \
  extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation); \
  EPHOST_DEFINE_PLUGIN_ENTRY(ephost_plugin_negotiate, DESCRIBE, CREATE)

// A loadable plugin library that drives devices (plugin ABI 3).
//   DEVICES  a default-constructible type derived from ephost::sdk::Devices (one instance per library)
//   CREATE   (const Options&, uint32_t device) -> std::unique_ptr<P>: a provider on that device
// Against a host older than ABI 3 the plugin has no devices and CREATE gets device 0.
#define EPHOST_DEFINE_DEVICE_PLUGIN(DESCRIBE, CREATE, DEVICES)                                    \
  extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation); \
  EPHOST_DEFINE_DEVICE_PLUGIN_ENTRY(ephost_plugin_negotiate, DESCRIBE, CREATE, DEVICES)

// The entry point of a plugin that drives devices, under the symbol name ENTRY (as
// EPHOST_DEFINE_PLUGIN_ENTRY is to EPHOST_DEFINE_PLUGIN): for a library whose exported entry point
// does more before or after it.
#define EPHOST_DEFINE_DEVICE_PLUGIN_ENTRY(ENTRY, DESCRIBE, CREATE, DEVICES)                        \
  extern "C" EphostStatus* ENTRY(EphostPluginNegotiation* negotiation) {                          \
    return ::ephost::sdk::detail::PluginGlue<DESCRIBE, CREATE, DEVICES>::negotiate(negotiation);  \
  }
