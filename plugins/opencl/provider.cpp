#include "provider.h"

#include <chrono>

#include "capability.h"
#include "cl_runtime.h"
#include "codegen.h"
#include "device_program.h"
#include "fusion.h"
#include "lowering.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::fail;

ContextNodeFacts facts_of(const ephost::sdk::Node& node) {
  ContextNodeFacts f;
  f.name = node.name();
  f.has_hardware_architecture = node.has_attr("hardware_architecture");
  f.hardware_architecture = node.attr_string("hardware_architecture", "");
  f.has_sdk_version = node.has_attr("ep_sdk_version");
  f.sdk_version = node.attr_string("ep_sdk_version", "");
  f.num_inputs = node.num_inputs();
  f.num_outputs = node.num_outputs();
  for (size_t i = 0; i < f.num_inputs; ++i) f.input_names.push_back(node.has_input(i) ? node.input(i).name() : "");
  for (size_t i = 0; i < f.num_outputs; ++i) f.output_names.push_back(node.has_output(i) ? node.output(i).name() : "");
  return f;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// A program as the host sees a compiled group. `bindings[i]` is the kernel-context input that feeds program
// input i: a compile's context also carries the group's constant initializers (which the program holds as
// weights), a loaded context's does not.
class ProgramGroup : public ephost::sdk::CompiledGroup {
 public:
  ProgramGroup(std::unique_ptr<DeviceProgram> program, std::vector<size_t> bindings)
      : program_(std::move(program)), bindings_(std::move(bindings)) {}
  void compute(void*, ephost::sdk::KernelContext& ctx) override { program_->run(ctx, bindings_); }

 private:
  std::unique_ptr<DeviceProgram> program_;
  std::vector<size_t> bindings_;
};

// The one way a program becomes runnable, for a fresh compile and a cached context alike: judge the bytes
// against this device, decode them, create the program from the binary.
std::unique_ptr<DeviceProgram> read_program(const uint8_t* blob, size_t size, const ContextNodeFacts& facts, const Judge& self,
                                            uint32_t device) {
  DecodedContext decoded;
  const ephost::sdk::ContextJudgement j = judge_context_blob(blob, size, facts, self, &decoded);
  if (j.verdict != EPHOST_CONTEXT_OPTIMAL && j.verdict != EPHOST_CONTEXT_PREFER_RECOMPILE)
    fail(EPHOST_INVALID_GRAPH, "opencl cannot load context '" + facts.name + "': " + j.reason);
  auto program = std::make_shared<const Program>(std::move(decoded.program));
  return std::make_unique<DeviceProgram>(device, std::move(program), decoded.binary, "group '" + facts.name + "'");
}

}  // namespace

const std::string& plugin_version() {
  static const std::string version = EPHOST_OPENCL_PLUGIN_VERSION;
  return version;
}

OpenclProvider::OpenclProvider(const ProviderOptions& options, uint32_t device) : device_(device) {
  self_.plugin_version = plugin_version();
  const ClRuntime& runtime = ClRuntime::instance();
  if (device >= runtime.devices().size()) {
    // A session that lists opencl on a machine without OpenCL still works: this provider takes nothing,
    // and the work goes to the next providers.
    self_.disabled_reason = "no OpenCL device " + std::to_string(device) + " on this machine: " +
                            (runtime.devices().empty() ? runtime.enumeration_note()
                                                       : "it has " + std::to_string(runtime.devices().size()) +
                                                             " (clinfo -l lists them)");
    return;
  }
  const ClDevice& d = runtime.device(device);
  self_.device = d.identity();
  const std::string type = d.identity().type_word();
  if (!options.device_types.count(type))
    self_.disabled_reason = "device_types: " + d.label() + " is a " + type + " device and this session's ep.opencl.device_types is '" +
                            options.device_types_text + "' (add " + type + " to use it)";
}

void OpenclProvider::get_capability(const ephost::sdk::Graph& graph, ephost::sdk::Capability& capability) {
  if (!self_.disabled_reason.empty()) {
    ephost::sdk::log(EPHOST_LOG_INFO, "opencl claims nothing: " + self_.disabled_reason);
    return;
  }
  for (const auto& group : find_groups(graph)) capability.add_fused_group(group);
}

std::unique_ptr<ephost::sdk::CompiledGroup> OpenclProvider::compile(const ephost::sdk::Graph& group, const std::string& fused_name) {
  if (!self_.disabled_reason.empty()) fail(EPHOST_EP_FAIL, "opencl cannot compile '" + fused_name + "': " + self_.disabled_reason);
  const auto start = std::chrono::steady_clock::now();
  Program program;
  Lowering lowering(program);
  std::vector<size_t> bindings;
  for (size_t i = 0; i < group.num_inputs(); ++i) {
    const ephost::sdk::Value v = group.input(i);
    if (v.is_constant()) continue;
    program.inputs.push_back(lowering.add_input(v));
    bindings.push_back(i);
  }
  for (size_t i = 0; i < group.num_outputs(); ++i) lowering.keep(group.output(i).name());
  for (const ephost::sdk::Node& node : group.nodes()) {
    try {
      lowering.lower(node);
    } catch (const ephost::sdk::Error& e) {
      fail(EPHOST_EP_FAIL, "opencl cannot compile " + node.op_type() + " node '" + node.name() + "': " + e.what());
    }
  }
  for (size_t i = 0; i < group.num_outputs(); ++i) program.outputs.push_back(lowering.find(group.output(i).name()));
  lowering.finish();
  program.work_group_size = self_.device.type & CL_DEVICE_TYPE_CPU ? 32 : 64;
  plan_kernels(program);
  validate(program);
  const std::string source = generate_source(program);
  const std::string what = "group '" + fused_name + "'";
  const auto build_start = std::chrono::steady_clock::now();
  const std::vector<uint8_t> binary = build_binary(device_, program, source, what);
  const double build_ms = milliseconds_since(build_start);
  auto encoded = std::make_shared<const EncodedContext>(encode_context(program, identity_of(self_.device, self_.plugin_version,
                                                                                            source_hash(source)),
                                                                       binary));
  ContextNodeFacts facts;
  facts.name = fused_name;
  facts.num_inputs = program.inputs.size();
  facts.num_outputs = program.outputs.size();
  // Run what the bytes say: a cached context then runs exactly what this compile runs.
  std::unique_ptr<DeviceProgram> runnable = read_program(encoded->bytes.data(), encoded->bytes.size(), facts, self_, device_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compiled_[fused_name] = encoded;
  }
  ephost::sdk::log(EPHOST_LOG_INFO, "opencl compiled " + what + ": " + std::to_string(group.num_nodes()) + " nodes, " +
                                        std::to_string(program.kernels.size()) + " kernels, build " + std::to_string(build_ms) +
                                        " ms, total " + std::to_string(milliseconds_since(start)) + " ms");
  return std::make_unique<ProgramGroup>(std::move(runnable), std::move(bindings));
}

void OpenclProvider::emit_context(const std::string& fused_name, ephost::sdk::ContextSink& sink) {
  std::shared_ptr<const EncodedContext> encoded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = compiled_.find(fused_name);
    if (it == compiled_.end()) fail(EPHOST_INVALID_ARGUMENT, "opencl compiled no group named '" + fused_name + "'");
    encoded = it->second;
  }
  sink.set_attribute("ep_sdk_version", self_.device.opencl_version());
  sink.set_attribute("hardware_architecture", self_.device.hardware_architecture());
  sink.set_attribute("notes", "OpenCL program binary for '" + self_.device.name + "', driver " + self_.device.driver_version +
                                  ", context format " + std::to_string(kContextFormatVersion) + ", " +
                                  std::to_string(encoded->weight_sizes.size()) + " weights");
  const uint8_t* bytes = encoded->bytes.data();
  sink.append(bytes, encoded->head_size);
  size_t offset = encoded->head_size;
  for (size_t size : encoded->weight_sizes) {
    sink.append(bytes + offset, size);
    offset += size;
  }
}

ephost::sdk::ContextJudgement OpenclProvider::judge_context(const ephost::sdk::Node& context_node, const uint8_t* blob, size_t size) {
  return judge_context_blob(blob, size, facts_of(context_node), self_, nullptr);
}

std::unique_ptr<ephost::sdk::CompiledGroup> OpenclProvider::load_context(const ephost::sdk::Node& context_node, const uint8_t* blob,
                                                                         size_t size) {
  const ContextNodeFacts facts = facts_of(context_node);
  std::unique_ptr<DeviceProgram> program = read_program(blob, size, facts, self_, device_);
  std::vector<size_t> bindings(program->program().inputs.size());
  for (size_t i = 0; i < bindings.size(); ++i) bindings[i] = i;
  return std::make_unique<ProgramGroup>(std::move(program), std::move(bindings));
}

}  // namespace ephost_opencl
