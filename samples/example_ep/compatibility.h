// Whether a cached program (an EPContext blob) can be loaded by this build of the plugin.
//
// Policy, checked in this order; the first field that fails decides and is named in the reason:
//   magic                   not ours                -> NOT_MINE (another plugin may know the bytes)
//   format_version, size,   damaged                 -> UNSUPPORTED
//   checksum
//   ep_sdk_version          other MAJOR             -> UNSUPPORTED (programs are not portable across majors)
//                           same MAJOR, other MINOR -> PREFER_RECOMPILE (it runs; a recompile uses this
//                           or PATCH                   SDK's compiler), unless a later check refuses
//   hardware_architecture   differs                 -> UNSUPPORTED
//   EPContext attributes    ep_sdk_version / hardware_architecture differ from the program's header,
//                           or the node's input/output count differs from the program's -> UNSUPPORTED
//   program                 malformed               -> UNSUPPORTED
#pragma once

#include <cstdint>
#include <string>

#include "ephost/sdk/plugin.hpp"
#include "program_format.h"

namespace example_ep {

// What the judge needs from the EPContext node (read by the provider, so that this file does not
// depend on the host).
struct ContextNodeFacts {
  std::string name;
  bool has_sdk_version = false;
  std::string sdk_version;
  bool has_hardware_architecture = false;
  std::string hardware_architecture;
  size_t num_inputs = 0;
  size_t num_outputs = 0;
};

// Judges `blob` for loading by the build `self`. Never reads outside [blob, blob + size). When the
// verdict is OPTIMAL or PREFER_RECOMPILE and `program` is not null, the decoded program is stored there.
ephost::sdk::ContextJudgement judge(const uint8_t* blob, size_t size, const ContextNodeFacts& node,
                                    const BuildIdentity& self, Program* program = nullptr);

}  // namespace example_ep
