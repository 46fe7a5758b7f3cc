// The provider options of the OpenCL plugin (session entries ep.opencl.<key>).
//
//   device_types  comma-separated among cpu, gpu, accelerator (or all): the device types this session's
//                 providers run on. Default gpu,accelerator: a CPU device (PoCL) is used only when asked,
//                 so that a machine without a GPU keeps the faster CPU plugin. Where a session does not
//                 give it, the environment variable EPHOST_OPENCL_DEVICE_TYPES (same syntax) does: for
//                 tools that pass no provider options, e.g. the conformance kit on PoCL.
//
// Devices are enumerated once per library, all of them; the option decides per session whether a provider
// on a device claims anything (and whether it loads cached contexts). A provider on a device whose type is
// not enabled claims no node and refuses its contexts (UNSUPPORTED naming device_types), so the work falls
// to the next providers.
#pragma once

#include <set>
#include <string>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

struct ProviderOptions {
  std::set<std::string> device_types = {"gpu", "accelerator"};
  std::string device_types_text = "gpu,accelerator";

  // Throws ephost::sdk::Error (EPHOST_INVALID_ARGUMENT) naming a bad value.
  static ProviderOptions parse(const ephost::sdk::Options& options);
};

}  // namespace ephost_opencl
