// One source, many broken plugins: each library is built with exactly one EPHOST_BROKEN_<VARIANT>
// definition (see CMakeLists.txt) and misbehaves in one specific way: most fail discovery (cleanly, or
// by crashing, exiting or hanging while the scanner probes them); the later ones load fine and then
// crash, hang or misuse the host table once a session uses them (`--providers broken`). Written against
// the raw C ABI, not the SDK, so that each one can misbehave exactly as a careless plugin would
// (throwing across the boundary included).
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "ephost/ephost_plugin.h"

namespace {

enum class Variant {
  kNoEntry,          // exports no ephost_plugin_negotiate (a misspelled one instead)
  kRefuses,          // negotiation returns an error status
  kNewerAbi,         // answers plugin ABI 99
  kNegotiateThrows,  // negotiation throws
  kNullTable,        // answers no function table
  kShortTable,       // table struct_size smaller than ABI 1's
  kTableAbiMismatch, // table says ABI 2, negotiation answered 1
  kMissingMember,    // table lacks get_capability
  kThrows,           // describe throws
  kDescribeFails,    // describe returns an error status
  kBadName,          // name "bad name!"
  kBadVersion,       // version "1.0"
  kDuplicate,        // name "alpha", the name of a well-behaved test plugin
  kUndefinedSymbol,  // needs a symbol nothing defines: dlopen (RTLD_NOW) fails
  kNeedsEnv,         // refuses negotiation unless EPHOST_TEST_PLUGIN_READY is set (as a GPU plugin whose
                     // driver is not ready); then loads cleanly as "needs_env" (registry verdict tests)
  // Fatal while probed: the scanner's child dies or hangs, the host skips the library with the reason.
  kNegotiateSegfault,      // SIGSEGV in negotiation
  kNegotiateAbort,         // abort() in negotiation
  kNegotiateStackOverflow, // unbounded recursion in negotiation
  kNegotiateSigkill,       // raise(SIGKILL) in negotiation
  kNegotiateSleep,         // never returns from negotiation
  kNegotiateExit0,         // exit(0) in negotiation
  kNegotiateExit3,         // _exit(3) in negotiation
  kStaticAbort,            // abort() in a static constructor (while dlopen runs)
  kStaticSegfault,         // SIGSEGV in a static constructor
  kDescribeSegfault,       // SIGSEGV in describe
  kDevicesSegfault,        // plugin ABI 3: SIGSEGV in device_count (the scanner's "devices" stage)
  // Loads cleanly; misbehaves once a session uses it.
  kCreateSegfault,         // SIGSEGV in provider_create
  kCapabilitySegfault,     // SIGSEGV in get_capability
  kComputeSegfault,        // SIGSEGV in kernel_compute
  kCapabilitySleep,        // never returns from get_capability
  kComputeSleep,           // never returns from kernel_compute
  kWildClaim,              // claims a pointer that is no node of the graph
  kFusedNull,              // capability_add_fused_group(capability, NULL, 3)
  kBadStatus,              // get_capability returns a pointer that is not a status
  kNullArgs,               // calls host functions with NULL and foreign handles, then claims node 0
  kCreateFails,            // provider_create returns an error status, as a plugin whose backend is not ready
};

constexpr Variant kVariant =
#if defined(EPHOST_BROKEN_NO_ENTRY)
    Variant::kNoEntry;
#elif defined(EPHOST_BROKEN_REFUSES)
    Variant::kRefuses;
#elif defined(EPHOST_BROKEN_NEWER_ABI)
    Variant::kNewerAbi;
#elif defined(EPHOST_BROKEN_NEGOTIATE_THROWS)
    Variant::kNegotiateThrows;
#elif defined(EPHOST_BROKEN_NULL_TABLE)
    Variant::kNullTable;
#elif defined(EPHOST_BROKEN_SHORT_TABLE)
    Variant::kShortTable;
#elif defined(EPHOST_BROKEN_TABLE_ABI_MISMATCH)
    Variant::kTableAbiMismatch;
#elif defined(EPHOST_BROKEN_MISSING_MEMBER)
    Variant::kMissingMember;
#elif defined(EPHOST_BROKEN_THROWS)
    Variant::kThrows;
#elif defined(EPHOST_BROKEN_DESCRIBE_FAILS)
    Variant::kDescribeFails;
#elif defined(EPHOST_BROKEN_BAD_NAME)
    Variant::kBadName;
#elif defined(EPHOST_BROKEN_BAD_VERSION)
    Variant::kBadVersion;
#elif defined(EPHOST_BROKEN_DUPLICATE)
    Variant::kDuplicate;
#elif defined(EPHOST_BROKEN_UNDEFINED_SYMBOL)
    Variant::kUndefinedSymbol;
#elif defined(EPHOST_BROKEN_NEEDS_ENV)
    Variant::kNeedsEnv;
#elif defined(EPHOST_BROKEN_NEGOTIATE_SEGFAULT)
    Variant::kNegotiateSegfault;
#elif defined(EPHOST_BROKEN_NEGOTIATE_ABORT)
    Variant::kNegotiateAbort;
#elif defined(EPHOST_BROKEN_NEGOTIATE_STACK_OVERFLOW)
    Variant::kNegotiateStackOverflow;
#elif defined(EPHOST_BROKEN_NEGOTIATE_SIGKILL)
    Variant::kNegotiateSigkill;
#elif defined(EPHOST_BROKEN_NEGOTIATE_SLEEP)
    Variant::kNegotiateSleep;
#elif defined(EPHOST_BROKEN_NEGOTIATE_EXIT0)
    Variant::kNegotiateExit0;
#elif defined(EPHOST_BROKEN_NEGOTIATE_EXIT3)
    Variant::kNegotiateExit3;
#elif defined(EPHOST_BROKEN_STATIC_ABORT)
    Variant::kStaticAbort;
#elif defined(EPHOST_BROKEN_STATIC_SEGFAULT)
    Variant::kStaticSegfault;
#elif defined(EPHOST_BROKEN_DESCRIBE_SEGFAULT)
    Variant::kDescribeSegfault;
#elif defined(EPHOST_BROKEN_DEVICES_SEGFAULT)
    Variant::kDevicesSegfault;
#elif defined(EPHOST_BROKEN_CREATE_SEGFAULT)
    Variant::kCreateSegfault;
#elif defined(EPHOST_BROKEN_CAPABILITY_SEGFAULT)
    Variant::kCapabilitySegfault;
#elif defined(EPHOST_BROKEN_COMPUTE_SEGFAULT)
    Variant::kComputeSegfault;
#elif defined(EPHOST_BROKEN_CAPABILITY_SLEEP)
    Variant::kCapabilitySleep;
#elif defined(EPHOST_BROKEN_COMPUTE_SLEEP)
    Variant::kComputeSleep;
#elif defined(EPHOST_BROKEN_WILD_CLAIM)
    Variant::kWildClaim;
#elif defined(EPHOST_BROKEN_FUSED_NULL)
    Variant::kFusedNull;
#elif defined(EPHOST_BROKEN_BAD_STATUS)
    Variant::kBadStatus;
#elif defined(EPHOST_BROKEN_NULL_ARGS)
    Variant::kNullArgs;
#elif defined(EPHOST_BROKEN_CREATE_FAILS)
    Variant::kCreateFails;
#else
#error "define exactly one EPHOST_BROKEN_<VARIANT>"
#endif

const EphostHostApi* g_host = nullptr;

// Faults the compiler cannot prove and remove.
volatile uintptr_t g_unmapped_address = 16;
volatile bool g_never = false;

[[noreturn]] void segfault() {
  *reinterpret_cast<volatile int*>(g_unmapped_address) = 42;
  std::abort();  // not reached
}

[[noreturn]] void hang() {
  for (;;) pause();
}

int recurse_forever(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (g_never) return frame[0];
  return recurse_forever(depth + 1) + frame[0];
}

constexpr bool kLoadsCleanly = kVariant >= Variant::kCreateSegfault;

#if defined(EPHOST_BROKEN_STATIC_ABORT) || defined(EPHOST_BROKEN_STATIC_SEGFAULT)
// Runs while the library is being loaded (dlopen), before the host can call anything.
struct CrashOnLoad {
  CrashOnLoad() {
    std::fputs("broken plugin: crashing in a static constructor\n", stderr);
    if constexpr (kVariant == Variant::kStaticAbort) std::abort();
    segfault();
  }
} g_crash_on_load;
#endif

const char* plugin_name() {
  if constexpr (kVariant == Variant::kBadName) return "bad name!";
  if constexpr (kVariant == Variant::kDuplicate) return "alpha";
  if constexpr (kVariant == Variant::kNeedsEnv) return "needs_env";
  return "broken";
}

#if defined(EPHOST_BROKEN_UNDEFINED_SYMBOL)
extern "C" int ephost_test_symbol_nothing_defines(void);
#endif

EphostStatus* describe(EphostPluginInfo* info) {
  if constexpr (kVariant == Variant::kDescribeSegfault) segfault();
  if constexpr (kVariant == Variant::kThrows) throw std::runtime_error("describe exploded");
  if constexpr (kVariant == Variant::kDescribeFails)
    return g_host->status_create(EPHOST_EP_FAIL, "no test device present");
#if defined(EPHOST_BROKEN_UNDEFINED_SYMBOL)
  info->default_priority = ephost_test_symbol_nothing_defines();
#endif
  info->name = plugin_name();
  info->vendor = "ephost tests";
  info->version = kVariant == Variant::kBadVersion ? "1.0" : "0.1.0";
  info->device_type = EPHOST_DEVICE_CPU;
  return nullptr;
}

int g_provider;  // the address is the provider handle

EphostStatus* provider_create(const char* const*, const char* const*, size_t, EphostProvider** out) {
  if constexpr (kVariant == Variant::kCreateSegfault) segfault();
  if constexpr (kVariant == Variant::kCreateFails)
    return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin: its backend is not ready");
  if constexpr (!kLoadsCleanly)
    return g_host->status_create(EPHOST_NOT_IMPLEMENTED, "broken test plugin creates no provider");
  *out = reinterpret_cast<EphostProvider*>(&g_provider);
  return nullptr;
}

void provider_release(EphostProvider*) {}

// Every host function this plugin can reach, given NULL or a handle of the wrong kind. The host must
// answer each with an empty value or INVALID_ARGUMENT, and log the misuse; none may crash.
void misuse_host_table(const EphostGraph* graph, EphostCapability* capability) {
  const EphostHostApi& h = *g_host;
  const EphostNode* node = h.graph_node(graph, 0);
  const auto* graph_as_node = reinterpret_cast<const EphostNode*>(graph);
  const auto* node_as_graph = reinterpret_cast<const EphostGraph*>(node);
  const auto* node_as_value = reinterpret_cast<const EphostValueInfo*>(node);
  const auto* node_as_attribute = reinterpret_cast<const EphostAttribute*>(node);
  auto* graph_as_capability = reinterpret_cast<EphostCapability*>(const_cast<EphostGraph*>(graph));
  int checks = 0;
  checks += *h.graph_name(nullptr) == '\0';
  checks += *h.graph_name(node_as_graph) == '\0';
  checks += *h.graph_model_path(nullptr) == '\0';
  checks += h.graph_num_nodes(nullptr) == 0;
  checks += h.graph_node(nullptr, 0) == nullptr;
  checks += h.graph_input(nullptr, 0) == nullptr;
  checks += h.graph_opset(nullptr, "") == -1;
  checks += *h.node_name(nullptr) == '\0';
  checks += *h.node_op_type(graph_as_node) == '\0';
  checks += h.node_num_inputs(nullptr) == 0;
  checks += h.node_input(graph_as_node, 0) == nullptr;
  checks += h.node_attribute(nullptr, "axis") == nullptr;
  checks += h.node_attribute(node, nullptr) == nullptr;
  checks += *h.value_name(nullptr) == '\0';
  checks += h.value_rank(node_as_value) == -1;
  checks += *h.attribute_name(node_as_attribute) == '\0';
  int64_t i = 0;
  const EphostStatus* s = h.attribute_int(nullptr, &i);
  checks += h.status_code(s) == EPHOST_INVALID_ARGUMENT;
  h.status_release(const_cast<EphostStatus*>(s));
  EphostTensorView view{};
  s = h.value_initializer_data(nullptr, &view);
  checks += h.status_code(s) == EPHOST_INVALID_ARGUMENT;
  h.status_release(const_cast<EphostStatus*>(s));
  s = h.capability_add_node(nullptr, node);
  checks += h.status_code(s) == EPHOST_INVALID_ARGUMENT;
  h.status_release(const_cast<EphostStatus*>(s));
  s = h.capability_add_node(graph_as_capability, node);
  checks += h.status_code(s) == EPHOST_INVALID_ARGUMENT;
  h.status_release(const_cast<EphostStatus*>(s));
  s = h.capability_add_node(capability, nullptr);
  checks += h.status_code(s) == EPHOST_INVALID_ARGUMENT;
  h.status_release(const_cast<EphostStatus*>(s));
  // Statuses that are not statuses: released and read without harm.
  static char not_a_status[64] = "not a status";
  h.status_release(reinterpret_cast<EphostStatus*>(not_a_status));
  checks += h.status_code(reinterpret_cast<EphostStatus*>(not_a_status)) == EPHOST_INVALID_ARGUMENT;
  h.log(nullptr, EPHOST_LOG_INFO, nullptr);
  char message[64];
  std::snprintf(message, sizeof(message), "broken plugin: %d of 22 misuses answered safely", checks);
  h.log(nullptr, EPHOST_LOG_WARNING, message);
}

EphostStatus* get_capability(EphostProvider*, const EphostGraph* graph, EphostCapability* capability) {
  if constexpr (kVariant == Variant::kCapabilitySegfault) segfault();
  if constexpr (kVariant == Variant::kCapabilitySleep) hang();
  if constexpr (kVariant == Variant::kWildClaim)
    return g_host->capability_add_node(capability, reinterpret_cast<const EphostNode*>(uintptr_t(0xdeadbeef0)));
  if constexpr (kVariant == Variant::kFusedNull) return g_host->capability_add_fused_group(capability, nullptr, 3);
  if constexpr (kVariant == Variant::kBadStatus) {
    static char garbage[64] = "this is not an EphostStatus";
    return reinterpret_cast<EphostStatus*>(garbage);
  }
  if constexpr (kVariant == Variant::kNullArgs) misuse_host_table(graph, capability);
  if constexpr (kLoadsCleanly) {
    if (g_host->graph_num_nodes(graph) == 0) return nullptr;
    return g_host->capability_add_node(capability, g_host->graph_node(graph, 0));
  }
  return nullptr;
}

int g_kernel;  // the address is the kernel handle

EphostStatus* kernel_create(EphostProvider*, const EphostNode*, EphostKernel** out) {
  *out = reinterpret_cast<EphostKernel*>(&g_kernel);
  return nullptr;
}

EphostStatus* kernel_compute(EphostKernel*, EphostKernelContext*) {
  if constexpr (kVariant == Variant::kComputeSegfault) segfault();
  if constexpr (kVariant == Variant::kComputeSleep) hang();
  return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin computes nothing");
}

void kernel_release(EphostKernel*) {}

// Plugin ABI 3 (kDevicesSegfault only): a device plugin's table, which dies counting its devices.
constexpr bool kSpeaksAbi3 = kVariant == Variant::kDevicesSegfault;
EphostStatus* device_count(uint32_t*) { segfault(); }
EphostStatus* device_describe(uint32_t, EphostDeviceInfo*) { return nullptr; }
EphostStatus* provider_create_for_device(uint32_t, const char* const*, const char* const*, size_t, EphostProvider**) {
  return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin drives no device");
}
EphostStatus* device_allocate(uint32_t, int32_t, uint64_t, EphostDeviceBuffer*) {
  return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin has no memory");
}
void device_free(uint32_t, int32_t, EphostDeviceBuffer) {}
EphostStatus* copy_to_device(uint32_t, EphostStream*, const void*, EphostDeviceBuffer, uint64_t) {
  return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin copies nothing");
}
EphostStatus* copy_to_host(uint32_t, EphostStream*, EphostDeviceBuffer, void*, uint64_t) {
  return g_host->status_create(EPHOST_EP_FAIL, "broken test plugin copies nothing");
}

EphostPlugin make_table() {
  EphostPlugin t{};
  t.struct_size = kVariant == Variant::kShortTable ? 16 : sizeof(EphostPlugin);
  t.abi_version = kVariant == Variant::kNewerAbi ? 99 : kVariant == Variant::kTableAbiMismatch ? 2 : 1;
  if constexpr (kSpeaksAbi3) {
    t.abi_version = 3;
    t.device_count = &device_count;
    t.device_describe = &device_describe;
    t.provider_create_for_device = &provider_create_for_device;
    t.device_allocate = &device_allocate;
    t.device_free = &device_free;
    t.copy_to_device = &copy_to_device;
    t.copy_to_host = &copy_to_host;
  }
  t.describe = &describe;
  t.provider_create = &provider_create;
  t.provider_release = &provider_release;
  t.get_capability = kVariant == Variant::kMissingMember ? nullptr : &get_capability;
  t.kernel_create = &kernel_create;
  t.kernel_compute = &kernel_compute;
  t.kernel_release = &kernel_release;
  return t;
}

EphostStatus* negotiate(EphostPluginNegotiation* negotiation) {
  static const EphostPlugin table = make_table();
  g_host = negotiation->host_api;
  if constexpr (kVariant == Variant::kNegotiateSegfault) segfault();
  if constexpr (kVariant == Variant::kNegotiateAbort) {
    std::fputs("broken plugin: giving up in negotiation\n", stderr);
    std::abort();
  }
  if constexpr (kVariant == Variant::kNegotiateStackOverflow) recurse_forever(0);
  if constexpr (kVariant == Variant::kNegotiateSigkill) raise(SIGKILL);
  if constexpr (kVariant == Variant::kNegotiateSleep) hang();
  if constexpr (kVariant == Variant::kNegotiateExit0) std::exit(0);
  if constexpr (kVariant == Variant::kNegotiateExit3) _exit(3);
  if constexpr (kVariant == Variant::kRefuses)
    return g_host->status_create(EPHOST_NOT_IMPLEMENTED, "refusing: this plugin needs ABI >= 7");
  if constexpr (kVariant == Variant::kNegotiateThrows) throw std::logic_error("negotiation exploded");
  if constexpr (kVariant == Variant::kNeedsEnv) {
    const char* ready = std::getenv("EPHOST_TEST_PLUGIN_READY");
    if (ready == nullptr || *ready == '\0')
      return g_host->status_create(EPHOST_NOT_IMPLEMENTED, "needs_env: EPHOST_TEST_PLUGIN_READY is not set");
  }
  negotiation->plugin_abi_version = kVariant == Variant::kNewerAbi ? 99 : kSpeaksAbi3 ? 3 : 1;
  negotiation->plugin = kVariant == Variant::kNullTable ? nullptr : &table;
  return nullptr;
}

}  // namespace

#if defined(EPHOST_BROKEN_NO_ENTRY)
// The entry point under the wrong name: a library that exports something, just not the contract.
extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate_misspelled(EphostPluginNegotiation* n) {
  return negotiate(n);
}
#else
extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* n) { return negotiate(n); }
#endif
