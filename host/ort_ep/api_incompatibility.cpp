// The OrtDeviceEpIncompatibilityDetails entries (API 24): a factory says why its EP cannot use a hardware
// device (OrtEpApi::DeviceEpIncompatibilityDetails_SetDetails, from the factory's
// GetHardwareDeviceIncompatibilityDetails); the getters read it back. The host makes the object and asks
// (ort_ep/library.cpp) for each host device a factory's GetSupportedDevices passed over.
#include <fmt/format.h>

#include "ort_ep/api_impl.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* table, const char* function, const char* what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("{}::{}: {}", table, function, what));
}

const OrtDeviceEpIncompatibilityDetails* details_of(const OrtDeviceEpIncompatibilityDetails* details) {
  return checked<OrtDeviceEpIncompatibilityDetails>(details, Magic::kIncompatibilityDetails);
}

}  // namespace

OrtStatus* DeviceEpIncompatibilityDetails_GetReasonsBitmask(const OrtDeviceEpIncompatibilityDetails* details,
                                                            uint32_t* reasons_bitmask) noexcept {
  const OrtDeviceEpIncompatibilityDetails* d = details_of(details);
  if (!d || !reasons_bitmask)
    return invalid("OrtApi", "DeviceEpIncompatibilityDetails_GetReasonsBitmask", "bad details or out");
  *reasons_bitmask = d->reasons;
  return nullptr;
}

// The notes live as long as the details; NULL when the factory set none.
OrtStatus* DeviceEpIncompatibilityDetails_GetNotes(const OrtDeviceEpIncompatibilityDetails* details,
                                                   const char** notes) noexcept {
  const OrtDeviceEpIncompatibilityDetails* d = details_of(details);
  if (!d || !notes) return invalid("OrtApi", "DeviceEpIncompatibilityDetails_GetNotes", "bad details or out");
  *notes = d->has_notes ? d->notes.c_str() : nullptr;
  return nullptr;
}

OrtStatus* DeviceEpIncompatibilityDetails_GetErrorCode(const OrtDeviceEpIncompatibilityDetails* details,
                                                       int32_t* error_code) noexcept {
  const OrtDeviceEpIncompatibilityDetails* d = details_of(details);
  if (!d || !error_code) return invalid("OrtApi", "DeviceEpIncompatibilityDetails_GetErrorCode", "bad details or out");
  *error_code = d->error_code;
  return nullptr;
}

// Deletes only details made for the caller; the host's own (handed to a factory) are never freed here.
void ReleaseDeviceEpIncompatibilityDetails(OrtDeviceEpIncompatibilityDetails* input) noexcept {
  const OrtDeviceEpIncompatibilityDetails* d = details_of(input);
  if (d && d->owned) delete input;
}

namespace ep {

OrtStatus* DeviceEpIncompatibilityDetails_SetDetails(OrtDeviceEpIncompatibilityDetails* details,
                                                     uint32_t reasons_bitmask, int32_t error_code,
                                                     const char* notes) noexcept {
  if (!details_of(details))
    return invalid("OrtEpApi", "DeviceEpIncompatibilityDetails_SetDetails",
                   "details is not the OrtDeviceEpIncompatibilityDetails the host handed the factory");
  try {
    details->reasons = reasons_bitmask;
    details->error_code = error_code;
    details->has_notes = notes != nullptr;
    details->notes = notes ? notes : "";
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::DeviceEpIncompatibilityDetails_SetDetails: {}", e.what()));
  }
  return nullptr;
}

}  // namespace ep
}  // namespace ephost::ort_ep::api
