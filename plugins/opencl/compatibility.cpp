#include "compatibility.h"

#include <optional>

#include "ephost/sdk/semver.hpp"

#include "codegen.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::ContextJudgement;
using ephost::sdk::parse_semver;
using ephost::sdk::Semver;

ContextJudgement judge_plugin_version(const std::string& theirs, const std::string& ours) {
  if (theirs == ours) return ContextJudgement::optimal();
  const std::optional<Semver> t = parse_semver(theirs), o = parse_semver(ours);
  const std::string versions = "plugin_version " + theirs + " != " + ours;
  if (!t || !o) return ContextJudgement::unsupported(versions + ": not MAJOR.MINOR.PATCH");
  if (t->major != o->major) return ContextJudgement::unsupported(versions + ": made by another major version of the plugin");
  if (*t > *o)
    return ContextJudgement::unsupported(versions + ": made by a newer plugin");
  if (t->minor < o->minor)
    return ContextJudgement::prefer_recompile(versions + ": made by an older minor version; it runs, and a compile would use "
                                              "this plugin's kernels");
  return ContextJudgement::optimal();
}

std::optional<ContextJudgement> differs(const char* field, const std::string& theirs, const std::string& ours) {
  if (theirs == ours) return std::nullopt;
  return ContextJudgement::unsupported(std::string(field) + " '" + theirs + "' != '" + ours +
                                       "' (this device): the binary was built for another device or driver");
}

std::string count_text(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

BuildIdentity identity_of(const DeviceIdentity& device, const std::string& plugin_version, uint64_t source_hash) {
  BuildIdentity id;
  id.plugin_version = plugin_version;
  id.platform = device.platform;
  id.device_name = device.name;
  id.device_version = device.device_version;
  id.driver_version = device.driver_version;
  id.opencl_c_version = device.opencl_c_version;
  id.build_options = build_options(device);
  id.source_hash = source_hash;
  return id;
}

ContextJudgement judge_context_blob(const uint8_t* blob, size_t size, const ContextNodeFacts& node, const Judge& self,
                                    DecodedContext* decoded) {
  if (!self.disabled_reason.empty()) return ContextJudgement::unsupported(self.disabled_reason);
  if (blob == nullptr) size = 0;
  const Inspection inspection = inspect_context(blob, size);
  if (inspection.result == Inspection::Result::kNotOurs) return ContextJudgement::not_mine(inspection.reason);
  if (inspection.result == Inspection::Result::kDamaged) return ContextJudgement::unsupported(inspection.reason);

  if (node.has_hardware_architecture && node.hardware_architecture != self.device.hardware_architecture())
    return ContextJudgement::unsupported("hardware_architecture '" + node.hardware_architecture + "' != '" +
                                         self.device.hardware_architecture() + "' (this device)");
  if (node.has_sdk_version && node.sdk_version != self.device.opencl_version())
    return ContextJudgement::unsupported("ep_sdk_version '" + node.sdk_version + "' != '" + self.device.opencl_version() +
                                         "' (this device's OpenCL version)");
  BuildIdentity id;
  try {
    id = decode_identity(blob, size);
  } catch (const ephost::sdk::Error& e) {
    return ContextJudgement::unsupported(std::string("identity: ") + e.what());
  }
  const BuildIdentity ours = identity_of(self.device, self.plugin_version, 0);
  for (auto check : {differs("platform", id.platform, ours.platform), differs("device_name", id.device_name, ours.device_name),
                     differs("device_version", id.device_version, ours.device_version),
                     differs("driver_version", id.driver_version, ours.driver_version),
                     differs("opencl_c_version", id.opencl_c_version, ours.opencl_c_version)})
    if (check) return *check;
  ContextJudgement verdict = judge_plugin_version(id.plugin_version, self.plugin_version);
  if (verdict.verdict == EPHOST_CONTEXT_UNSUPPORTED) return verdict;

  DecodedContext d;
  try {
    d = decode_context(blob, size);
  } catch (const ephost::sdk::Error& e) {
    return ContextJudgement::unsupported(std::string("program: ") + e.what());
  }
  if (node.num_inputs != d.program.inputs.size() || node.num_outputs != d.program.outputs.size())
    return ContextJudgement::unsupported("EPContext node '" + node.name + "' has " + count_text(node.num_inputs, "input") + " and " +
                                         count_text(node.num_outputs, "output") + ", its program " +
                                         count_text(d.program.inputs.size(), "input") + " and " +
                                         count_text(d.program.outputs.size(), "output"));
  for (size_t i = 0; i < node.input_names.size() && i < d.program.inputs.size(); ++i) {
    const std::string& program_name = d.program.values[static_cast<size_t>(d.program.inputs[i])].name;
    if (node.input_names[i] != program_name)
      return ContextJudgement::unsupported("EPContext node '" + node.name + "' input " + std::to_string(i) + " is '" +
                                           node.input_names[i] + "', its program reads '" + program_name +
                                           "': the context belongs to another partition or model");
  }
  for (size_t i = 0; i < node.output_names.size() && i < d.program.outputs.size(); ++i) {
    const std::string& program_name = d.program.values[static_cast<size_t>(d.program.outputs[i])].name;
    if (node.output_names[i] != program_name)
      return ContextJudgement::unsupported("EPContext node '" + node.name + "' output " + std::to_string(i) + " is '" +
                                           node.output_names[i] + "', its program writes '" + program_name +
                                           "': the context belongs to another partition or model");
  }
  std::string source;
  try {
    source = generate_source(d.program);
  } catch (const ephost::sdk::Error& e) {
    return ContextJudgement::unsupported(std::string("program: ") + e.what());
  }
  if (source_hash(source) != id.source_hash)
    return ContextJudgement::unsupported("source_hash: this plugin generates other kernels for the program than the binary "
                                         "holds (made by plugin " + id.plugin_version + ")");
  if (verdict.verdict == EPHOST_CONTEXT_OPTIMAL && id.build_options != ours.build_options)
    verdict = ContextJudgement::prefer_recompile("build_options '" + id.build_options + "' != '" + ours.build_options + "'");
  if (decoded) *decoded = std::move(d);
  return verdict;
}

}  // namespace ephost_opencl
