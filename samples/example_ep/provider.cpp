#include "provider.h"

#include <chrono>
#include <thread>

#include "capability.h"
#include "compiler.h"
#include "interpreter/runner.h"

namespace example_ep {
namespace {

using ephost::sdk::fail;

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

ContextNodeFacts facts_of(const ephost::sdk::Node& node) {
  ContextNodeFacts f;
  f.name = node.name();
  f.has_sdk_version = node.has_attr("ep_sdk_version");
  f.sdk_version = node.attr_string("ep_sdk_version", "");
  f.has_hardware_architecture = node.has_attr("hardware_architecture");
  f.hardware_architecture = node.attr_string("hardware_architecture", "");
  f.num_inputs = node.num_inputs();
  f.num_outputs = node.num_outputs();
  return f;
}

// A runnable program as the host sees a compiled group. `bindings[i]` is the kernel-context input
// that feeds program input i: compile's context also carries the group's constant initializers
// (which the program holds as weights), a loaded context's does not.
class ProgramGroup : public ephost::sdk::CompiledGroup {
 public:
  ProgramGroup(Program program, std::vector<size_t> bindings)
      : runner_(std::move(program)), bindings_(std::move(bindings)) {}

  void compute(void*, ephost::sdk::KernelContext& ctx) override {
    std::vector<ConstTensor> inputs;
    inputs.reserve(bindings_.size());
    for (size_t i = 0; i < bindings_.size(); ++i) {
      ephost::sdk::Tensor t = ctx.input(bindings_[i]);
      if (!t.present() || t.elem_type() != EPHOST_ELEMENT_FLOAT)
        fail(EPHOST_INVALID_ARGUMENT, "example EP: input '" + runner_.program().input_names[i] + "' is not a float tensor");
      inputs.push_back(ConstTensor{t.data<float>(), t.shape()});
    }
    if (ctx.num_outputs() != runner_.program().outputs.size())
      fail(EPHOST_INVALID_ARGUMENT, "example EP: the host expects " + std::to_string(ctx.num_outputs()) +
                                        " outputs, the program makes " + std::to_string(runner_.program().outputs.size()));
    runner_.run(inputs, [&](size_t index, const Shape& shape) { return ctx.output<float>(index, shape); });
  }

 private:
  Runner runner_;
  std::vector<size_t> bindings_;
};

// The one way programs become runnable, for a fresh compile and for a cached context alike: judge the
// bytes against this build, decode them, and refuse with the judge's reason.
Program read_program(const uint8_t* blob, size_t size, const ContextNodeFacts& facts, const BuildIdentity& self) {
  Program program;
  ephost::sdk::ContextJudgement j = judge(blob, size, facts, self, &program);
  if (j.verdict != EPHOST_CONTEXT_OPTIMAL && j.verdict != EPHOST_CONTEXT_PREFER_RECOMPILE)
    fail(EPHOST_INVALID_GRAPH, "example EP cannot load context '" + facts.name + "': " + j.reason);
  return program;
}

}  // namespace

ProviderOptions ProviderOptions::parse(const ephost::sdk::Options& options) {
  ProviderOptions parsed;
  parsed.claim = supported_op_types();
  for (const auto& [key, value] : options) {
    if (key == "claim") {
      parsed.claim.clear();
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        const std::string op = trimmed(value.substr(start, comma - start));
        if (!op.empty() && !supported_op_types().count(op))
          fail(EPHOST_INVALID_ARGUMENT, "ep.example.claim: the example EP does not run '" + op + "'; it runs " +
                                            joined(supported_op_types()));
        if (!op.empty()) parsed.claim.insert(op);
        start = comma + 1;
      }
    } else if (key == "compile_delay_ms") {
      try {
        parsed.compile_delay_ms = std::stoi(value);
      } catch (...) {
        fail(EPHOST_INVALID_ARGUMENT, "ep.example.compile_delay_ms must be a number of milliseconds, found '" + value + "'");
      }
    } else if (key != "intra_op_num_threads") {
      ephost::sdk::log(EPHOST_LOG_WARNING, "example EP ignores the unknown option ep.example." + key);
    }
  }
  return parsed;
}

ExampleProvider::ExampleProvider(ProviderOptions options, BuildIdentity self)
    : options_(std::move(options)), self_(std::move(self)) {}

void ExampleProvider::get_capability(const ephost::sdk::Graph& graph, ephost::sdk::Capability& capability) {
  for (const auto& group : find_groups(graph, options_.claim)) capability.add_fused_group(group);
}

std::unique_ptr<ephost::sdk::CompiledGroup> ExampleProvider::compile(const ephost::sdk::Graph& group,
                                                                     const std::string& fused_name) {
  if (options_.compile_delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.compile_delay_ms));
  for (const ephost::sdk::Node& node : group.nodes()) {
    const std::string why = unsupported_reason(node);
    if (!why.empty())
      fail(EPHOST_EP_FAIL, "example EP cannot compile " + node.op_type() + " node '" + node.name() + "': " + why);
  }
  auto encoded = std::make_shared<const EncodedProgram>(encode(compile_group(group), self_));
  std::vector<size_t> bindings;
  for (size_t i = 0; i < group.num_inputs(); ++i)
    if (!group.input(i).is_constant()) bindings.push_back(i);
  ContextNodeFacts facts;
  facts.name = fused_name;
  facts.num_inputs = bindings.size();
  facts.num_outputs = group.num_outputs();
  // Run what the bytes say, not the in-memory program: a cached context then runs exactly this.
  Program program = read_program(encoded->bytes.data(), encoded->bytes.size(), facts, self_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compiled_[fused_name] = std::move(encoded);
  }
  return std::make_unique<ProgramGroup>(std::move(program), std::move(bindings));
}

void ExampleProvider::emit_context(const std::string& fused_name, ephost::sdk::ContextSink& sink) {
  std::shared_ptr<const EncodedProgram> encoded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = compiled_.find(fused_name);
    if (it == compiled_.end()) fail(EPHOST_INVALID_ARGUMENT, "example EP compiled no group named '" + fused_name + "'");
    encoded = it->second;
  }
  sink.set_attribute("ep_sdk_version", self_.sdk_version);
  sink.set_attribute("hardware_architecture", self_.hardware_architecture);
  sink.set_attribute("notes", "example EP program, format " + std::to_string(kFormatVersion) + ", " +
                                  std::to_string(encoded->weight_sizes.size()) + " weights");
  // Header and op list first, then each weight on its own, so that identical weights are stored once.
  const uint8_t* bytes = encoded->bytes.data();
  sink.append(bytes, encoded->weights_offset);
  size_t offset = encoded->weights_offset;
  for (size_t size : encoded->weight_sizes) {
    sink.append(bytes + offset, size);
    offset += size;
  }
}

ephost::sdk::ContextJudgement ExampleProvider::judge_context(const ephost::sdk::Node& context_node, const uint8_t* blob,
                                                             size_t size) {
  return judge(blob, size, facts_of(context_node), self_);
}

std::unique_ptr<ephost::sdk::CompiledGroup> ExampleProvider::load_context(const ephost::sdk::Node& context_node,
                                                                          const uint8_t* blob, size_t size) {
  Program program = read_program(blob, size, facts_of(context_node), self_);
  std::vector<size_t> bindings(program.input_names.size());
  for (size_t i = 0; i < bindings.size(); ++i) bindings[i] = i;
  return std::make_unique<ProgramGroup>(std::move(program), std::move(bindings));
}

}  // namespace example_ep
