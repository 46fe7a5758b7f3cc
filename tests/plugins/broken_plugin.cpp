// One source, many broken plugins: each library is built with exactly one EPHOST_BROKEN_<VARIANT>
// definition (see CMakeLists.txt) and fails discovery in one specific way. Written against the raw C ABI,
// not the SDK, so that each one can misbehave exactly as a careless plugin would (throwing across the
// boundary included).
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
#else
#error "define exactly one EPHOST_BROKEN_<VARIANT>"
#endif

const EphostHostApi* g_host = nullptr;

const char* plugin_name() {
  if constexpr (kVariant == Variant::kBadName) return "bad name!";
  if constexpr (kVariant == Variant::kDuplicate) return "alpha";
  return "broken";
}

#if defined(EPHOST_BROKEN_UNDEFINED_SYMBOL)
extern "C" int ephost_test_symbol_nothing_defines(void);
#endif

EphostStatus* describe(EphostPluginInfo* info) {
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

EphostStatus* provider_create(const char* const*, const char* const*, size_t, EphostProvider**) {
  return g_host->status_create(EPHOST_NOT_IMPLEMENTED, "broken test plugin creates no provider");
}

void provider_release(EphostProvider*) {}

EphostStatus* get_capability(EphostProvider*, const EphostGraph*, EphostCapability*) { return nullptr; }

EphostPlugin make_table() {
  EphostPlugin t{};
  t.struct_size = kVariant == Variant::kShortTable ? 16 : sizeof(EphostPlugin);
  t.abi_version = kVariant == Variant::kNewerAbi ? 99 : kVariant == Variant::kTableAbiMismatch ? 2 : 1;
  t.describe = &describe;
  t.provider_create = &provider_create;
  t.provider_release = &provider_release;
  t.get_capability = kVariant == Variant::kMissingMember ? nullptr : &get_capability;
  return t;
}

EphostStatus* negotiate(EphostPluginNegotiation* negotiation) {
  static const EphostPlugin table = make_table();
  g_host = negotiation->host_api;
  if constexpr (kVariant == Variant::kRefuses)
    return g_host->status_create(EPHOST_NOT_IMPLEMENTED, "refusing: this plugin needs ABI >= 7");
  if constexpr (kVariant == Variant::kNegotiateThrows) throw std::logic_error("negotiation exploded");
  negotiation->plugin_abi_version = kVariant == Variant::kNewerAbi ? 99 : 1;
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
