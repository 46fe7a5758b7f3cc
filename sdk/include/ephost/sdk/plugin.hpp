// ephost plugin SDK — C++ helpers over the plugin C ABI (ephost/ephost_plugin.h).
//
// What you get: RAII-free, exception-based wrappers for the read-only graph view, attribute getters
// with defaults, a typed kernel context, EPContext caching (ContextProvider), and EPHOST_DEFINE_PLUGIN,
// which generates the exported entry point and the C function table, negotiates the ABI version and
// turns every exception into an EphostStatus so that none crosses the boundary.
//
// The SDK comes in parts, one job each, all included here:
//   host.hpp            the host's table and the negotiated ABI version
//   status.hpp          errors and statuses (Error, fail, check, guard), logging
//   tensor.hpp          element types, Tensor
//   graph.hpp           Graph, Node, Value
//   capability.hpp      Capability
//   kernel_context.hpp  KernelContext, SequenceInput, OwnedValue
//   profile_spans.hpp   SpanTimer: per-operator spans inside a step's profile span (plugin ABI 4)
//   provider.hpp        Provider, Kernel, CompiledGroup, Options
//   epcontext.hpp       ContextProvider, ContextSink, ContextJudgement
//   define_plugin.hpp   Description, EPHOST_DEFINE_PLUGIN
//   fusion_groups.hpp   NodeDependencies, acyclic_groups: the nodes to fuse, in groups that form no cycle
//   scratch.hpp         scratch_vector, buffer_bytes_limit: kernels' working buffers under the host's
//                       EPHOST_TENSOR_BYTES_LIMIT
//
// Not included here, for the plugins that keep a binary format of their own (context blobs):
//   byte_io.hpp         ByteWriter, ByteReader, fnv1a64
//   semver.hpp          Semver, parse_semver: MAJOR.MINOR.PATCH for version rules on cached contexts
//
// Build plugins with -fvisibility=hidden (the ephost::sdk CMake target sets it): the SDK's inline
// state must stay private to each plugin library.
#pragma once

// The standard headers this file included when it was one header, kept for plugins that use them
// without including them.
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/capability.hpp"
#include "ephost/sdk/define_plugin.hpp"
#include "ephost/sdk/epcontext.hpp"
#include "ephost/sdk/fusion_groups.hpp"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/kernel_context.hpp"
#include "ephost/sdk/profile_spans.hpp"
#include "ephost/sdk/provider.hpp"
#include "ephost/sdk/scratch.hpp"
#include "ephost/sdk/status.hpp"
#include "ephost/sdk/tensor.hpp"
