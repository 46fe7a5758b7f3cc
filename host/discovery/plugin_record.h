// One entry of the discovery report: a library (or the built-in CPU plugin) the host considered, whether
// it loaded, and why not. A loaded record also owns what keeps the plugin usable: the library handle and
// the plugin's own copy of the host table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost {

class PluginLibrary;
class Device;

// Path of the record made for a plugin linked into the host.
inline constexpr const char* kBuiltinPluginPath = "<built-in>";

struct PluginRecord {
  PluginRecord();
  ~PluginRecord();
  PluginRecord(const PluginRecord&) = delete;
  PluginRecord& operator=(const PluginRecord&) = delete;

  std::string path;            // library path as given, kBuiltinPluginPath for the CPU plugin
  bool loaded = false;
  std::string reason;          // why skipped ("" when loaded)
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

  bool builtin = false;
  // How the library was probed before it was loaded: "scanner" (the scanner's child process),
  // "registry" (the registry cache remembered it), "in process" (EPHOST_PLUGIN_SCAN=inprocess, or no
  // scanner); "" for the built-in plugin and for files skipped before any probe.
  std::string probed_by;
  // The probe's verdict (probe_outcome_name: "usable", "refused", "crashed", "exited", "timed_out",
  // "scanner_failed"); "" when it was not probed apart from loading it.
  std::string probe_outcome;
  const EphostPlugin* plugin = nullptr;      // valid while loaded
  const EphostHostApi* host_api = nullptr;   // the host table this plugin was given (process lifetime)

  // Canonical path of the library ("" for the built-in plugin and when it could not be resolved):
  // two paths naming one file are one plugin.
  std::string canonical_path;

  // Plugin ABI 3: the devices the plugin drives, in its own order (empty for host-memory plugins).
  std::vector<std::unique_ptr<Device>> devices;

  // The library handle (the host table lives for the whole process: see negotiation.cpp).
  std::unique_ptr<PluginLibrary> library;
};

// "cpu" / "gpu" / "npu", or "" for a value outside EphostDeviceType.
const char* device_type_name(int32_t device_type);

}  // namespace ephost
