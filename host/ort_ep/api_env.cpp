// The environment entries of the OrtApi a plugin gets (CreateEnv, ReleaseEnv, GetNumHardwareDevices,
// GetHardwareDevices, GetHardwareDeviceEpIncompatibilityDetails): code inside a plugin library that asks
// ONNX Runtime's application-side questions gets the host's answers. The env is the host's environment
// (ort_objects.h: OrtEnv): the hardware devices it probed (hardware_devices.h) and the ONNX Runtime plugin
// EP libraries it has loaded (library.h), whose factories answer why they cannot use a device.
#include <fmt/format.h>

#include <memory>

#include "ort_ep/api_impl.h"
#include "ort_ep/hardware_devices.h"
#include "ort_ep/library.h"
#include "ort_ep/ort_objects.h"
#include "ort_ep/plugin_call.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtApi::{}: {}", function, what));
}

OrtEnv& host_env() {
  static auto* env = new OrtEnv();  // one per process, as ONNX Runtime's; never freed
  return *env;
}

const OrtEnv* env_of(const OrtEnv* env) { return checked<OrtEnv>(env, Magic::kEnv); }

}  // namespace

// The level and log id are not applied: logging is the host's, set by the application.
OrtStatus* CreateEnv(OrtLoggingLevel log_severity_level, const char* logid, OrtEnv** out) noexcept {
  (void)logid;
  if (!out) return invalid("CreateEnv", "out is NULL");
  *out = nullptr;
  if (log_severity_level < ORT_LOGGING_LEVEL_VERBOSE || log_severity_level > ORT_LOGGING_LEVEL_FATAL)
    return invalid("CreateEnv", fmt::format("log_severity_level {} is no OrtLoggingLevel (VERBOSE 0 .. FATAL 4)",
                                            static_cast<int>(log_severity_level)));
  OrtEnv& env = host_env();
  ++env.references;
  *out = &env;
  return nullptr;
}

// Gives back one reference; the host's environment itself outlives every plugin.
void ReleaseEnv(OrtEnv* input) noexcept {
  if (!env_of(input)) return;
  int64_t now = input->references.load();
  while (now > 0 && !input->references.compare_exchange_weak(now, now - 1)) {
  }
}

OrtStatus* GetNumHardwareDevices(const OrtEnv* env, size_t* num_devices) noexcept {
  if (!env_of(env)) return invalid("GetNumHardwareDevices", "env is not an OrtEnv made by CreateEnv");
  if (!num_devices) return invalid("GetNumHardwareDevices", "num_devices is NULL");
  try {
    *num_devices = host_hardware_devices().size();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::GetNumHardwareDevices: {}", e.what()));
  }
}

// The host's devices (the CPU first), which live for the process. `num_devices` must be room for all of them.
OrtStatus* GetHardwareDevices(const OrtEnv* env, const OrtHardwareDevice** devices, size_t num_devices) noexcept {
  if (!env_of(env)) return invalid("GetHardwareDevices", "env is not an OrtEnv made by CreateEnv");
  if (!devices) return invalid("GetHardwareDevices", "devices is NULL");
  try {
    const auto& all = host_hardware_devices();
    if (num_devices < all.size())
      return invalid("GetHardwareDevices", fmt::format("room for {} devices, and the host has {}: ask "
                                                       "GetNumHardwareDevices first", num_devices, all.size()));
    for (size_t i = 0; i < all.size(); ++i) devices[i] = all[i];
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::GetHardwareDevices: {}", e.what()));
  }
}

// Asks the factory named `ep_name` of a loaded library why its EP cannot use `hw` (its
// GetHardwareDeviceIncompatibilityDetails, the same answer ephost's plugin report shows). The details are the
// caller's (ReleaseDeviceEpIncompatibilityDetails).
OrtStatus* GetHardwareDeviceEpIncompatibilityDetails(const OrtEnv* env, const char* ep_name, const OrtHardwareDevice* hw,
                                                     OrtDeviceEpIncompatibilityDetails** details) noexcept {
  static const char* const kName = "GetHardwareDeviceEpIncompatibilityDetails";
  if (!details) return invalid(kName, "details (the out pointer) is NULL");
  *details = nullptr;
  if (!env_of(env)) return invalid(kName, "env is not an OrtEnv made by CreateEnv");
  if (!ep_name || !*ep_name) return invalid(kName, "ep_name is NULL or empty");
  if (!checked<OrtHardwareDevice>(hw, Magic::kHardwareDevice))
    return invalid(kName, "hw is not an OrtHardwareDevice (GetHardwareDevices or CreateHardwareDevice make them)");
  try {
    auto made = std::make_unique<OrtDeviceEpIncompatibilityDetails>();
    made->owned = true;
    std::optional<StatusReading> failure;
    const bool found = ort_ep::OrtEpLibrary::with_factory_named(
        ep_name, [&](const ort_ep::OrtEpLibrary& library, size_t index) {
          failure = library.incompatibility_of(index, hw, *made);
        });
    if (!found)
      return invalid(kName, fmt::format("no execution provider named '{}' is registered: the ONNX Runtime plugin EP "
                                        "libraries loaded in this process serve none of that name",
                                        ep_name));
    if (failure)
      return make_status(failure->code, fmt::format("OrtApi::{}: EP '{}' answered {}: {}", kName, ep_name,
                                                    error_code_name(failure->code), failure->message));
    *details = made.release();
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: {}", kName, e.what()));
  }
}

}  // namespace ephost::ort_ep::api
