// The EphostHostApi table the host gives every plugin (ephost_plugin.h): status, logging, read-only
// graph accessors over the IR (graph/graph.h), capability sink, kernel context, EPContext sink.
#pragma once

#include <cstdint>

#include "ephost/ephost_plugin.h"

namespace ephost {

// A copy of the host table of plugin ABI `abi_version`: abi_version says it, struct_size is
// EphostHostApiSize(abi_version), and the members of later versions are NULL. Each loaded plugin keeps
// its own copy for as long as the library is loaded. Throws std::logic_error for a version this host
// does not speak.
EphostHostApi make_host_api(uint32_t abi_version);

}  // namespace ephost
