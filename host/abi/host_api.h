// The EphostHostApi table the host gives every plugin (ephost_plugin.h): status, logging, read-only
// graph accessors over the IR (graph/graph.h), capability sink, kernel context, EPContext sink.
#pragma once

#include <cstdint>

#include "ephost/ephost_plugin.h"

namespace ephost {

// A copy of the host table whose abi_version is `abi_version`. Each loaded plugin keeps its own copy
// (held by its discovery record) for as long as the library is loaded.
EphostHostApi make_host_api(uint32_t abi_version);

}  // namespace ephost
