// When a verdict the registry cache remembers (registry_cache.h) still holds for a library whose file
// has not changed, and why it is probed again when it does not.
//
//   crashed, exited           hold until the file changes (a crash is not retried on every start: a
//                             library that crashes the scanner would otherwise cost a child and a
//                             timeout each time)
//   usable                    holds while the context it was probed under (probe_context.h) is the
//                             same: the devices a usable plugin lists, which lazy loading serves from
//                             the cache, depend on the environment (OCL_ICD_VENDORS,
//                             CUDA_VISIBLE_DEVICES) and on the device nodes
//   refused, timed out        may have a cause outside the file, so they hold only while
//                             - the context they were probed under (probe_context.h) is the same:
//                               the environment's variables, the host version, the accelerator device
//                               nodes; and
//                             - they are younger than their backoff: 15 min after the first such
//                               probe, doubling for each consecutive probe of the same file that gave
//                               the same verdict again (30 min, 1 h, 2 h, ...), at most 24 h.
// A verdict whose time lies in the future (the clock was set back) is probed again too. A rescan
// (ScanSettings::rescan, `ephost plugins --rescan`) probes everything again whatever the cache says.
#pragma once

#include <cstdint>
#include <string>

#include "discovery/probe_context.h"
#include "discovery/registry_cache.h"

namespace ephost {

inline constexpr int64_t kReprobeFirstSeconds = 15 * 60;       // a new refusal or timeout holds 15 min
inline constexpr int64_t kReprobeMaxSeconds = 24 * 60 * 60;    // the backoff's cap

// How long a refusal or timeout holds after the probe that gave it, when `repeats` earlier consecutive
// probes gave the same verdict: kReprobeFirstSeconds * 2^repeats, at most kReprobeMaxSeconds.
int64_t reprobe_interval_s(uint32_t repeats);

// "" when `entry` (found for the library's current identity) may be used as it is at `now_s` (unix
// seconds) under `now`; otherwise why the library is probed again, for the log and the report: "the
// environment changed (EPHOST_CTS_TARGET)", "the device list changed", "the verdict was 2 h old (its
// backoff: 15 min)",
// "the verdict was recorded in the future (the clock was set back)".
std::string reprobe_reason(const RegistryEntry& entry, const ProbeContext& now, int64_t now_s);

// An age for people: "45 s", "12 min", "3 h", "2 d" (rounded down).
std::string age_text(int64_t seconds);

// The current time in unix seconds.
int64_t unix_now_s();

}  // namespace ephost
