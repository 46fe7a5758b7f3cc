#include "core/plugin_call.h"

#include <fmt/format.h>

#include "core/status.h"

namespace ephost {

PluginCallFailure failure_from_status(EphostStatus* status) {
  // Read only when it is a status the host created: a plugin may return anything.
  if (!is_live_status(status))
    return PluginCallFailure{PluginCallFailure::Kind::kNotAStatus, EPHOST_EP_FAIL, fmt::format("{}", fmt::ptr(status))};
  PluginCallFailure failure{PluginCallFailure::Kind::kStatus, status->code, status->message};
  release_status(status);
  return failure;
}

}  // namespace ephost
