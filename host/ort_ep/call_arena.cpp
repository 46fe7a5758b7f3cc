#include "ort_ep/call_arena.h"

namespace ephost::ort_ep {
namespace {
thread_local CallArena* innermost = nullptr;
}  // namespace

CallArena::CallArena() : outer_(innermost) { innermost = this; }

CallArena::~CallArena() { innermost = outer_; }

CallArena& CallArena::current() {
  if (innermost) return *innermost;
  // Never destroyed: a plugin may hold what it got until the process ends.
  static auto* process_wide = new CallArena();
  innermost = nullptr;  // the constructor made it innermost; it is only the fallback
  return *process_wide;
}

}  // namespace ephost::ort_ep
