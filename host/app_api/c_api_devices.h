// The application API's devices, device tensors and bound runs (version 3).
#pragma once

#include "ephost/ephost_c_api.h"

namespace ephost {

// Sets the version 3 members of `api`.
void fill_device_api(EphostApi& api);

}  // namespace ephost
