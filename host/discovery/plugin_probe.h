// Probing one candidate library: load it, negotiate, describe, and (plugin ABI 3) enumerate its
// devices. The plugin scanner's child process does this for every library that is not in the registry
// cache (plugin_scanner.h, host/scanner/); the host loads in process only libraries that probed
// cleanly. A probe result says how far the library got and, when it did not get through, why: the
// plugin refused or failed cleanly, or it crashed, exited or hung (those are only seen from outside).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "discovery/plugin_record.h"

namespace ephost {

enum class ProbeOutcome {
  kUsable,         // loaded, negotiated and described cleanly: may be loaded in process
  kRefused,        // a clean failure: no entry point, negotiation refused, invalid metadata, dlopen error...
  kCrashed,        // killed by a signal (segfault, abort, stack overflow, SIGKILL...)
  kExited,         // ended the process (exit or _exit) in the middle of a probe
  kTimedOut,       // no answer within the scan timeout
  kScannerFailed,  // the scanner itself could not run: says nothing about the library (never cached)
};

// "usable", "refused", "crashed", "exited", "timed_out", "scanner_failed" (report and registry spelling).
const char* probe_outcome_name(ProbeOutcome outcome);
// The inverse; false for an unknown name.
bool parse_probe_outcome(const std::string& name, ProbeOutcome* out);

// Stages of a probe, in order; a result records the stage it was in when it ended.
inline constexpr const char* kProbeStageLoad = "load";          // dlopen: the library's static constructors
inline constexpr const char* kProbeStageNegotiate = "negotiate";
inline constexpr const char* kProbeStageDescribe = "describe";
inline constexpr const char* kProbeStageDevices = "devices";    // plugin ABI 3: device enumeration
// True for the four stage names above.
bool is_probe_stage(const std::string& stage);
// "loading the library (static constructors)", "negotiation", "describe", "device enumeration".
std::string probe_stage_text(const std::string& stage);

// ProbedDevice (a device as the probe saw it) is in plugin_record.h.

// What a plugin said about itself: the record's metadata, as far as the probe got.
struct PluginDescription {
  uint32_t abi_version = 0;  // 0 when negotiation failed
  std::string name, vendor, version, device_type, sdk_version, hardware_architecture, driver_version;
  std::vector<std::string> context_source_keys;
  int32_t default_priority = 0;
  std::vector<std::string> unsupported_devices;  // PluginRecord::unsupported_devices
};
PluginDescription description_of(const PluginRecord& record);
// Copies the description's metadata into `record` (not the handles).
void apply_description(const PluginDescription& description, PluginRecord& record);

// One more provider a usable library serves besides its first (an ONNX Runtime plugin EP library
// answers one factory per provider): what it says of itself and its devices.
struct ProbedProvider {
  PluginDescription description;
  std::vector<ProbedDevice> devices;
};

struct ProbeResult {
  ProbeOutcome outcome = ProbeOutcome::kRefused;
  std::string stage;   // the stage it ended in (kUsable: the last one reached)
  std::string reason;  // why it is not usable; "" when usable
  PluginDescription description;  // the library's first provider (its only one, for an ephost plugin)
  std::vector<ProbedDevice> devices;
  // Usable only: the library's further providers, in order (each factory after the first of an ONNX
  // Runtime plugin EP library); empty for an ephost plugin. Registry format 5 / scanner protocol 3.
  std::vector<ProbedProvider> siblings;
};

// The devices a probed record shows: what the probe saw of them (the record's ProbedDevice list).
std::vector<ProbedDevice> probed_devices_of(const PluginRecord& record);

// Probes `path` in this process: loads it (and leaves it loaded: the scanner exits afterwards),
// negotiates, describes it and enumerates its devices (plugin ABI 3). `on_stage` is called with each stage name before that stage runs, so
// that a crash inside it can be attributed. The outcome is kUsable or kRefused; a crash or hang is
// never caught here, which is why the scanner runs this in a child process.
ProbeResult probe_library(const std::string& path, const std::function<void(const char* stage)>& on_stage);

}  // namespace ephost
