#include "session/initializer_freeing.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/log.h"
#include "model/initializer_release.h"

namespace ephost {
namespace {

// Per constant initializer of `main`: the steps that read it, each named as its provider named it
// when it was made (the fused group's view in compile, the node in kernel_create).
std::unordered_map<const Value*, std::vector<InitializerReader>> step_readers(const GraphExecutor& main) {
  std::unordered_map<const Value*, std::vector<InitializerReader>> readers;
  for (const auto& step : main.compiled().steps()) {
    const InitializerReader reader{step->provider ? step->provider->initializer_reader() : nullptr,
                                   step->fused ? static_cast<const void*>(step->view) : step->node};
    for (const Value* in : step->inputs)
      if (in && in->is_constant_initializer()) readers[in].push_back(reader);
  }
  return readers;
}

}  // namespace

void track_initializers_from_file(Model& model, const Graph& main, const LoadOptions& options,
                                  const std::vector<std::string>& added) {
  if (model.path.empty()) return;
  auto release = std::make_shared<InitializerRelease>(model.path, options);
  for (const Value* v : main.initializers)
    if (std::find(added.begin(), added.end(), v->name) == added.end()) release->add_from_file(v->name, v->initializer);
  model.initializer_release = std::move(release);
}

size_t free_done_initializers(const Graph& main, SessionPlan& plan) {
  InitializerRelease* release = main.model ? main.model->initializer_release.get() : nullptr;
  auto found = plan.executors.find(&main);
  if (!release || found == plan.executors.end() || !found->second) return 0;
  auto readers = step_readers(*found->second);
  size_t freed = 0, count = 0;
  for (const Value* v : main.initializers) {
    if (!v->is_constant_initializer() || v->is_graph_output) continue;
    std::vector<InitializerReader> r = readers[v];
    for (const Node* consumer : v->consumers)
      if (!consumer->subgraphs.empty()) r.push_back({});  // a body reads it as an outer-scope value
    const size_t bytes = release->release_if_done(v->initializer.get(), r);
    freed += bytes;
    count += bytes > 0 ? 1 : 0;
  }
  if (freed == 0) return 0;
  for (auto& [graph, executor] : plan.executors)
    if (executor) executor->forget_freed_initializers();
  log_info(fmt::format("freed {} initializer(s), {:.1f} MB, that every provider reading them had packed", count,
                       static_cast<double>(freed) / (1024.0 * 1024.0)));
  return freed;
}

}  // namespace ephost
