// Weightless EPContext models (ONNX Runtime API 29) as ONNX Runtime asks them of a plugin EP: the session
// wants one mode (ep.<name>.enable_weightless_mode: EXTERNAL_ONLY, the initializers in external data are not
// copied into the EP's context; ALL, none is), the EP device's metadata must list it before the EP is created,
// the EP reads it from its session options (with the deprecated "ep.enable_weightless" switch for EPs that
// know only that), and before it compiles, its OrtEp::GetWeightlessSupport must include it. How the EP leaves
// the weights out is its own business (it reads them back through SessionOptionsGetWeightlessSourceModelBuffer).
#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "core/log.h"
#include "ort_ep/plugin_call.h"
#include "provider/ort_ep_provider.h"

namespace ephost {
namespace {

const char* mode_name(int mode) {
  switch (mode) {
    case OrtWeightlessSupport_NONE: return "NONE";
    case OrtWeightlessSupport_EXTERNAL_ONLY: return "EXTERNAL_ONLY";
    case OrtWeightlessSupport_ALL: return "ALL";
    case OrtWeightlessSupport_ALL_OR_EXTERNAL_ONLY: return "ALL_OR_EXTERNAL_ONLY";
  }
  return "an unknown value";
}

// Whether `support` (an EP's capability) includes the one `mode` a session asks for.
bool includes(int support, OrtWeightlessSupport mode) {
  return support == mode || (support == OrtWeightlessSupport_ALL_OR_EXTERNAL_ONLY && mode != OrtWeightlessSupport_NONE);
}

// The capability an EP device's metadata states: "weightless_supported_modes" (1.31), else
// "weightless_support" (1.29), in words or as the number; none stated is NONE, an unknown word -1.
int metadata_support(const OrtKeyValuePairs& metadata) {
  const std::string* v = metadata.find("weightless_supported_modes");
  if (!v) v = metadata.find("weightless_support");
  if (!v) return OrtWeightlessSupport_NONE;
  if (*v == "none" || *v == "0") return OrtWeightlessSupport_NONE;
  if (*v == "external_only" || *v == "1") return OrtWeightlessSupport_EXTERNAL_ONLY;
  if (*v == "all" || *v == "2") return OrtWeightlessSupport_ALL;
  if (*v == "all_or_external_only" || *v == "3") return OrtWeightlessSupport_ALL_OR_EXTERNAL_ONLY;
  return -1;
}

}  // namespace

void OrtEpProvider::take_weightless_mode(const std::string& value) {
  if (value != "0" && value != "1" && value != "2")
    fail(EPHOST_INVALID_ARGUMENT, "provider '{}': option enable_weightless_mode is '{}'; it takes \"0\" (none), \"1\" "
         "(EXTERNAL_ONLY: external initializers) or \"2\" (ALL)", name(), value);
  weightless_mode_ = static_cast<OrtWeightlessSupport>(value[0] - '0');
  session_options_.config.set("ep.enable_weightless_mode", value);
  session_options_.config.set("ep.enable_weightless", weightless_mode_ == OrtWeightlessSupport_NONE ? "0" : "1");
  if (weightless_mode_ == OrtWeightlessSupport_NONE) return;
  const int stated = metadata_support(ep_device_->ep_metadata);
  if (!includes(stated, weightless_mode_))
    fail(EPHOST_EP_FAIL, "provider '{}': weightless mode {} was asked for (enable_weightless_mode={}), and its device's "
         "metadata (weightless_supported_modes / weightless_support) says it supports {}", name(),
         mode_name(weightless_mode_), value, stated < 0 ? "a value ephost does not know" : mode_name(stated));
}

void OrtEpProvider::check_weightless_support() const {
  if (weightless_mode_ == OrtWeightlessSupport_NONE) return;
  if (!ep_has(29)) {
    log_info(fmt::format("provider '{}': its OrtEp is built for API {}, before GetWeightlessSupport (29): the EP handles "
                         "weightless mode {} itself", name(), ep_->ort_version_supported, mode_name(weightless_mode_)));
    return;
  }
  if (!ep_->GetWeightlessSupport)
    fail(EPHOST_NOT_IMPLEMENTED, "provider '{}': weightless mode {} was asked for, and its OrtEp (API {}) has no "
         "GetWeightlessSupport", name(), mode_name(weightless_mode_), ep_->ort_version_supported);
  OrtWeightlessSupport support = OrtWeightlessSupport_NONE;
  const OrtEp* ep = ep_;
  if (auto failure = ort_ep::call_plugin(name().c_str(), library_path(), "OrtEp::GetWeightlessSupport",
                                         [&] { return ep->GetWeightlessSupport(ep, &support); }))
    fail(EPHOST_EP_FAIL, "provider '{}' GetWeightlessSupport: {} ({})", name(), failure->message,
         ort_ep::error_code_name(failure->code));
  const int stated = metadata_support(ep_device_->ep_metadata);
  if (stated != static_cast<int>(support))
    log_warning(fmt::format("provider '{}': GetWeightlessSupport answered {}, and its device's metadata says {} (an EP "
                            "bug: the two should agree)", name(), mode_name(support),
                            stated < 0 ? "a value ephost does not know" : mode_name(stated)));
  if (!includes(support, weightless_mode_))
    fail(EPHOST_EP_FAIL, "provider '{}': weightless mode {} was asked for (enable_weightless_mode), and its "
         "GetWeightlessSupport answered {} ({})", name(), mode_name(weightless_mode_), mode_name(support),
         static_cast<int>(support));
}

}  // namespace ephost
