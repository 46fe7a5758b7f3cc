// What isolation mode auto knows about a plugin's past: whether it crashed or hung in process in an
// earlier process. The process it happened in could not say so afterwards, so it said so while it
// happened: the fault reporter and the hang watchdog append a line to the fault journal beside the
// plugin registry cache (core/plugin_fault.h). This reads it back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ephost {

struct RememberedFault {
  std::string kind;    // "crashed" or "hung" (a hang followed by "returned" for the same call is forgotten)
  int64_t at = 0;      // when (unix seconds)
  std::string detail;  // the signal ("SIGSEGV (segmentation fault)"), or how long the call had run ("10000 ms")
  std::string call;    // the plugin call it happened in ("compute", "compile", ...)
};

// The last fault the journal `journal` remembers for the library at `canonical_library`, or nullopt:
// none, no journal, or the library file changed after the fault (a new build is given a new chance).
// With `plugins` (the provider's name and the library's file name), only faults of those count: a
// factory of an ONNX Runtime library that crashed does not mark its sibling factories, while a crash in
// a call of the whole library (named by its file) marks all; lines without a plugin field (older
// journals) count for every provider of the library. Lines that cannot be read are skipped. A journal
// past its bound is trimmed first (trim_fault_journal).
std::optional<RememberedFault> remembered_fault(const std::string& journal, const std::string& canonical_library,
                                                const std::vector<std::string>& plugins = {});

// The journal only grows (a signal handler appends, and can do nothing else): once it is over
// `max_bytes`, it is rewritten (atomically) with its most recent lines, about `max_bytes / 2`. A line a
// crashing process appends while it is rewritten may be lost. Errors are ignored: the journal is a hint.
inline constexpr size_t kFaultJournalMaxBytes = 64 * 1024;
void trim_fault_journal(const std::string& journal, size_t max_bytes = kFaultJournalMaxBytes);

// "crashed in process at 2026-11-27 02:10:11 UTC in compute (SIGSEGV (segmentation fault))".
std::string describe_remembered_fault(const RememberedFault& fault);

}  // namespace ephost
