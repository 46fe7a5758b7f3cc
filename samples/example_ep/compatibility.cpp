#include "compatibility.h"

#include <optional>

#include "ephost/sdk/semver.hpp"

namespace example_ep {
namespace {

using ephost::sdk::ContextJudgement;
using ephost::sdk::parse_semver;
using ephost::sdk::Semver;

// The SDK version rule; an empty reason means the versions are equal.
ContextJudgement judge_sdk_version(const std::string& theirs, const std::string& ours) {
  if (theirs == ours) return ContextJudgement::optimal();
  std::optional<Semver> t = parse_semver(theirs), o = parse_semver(ours);
  if (!t) return ContextJudgement::unsupported("ep_sdk_version '" + theirs + "' is not MAJOR.MINOR.PATCH");
  if (!o || t->major != o->major)
    return ContextJudgement::unsupported("ep_sdk_version " + theirs + " != " + ours +
                                         ": compiled by another major version of the SDK");
  return ContextJudgement::prefer_recompile("ep_sdk_version " + theirs + " != " + ours +
                                            ": same major version, so it runs; a recompile would use this SDK");
}

std::string count_text(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

ContextJudgement judge(const uint8_t* blob, size_t size, const ContextNodeFacts& node, const BuildIdentity& self,
                       Program* program) {
  if (blob == nullptr) size = 0;
  Inspection inspection = inspect(blob, size);
  switch (inspection.result) {
    case Inspection::Result::kNotOurs: return ContextJudgement::not_mine(inspection.reason);
    case Inspection::Result::kDamaged: return ContextJudgement::unsupported(inspection.reason);
    case Inspection::Result::kIntact: break;
  }
  const BuildIdentity& built_by = inspection.header.built_by;
  ContextJudgement verdict = judge_sdk_version(built_by.sdk_version, self.sdk_version);
  if (verdict.verdict == EPHOST_CONTEXT_UNSUPPORTED) return verdict;
  if (built_by.hardware_architecture != self.hardware_architecture)
    return ContextJudgement::unsupported("hardware_architecture " + built_by.hardware_architecture +
                                         " != " + self.hardware_architecture);
  // The node's attributes are what tools show the user: they must describe the blob they point at.
  if (node.has_sdk_version && node.sdk_version != built_by.sdk_version)
    return ContextJudgement::unsupported("ep_sdk_version attribute " + node.sdk_version +
                                         " != the program's " + built_by.sdk_version);
  if (node.has_hardware_architecture && node.hardware_architecture != built_by.hardware_architecture)
    return ContextJudgement::unsupported("hardware_architecture attribute " + node.hardware_architecture +
                                         " != the program's " + built_by.hardware_architecture);
  Program decoded;
  try {
    decoded = decode(blob, size, inspection.header);
  } catch (const ephost::sdk::Error& e) {
    return ContextJudgement::unsupported(std::string("program: ") + e.what());
  }
  if (node.num_inputs != decoded.input_names.size() || node.num_outputs != decoded.outputs.size())
    return ContextJudgement::unsupported(
        "EPContext node '" + node.name + "' has " + count_text(node.num_inputs, "input") + " and " +
        count_text(node.num_outputs, "output") + ", its program " + count_text(decoded.input_names.size(), "input") +
        " and " + count_text(decoded.outputs.size(), "output"));
  if (program != nullptr) *program = std::move(decoded);
  return verdict;
}

}  // namespace example_ep
