// The verdict on a cached context: can this provider's device run the binary it holds?
//
// Checked in order; the first failure decides, and its reason names the field:
//   device_types                 the device's type is not enabled for this session: UNSUPPORTED
//   magic                        not ours: NOT_MINE
//   size, format_version, checksum                                  UNSUPPORTED ("truncated blob", ...)
//   hardware_architecture, ep_sdk_version (the node's attributes) differ from this device: UNSUPPORTED
//   platform, device_name, device_version (HSTR), driver_version, opencl_c_version
//                                differ from this device: UNSUPPORTED (the binary was built for another one)
//   plugin_version               another major version, or a newer plugin made it: UNSUPPORTED;
//                                an older minor version made it: PREFER_RECOMPILE (it runs, a compile would
//                                use this plugin's kernels); only the patch differs: OPTIMAL
//   the program                  malformed (a bug that kept a valid checksum): UNSUPPORTED
//   the node's inputs and outputs  differ from the program's in count or name (a swapped context): UNSUPPORTED
//   source_hash                  this plugin generates other kernels for the program: UNSUPPORTED
//   build_options                differ from this plugin's: PREFER_RECOMPILE
// A corrupt or truncated blob is refused here, before clCreateProgramWithBinary sees it (drivers accept
// flipped bytes: PoCL does).
#pragma once

#include <string>
#include <vector>

#include "cl_runtime.h"
#include "context_format.h"
#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

// What the EPContext node says about itself.
struct ContextNodeFacts {
  std::string name;
  bool has_hardware_architecture = false;
  std::string hardware_architecture;
  bool has_sdk_version = false;
  std::string sdk_version;
  size_t num_inputs = 0, num_outputs = 0;
  // The names of the node's inputs and outputs, when known: a context swapped in from another partition or
  // model reads and writes other values, and is refused even when its counts match.
  std::vector<std::string> input_names, output_names;
};

// The provider judging: its device, whether its type is enabled, the plugin's version.
struct Judge {
  DeviceIdentity device;
  std::string plugin_version;
  std::string disabled_reason;  // empty when the device's type is enabled
};

// Judges `blob`; when it is usable and `decoded` is given, fills it.
ephost::sdk::ContextJudgement judge_context_blob(const uint8_t* blob, size_t size, const ContextNodeFacts& node, const Judge& self,
                                                 DecodedContext* decoded);

// The identity a context built now on `device` records.
BuildIdentity identity_of(const DeviceIdentity& device, const std::string& plugin_version, uint64_t source_hash);

}  // namespace ephost_opencl
