#include "discovery/plugin_probe.h"

#include <memory>

#include "core/device.h"
#include "discovery/device_enumeration.h"
#include "discovery/negotiation.h"
#include "discovery/plugin_call.h"
#include "discovery/plugin_library.h"
#include "discovery/plugin_metadata.h"
#include "discovery/ort_adoption.h"

namespace ephost {
namespace {

struct OutcomeName {
  ProbeOutcome outcome;
  const char* name;
};
constexpr OutcomeName kOutcomeNames[] = {
    {ProbeOutcome::kUsable, "usable"},   {ProbeOutcome::kRefused, "refused"},
    {ProbeOutcome::kCrashed, "crashed"}, {ProbeOutcome::kExited, "exited"},
    {ProbeOutcome::kTimedOut, "timed_out"}, {ProbeOutcome::kScannerFailed, "scanner_failed"},
};

}  // namespace

const char* probe_outcome_name(ProbeOutcome outcome) {
  for (const auto& o : kOutcomeNames)
    if (o.outcome == outcome) return o.name;
  return "unknown";
}

bool parse_probe_outcome(const std::string& name, ProbeOutcome* out) {
  for (const auto& o : kOutcomeNames)
    if (name == o.name) {
      *out = o.outcome;
      return true;
    }
  return false;
}

bool is_probe_stage(const std::string& stage) {
  return stage == kProbeStageLoad || stage == kProbeStageNegotiate || stage == kProbeStageDescribe ||
         stage == kProbeStageDevices;
}

std::string probe_stage_text(const std::string& stage) {
  if (stage == kProbeStageLoad) return "loading the library (static constructors)";
  if (stage == kProbeStageNegotiate) return "negotiation";
  if (stage == kProbeStageDescribe) return "describe";
  if (stage == kProbeStageDevices) return "device enumeration";
  return "startup";
}

PluginDescription description_of(const PluginRecord& r) {
  PluginDescription d;
  d.abi_version = r.abi_version;
  d.name = r.name;
  d.vendor = r.vendor;
  d.version = r.version;
  d.device_type = r.device_type;
  d.sdk_version = r.sdk_version;
  d.hardware_architecture = r.hardware_architecture;
  d.driver_version = r.driver_version;
  d.context_source_keys = r.context_source_keys;
  d.default_priority = r.default_priority;
  d.unsupported_devices = r.unsupported_devices;
  return d;
}

void apply_description(const PluginDescription& d, PluginRecord& r) {
  r.abi_version = d.abi_version;
  r.name = d.name;
  r.vendor = d.vendor;
  r.version = d.version;
  r.device_type = d.device_type;
  r.sdk_version = d.sdk_version;
  r.hardware_architecture = d.hardware_architecture;
  r.driver_version = d.driver_version;
  r.context_source_keys = d.context_source_keys;
  r.default_priority = d.default_priority;
  r.unsupported_devices = d.unsupported_devices;
}

std::vector<ProbedDevice> probed_devices_of(const PluginRecord& record) {
  std::vector<ProbedDevice> devices;
  for (const auto& d : record.devices)
    devices.push_back(ProbedDevice{device_type_name(d->type()), d->vendor(), d->name(), d->driver_version(),
                                   d->hardware_architecture(), d->memory_bytes(), d->host_memory_usable(),
                                   d->memory_kinds()});
  return devices;
}

ProbeResult probe_library(const std::string& path, const std::function<void(const char* stage)>& on_stage) {
  ProbeResult result;
  PluginRecord record;
  record.path = path;
  const char* stage = kProbeStageLoad;
  // Never unloaded, not even when refused: a probe ends with the scanner process, and unloading would
  // run more plugin code (static destructors) after the result was decided.
  std::shared_ptr<PluginLibrary> library;
  std::vector<std::unique_ptr<PluginRecord>> siblings;  // an ONNX Runtime plugin EP's further factories
  auto enter = [&](const char* next) {
    stage = next;
    if (on_stage) on_stage(next);
  };
  try {
    enter(kProbeStageLoad);
    library = PluginLibrary::open(path);
    enter(kProbeStageNegotiate);
    // An ONNX Runtime plugin EP: its factories are created and its devices asked for here (a crash or
    // hang in CreateEpFactories or GetSupportedDevices is attributed to this stage).
    if (!adopt_if_ort_plugin_ep(library, record, siblings)) {
      EphostPluginNegotiateFn entry = library->entry_point();
      negotiate_plugin(entry, record);
      enter(kProbeStageDescribe);
      describe_plugin(record);
      enter(kProbeStageDevices);
      // Plugin ABI 3: the devices it drives (nothing for ABI 1 and 2, or without device_count). A crash or
      // hang in device_count / device_describe is attributed to this stage like any other.
      enumerate_devices(record);
    }
    result.devices = probed_devices_of(record);
    for (const auto& sibling : siblings)
      result.siblings.push_back(ProbedProvider{description_of(*sibling), probed_devices_of(*sibling)});
    result.outcome = ProbeOutcome::kUsable;
  } catch (const PluginSkipped& e) {
    result.outcome = ProbeOutcome::kRefused;
    result.reason = e.what();
  } catch (const std::exception& e) {
    result.outcome = ProbeOutcome::kRefused;
    result.reason = std::string("internal error while probing: ") + e.what();
  }
  result.stage = stage;
  // A refused record holds what negotiation and describe got before the failure, as in process.
  result.description = description_of(record);
  // Deliberately leaked (see above), and so are an ONNX Runtime plugin EP's factories (each record's
  // reference): releasing them would run plugin code after the verdict.
  if (library) new std::shared_ptr<PluginLibrary>(std::move(library));
  if (record.ort) new std::shared_ptr<ort_ep::OrtEpLibrary>(std::move(record.ort));
  for (auto& sibling : siblings) new std::unique_ptr<PluginRecord>(std::move(sibling));
  return result;
}

}  // namespace ephost
