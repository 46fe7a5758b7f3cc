#include "compile/compiled_graph.h"

namespace ephost {
namespace {

void create_kernel(CompiledStep& step, const PartitionGroup& group) {
  const Node* node = group.nodes.front();
  step.inputs.assign(node->inputs.begin(), node->inputs.end());
  step.outputs.assign(node->outputs.begin(), node->outputs.end());
  step.unit = step.provider->create_kernel(*node);
}

void compile_group(CompiledStep& step, PartitionGroup& group) {
  const Provider& p = *step.provider;
  step.fused = true;
  step.view = group.view.get();
  step.inputs.assign(step.view->inputs.begin(), step.view->inputs.end());
  step.outputs.assign(step.view->outputs.begin(), step.view->outputs.end());
  // An EPContext node: the provider loaded its cached context before partitioning; the step takes it over.
  step.unit = group.preloaded ? std::move(group.preloaded) : p.compile(*step.view, group.name);
  p.create_state(*step.unit);
}

}  // namespace

CompiledGraph::~CompiledGraph() {
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)->unit.reset();
}

std::unique_ptr<CompiledGraph> compile_graph(const Graph& graph, GraphPartition partition,
                                             const std::vector<Provider*>& providers,
                                             const std::function<void(const CompiledStep&)>& step_done) {
  auto compiled = std::make_unique<CompiledGraph>(graph, std::move(partition));
  for (PartitionGroup& group : compiled->partition_.groups) {
    auto step = std::make_unique<CompiledStep>();
    step->provider = group.runner ? group.runner : providers.at(group.provider);
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
    if (step_done) step_done(s);
  }
  return compiled;
}

}  // namespace ephost
