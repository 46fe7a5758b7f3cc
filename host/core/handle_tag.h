// A word at the start of every object the host hands a plugin behind an opaque handle (nodes, values,
// graphs, attributes, capability and context sinks, kernel contexts, values), so that a handle of the
// wrong kind is recognised before it is used: a plugin passing a graph where a node belongs, or a
// pointer to something else entirely that happens to be readable, gets INVALID_ARGUMENT instead of
// the host reading garbage. A destroyed object's tag is cleared, which catches some stale handles too.
// Statuses are checked differently (core/status.h: the live set), since plugins return them.
#pragma once

#include <cstdint>

namespace ephost {

enum class HandleKind : uint32_t {
  kNode = 0x45444f4e,           // "NODE"
  kValueInfo = 0x4f464e49,      // "INFO"
  kGraph = 0x48505247,          // "GRPH"
  kAttribute = 0x52545441,      // "ATTR"
  kCapability = 0x53504143,     // "CAPS"
  kKernelContext = 0x5854434b,  // "KCTX"
  kValue = 0x4c415648,          // "HVAL"
  kContextSink = 0x4b4e4953,    // "SINK"
};

template <HandleKind Kind>
class HandleTag {
 public:
  HandleTag() = default;
  HandleTag(const HandleTag&) = default;
  HandleTag& operator=(const HandleTag&) = default;
  ~HandleTag() { __atomic_store_n(&value_, 0u, __ATOMIC_RELAXED); }  // not a dead store to elide
  bool valid() const { return __atomic_load_n(&value_, __ATOMIC_RELAXED) == static_cast<uint32_t>(Kind); }

 private:
  uint32_t value_ = static_cast<uint32_t>(Kind);
};

}  // namespace ephost
