// One entry of the discovery report: a library (or the built-in CPU plugin) the host considered, whether
// it is usable, and why not. A record loaded in process also owns what keeps the plugin usable: the
// library handle and the plugin's own copy of the host table.
//
// Lazy loading (as GStreamer's registry does): a library that the registry cache already knows as
// usable, unchanged since it was probed, is admitted from what the cache says (name, version, ABI,
// source keys, devices...) without being loaded: `loaded` is true, `in_process` false. It is loaded in
// process the first time its code is needed, by PluginRegistry::ensure_loaded, which fills `plugin`,
// `host_api`, `devices` and `library` and then sets `in_process`. A load that fails then (the file
// changed and re-probed badly, dlopen failed, the plugin disagrees with the cache) clears `loaded` and
// sets `late_reason`.
//
// Threading: the metadata is written before the record is published and never changed afterwards.
// `plugin`, `host_api`, `devices` and `library` are written once, under the registry's load lock,
// before `in_process` is set (release); read them only after ensure_loaded returned true or
// in_process read true (acquire). `late_reason` is written once before `loaded` is cleared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost {
namespace ort_ep {
class OrtEpLibrary;
}  // namespace ort_ep

class PluginLibrary;
class Device;

// Path of the record made for a plugin linked into the host.
inline constexpr const char* kBuiltinPluginPath = "<built-in>";

// A device a plugin reports (plugin ABI 3), as the scanner saw it: probe_library enumerates them
// (enumerate_devices), the scanner protocol and the registry cache carry the list
// (plugin_probe_json.cpp). The host enumerates again in process when it loads the plugin (its Device
// objects call into the loaded library); this list is what the scanner saw, for the report of a plugin
// that is skipped or not loaded yet, and for tests.
struct ProbedDevice {
  std::string type;  // "cpu", "gpu", "npu"
  std::string vendor;
  std::string name;
  std::string driver_version;
  std::string hardware_architecture;
  uint64_t memory_bytes = 0;
  bool host_memory_usable = false;  // registry format 2 / scanner protocol 2
  uint32_t memory_kinds = 0;        // bitmask of EPHOST_MEMORY_KIND_BIT (format 2 / protocol 2)
};

struct PluginRecord {
  PluginRecord();
  ~PluginRecord();
  PluginRecord(const PluginRecord&) = delete;
  PluginRecord& operator=(const PluginRecord&) = delete;

  std::string path;            // library path as given, kBuiltinPluginPath for the CPU plugin
  // Usable: admitted into the registry, whether loaded in process yet or not (see in_process). Only
  // ever goes from true to false (a lazy load that failed), never back.
  std::atomic<bool> loaded{false};
  // The library is loaded in process and `plugin`, `host_api`, `devices` and `library` are set. False
  // for a usable plugin admitted from the registry cache and not needed yet (lazy loading).
  std::atomic<bool> in_process{false};
  std::string reason;          // why skipped at discovery ("" when usable then); see skip_reason()
  // Why a lazy load failed (written once, before `loaded` is cleared); "" otherwise.
  std::string late_reason;
  // Why the plugin is not usable: `reason`, or `late_reason` when it dropped out at its lazy load.
  const std::string& skip_reason() const {
    if (loaded.load(std::memory_order_acquire)) return reason;
    return reason.empty() ? late_reason : reason;
  }
  uint32_t abi_version = 0;    // negotiated; 0 when negotiation failed

  // Metadata copied from EphostPluginInfo (empty when describe failed).
  std::string name;
  std::string vendor;
  std::string version;
  std::string device_type;     // "cpu", "gpu", "npu"; "" when describe failed or the value is unknown
  std::string sdk_version;
  std::string hardware_architecture;
  std::string driver_version;
  std::vector<std::string> context_source_keys;
  int32_t default_priority = 0;
  // Host devices the provider cannot use, each with the reason its plugin gave: an ONNX Runtime plugin EP
  // factory's GetHardwareDeviceIncompatibilityDetails (ort_ep::OrtEpLibrary::unsupported_devices). Empty
  // for every other plugin.
  std::vector<std::string> unsupported_devices;

  bool builtin = false;
  // How the library was probed before it was loaded: "scanner" (the scanner's child process),
  // "registry" (the registry cache remembered it), "in process" (EPHOST_PLUGIN_SCAN=inprocess, or no
  // scanner); "" for the built-in plugin and for files skipped before any probe.
  std::string probed_by;
  // The probe's verdict (probe_outcome_name: "usable", "refused", "crashed", "exited", "timed_out",
  // "scanner_failed"); "" when it was not probed apart from loading it.
  std::string probe_outcome;
  // When that verdict was probed (unix seconds): by the scanner or in process when the env was created,
  // or earlier when the registry cache remembered it (probed_by "registry"). 0 for the built-in plugin
  // and files skipped before any probe.
  int64_t probed_at = 0;
  // Why the library was probed again although the registry cache had a verdict for this very file
  // (verdict_freshness.h): "the environment changed (EPHOST_CTS_TARGET)", "the device list changed",
  // "the verdict was 2 h old (its backoff: 15 min)", "a rescan was asked for"; "" otherwise.
  std::string reprobe_reason;
  const EphostPlugin* plugin = nullptr;      // valid while loaded
  const EphostHostApi* host_api = nullptr;   // the host table this plugin was given (process lifetime)

  // Canonical path of the library ("" for the built-in plugin and when it could not be resolved):
  // two paths naming one file are one plugin.
  std::string canonical_path;

  // Plugin ABI 3: the devices the plugin drives, in its own order (empty for host-memory plugins).
  // Filled when it is loaded in process (see in_process).
  std::vector<std::unique_ptr<Device>> devices;
  // The devices the probe saw (scanner or registry cache); what the report and the device list show
  // of a plugin not loaded in process. Empty for a plugin probed in process and the built-in one.
  std::vector<ProbedDevice> probed_devices;

  // The library handle (the host table lives for the whole process: see negotiation.cpp). Shared by the
  // records of one ONNX Runtime plugin EP library's factories (one record each, one load for all).
  std::shared_ptr<PluginLibrary> library;

  // An ONNX Runtime plugin EP (ort_ep/): the library's factories and devices, shared by the records of
  // its factories, set when it is loaded in process (with `plugin` null). It holds the library handle
  // itself until every factory was released, so the library is unloaded after the last of them.
  // Its sdk_version says "ONNX Runtime plugin EP (API <asked>, built for <ort_version_supported>)".
  std::shared_ptr<ort_ep::OrtEpLibrary> ort;
  // An ONNX Runtime plugin EP's record serves one factory of its library: this one (its index among
  // ort->factories(); the record's name is the factory's). 0 for every other record.
  uint32_t ort_factory = 0;
};

// "cpu" / "gpu" / "npu", or "" for a value outside EphostDeviceType.
const char* device_type_name(int32_t device_type);

}  // namespace ephost
