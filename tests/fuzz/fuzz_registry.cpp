// Fuzz harness: the plugin registry cache file (discovery/registry_cache.h). A file that parses must
// serialize and parse back to the same entries; anything else must be refused with an exception (the
// host then ignores and rewrites the file), never crash or hang.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "discovery/registry_cache.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto entries = ephost::RegistryCache::parse(text);
    const std::string written = ephost::RegistryCache::serialize(entries);
    auto again = ephost::RegistryCache::parse(written);
    if (again.size() != entries.size() || ephost::RegistryCache::serialize(again) != written) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
