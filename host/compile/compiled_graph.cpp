#include "compile/compiled_graph.h"

#include <fmt/format.h>

#include "abi/handles.h"
#include "core/error.h"

namespace ephost {
namespace {

void create_kernel(CompiledStep& step, const PartitionGroup& group) {
  const ProviderInstance& p = *step.provider;
  const Node* node = group.nodes.front();
  step.inputs.assign(node->inputs.begin(), node->inputs.end());
  step.outputs.assign(node->outputs.begin(), node->outputs.end());
  if (!p.plugin().kernel_create || !p.plugin().kernel_compute)
    fail(EPHOST_EP_FAIL, "provider '{}' claimed node '{}' as a single node but has no kernel_create", p.name(),
         node->name);
  std::string what = fmt::format("kernel_create for node '{}' ({})", node->name, node->op_type);
  EphostKernel* kernel = nullptr;
  p.call(what.c_str(), [&] { return p.plugin().kernel_create(p.handle(), to_handle(node), &kernel); });
  step.kernel = kernel;
}

void compile_group(CompiledStep& step, const PartitionGroup& group) {
  const ProviderInstance& p = *step.provider;
  step.fused = true;
  step.view = group.view.get();
  step.inputs.assign(step.view->inputs.begin(), step.view->inputs.end());
  step.outputs.assign(step.view->outputs.begin(), step.view->outputs.end());
  EphostComputeInfo info{};
  info.struct_size = sizeof(EphostComputeInfo);
  if (group.preloaded) {
    // An EPContext node: the provider loaded its cached context before partitioning.
    info = group.preloaded->info;
    group.preloaded->owned = false;
  } else {
    if (!p.plugin().compile)
      fail(EPHOST_EP_FAIL, "provider '{}' claimed fused group '{}' but has no compile", p.name(), group.name);
    std::string what = fmt::format("compile of fused group '{}' ({} nodes)", group.name, group.nodes.size());
    p.call(what.c_str(),
           [&] { return p.plugin().compile(p.handle(), to_handle(step.view), group.name.c_str(), &info); });
    if (!info.compute) fail(EPHOST_EP_FAIL, "provider '{}' {} returned no compute function", p.name(), what);
  }
  step.compute = info;
  if (info.create_state) {
    void* state = nullptr;
    std::string what = "create_state for " + group.name;
    p.call(what.c_str(), [&] { return info.create_state(info.user, &state); });
    step.state = state;
  }
}

void release(const CompiledStep& step) noexcept {
  try {
    PluginCallScope scope(step.provider->name().c_str(), step.provider->library_path(), "release of a kernel or state");
    if (step.fused) {
      if (step.compute.release_state && step.state) step.compute.release_state(step.compute.user, step.state);
      if (step.compute.release) step.compute.release(step.compute.user);
    } else if (step.kernel && step.provider->plugin().kernel_release) {
      step.provider->plugin().kernel_release(step.kernel);
    }
  } catch (...) {
    // A plugin's exception never leaves a destructor.
  }
}

}  // namespace

CompiledGraph::~CompiledGraph() {
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) release(**it);
}

std::unique_ptr<CompiledGraph> compile_graph(const Graph& graph, GraphPartition partition,
                                             const std::vector<ProviderInstance*>& providers,
                                             const std::function<void()>& step_done) {
  auto compiled = std::make_unique<CompiledGraph>(graph, std::move(partition));
  for (const PartitionGroup& group : compiled->partition_.groups) {
    auto step = std::make_unique<CompiledStep>();
    step->provider = providers.at(group.provider);
    step->name = group.name;
    step->node = group.nodes.front();
    // Registered before the plugin call, so that a failure releases what this step got already
    // (a compute unit whose create_state failed) along with the earlier steps.
    CompiledStep& s = *step;
    compiled->steps_.push_back(std::move(step));
    if (group.fused)
      compile_group(s, group);
    else
      create_kernel(s, group);
    if (step_done) step_done();
  }
  return compiled;
}

}  // namespace ephost
