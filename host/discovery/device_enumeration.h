// Plugin ABI 3: asking a plugin which devices it drives (device_count, device_describe) and checking
// that a device plugin offers what devices need (memory, copies, a provider per device).
#pragma once

#include <string>

#include "discovery/plugin_record.h"

namespace ephost {

// For a plugin that negotiated ABI 3 and fills device_count: records its devices in record.devices.
// Throws PluginSkipped naming the problem (a missing required device function, a failing call,
// invalid device info). Plugins without devices (device_count NULL, or ABI 1/2) are left untouched.
void enumerate_devices(PluginRecord& record);

// What a device plugin's table lacks, or "" (exposed for tests).
std::string device_table_problem(const EphostPlugin& table);

}  // namespace ephost
