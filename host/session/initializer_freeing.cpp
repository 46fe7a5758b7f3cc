#include "session/initializer_freeing.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/log.h"
#include "model/initializer_release.h"
#include "graph/precomputed_value.h"

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

void FreeingWhileCompiling::initializers_behind(const Value* v, std::unordered_set<const Value*>& out,
                                                std::vector<const Value*>& computing, int depth) {
  if (!v || depth > 64) return;
  if (v->is_constant_initializer()) {
    out.insert(v);
    for (const Value* p : computing) needed_by_[v].push_back(p);
  } else if (v->precomputed && !v->precomputed->computed() && v->producer) {
    computing.push_back(v);
    for (const Value* in : v->producer->inputs) initializers_behind(in, out, computing, depth + 1);
    computing.pop_back();
  }
}

bool FreeingWhileCompiling::still_needed(const Value* v) const {
  auto found = needed_by_.find(v);
  if (found == needed_by_.end()) return false;
  for (const Value* p : found->second)
    if (!p->precomputed->computed()) return true;
  return false;
}

FreeingWhileCompiling::FreeingWhileCompiling(const Graph& main, const std::vector<GraphPartition>& partitions)
    : main_(main), release_(main.model ? main.model->initializer_release.get() : nullptr) {
  if (!release_) return;
  const GraphPartition* mine = nullptr;
  for (const GraphPartition& p : partitions)
    if (p.graph == &main) mine = &p;
  if (!mine) return;
  std::unordered_set<const Value*> kept;  // read by a subgraph, or a graph output: never freed here
  for (const PartitionGroup& group : mine->groups) {
    GroupReads& reads = groups_[group.nodes.front()];
    std::unordered_set<const Value*> needed;
    const std::unordered_set<const Node*> members(group.nodes.begin(), group.nodes.end());
    for (const Node* node : group.nodes) {
      for (const Value* v : node->inputs) {
        if (v && v->is_constant_initializer()) reads.direct.insert(v);
        // A precomputed value made inside the group (an int8 group's dequantized weight) is no input
        // of its step: the group reads the producer's inputs, which this loop meets as its own.
        if (!v || (v->precomputed && members.count(v->producer))) continue;
        std::vector<const Value*> computing;
        initializers_behind(v, needed, computing);
      }
      if (!node->subgraphs.empty()) {  // its bodies read values as outer-scope values
        for (const Value* v : node->inputs) kept.insert(v);
        for (const Value* v : node->implicit_inputs) kept.insert(v);
      }
    }
    reads.waits.assign(needed.begin(), needed.end());
    for (const Value* v : needed) ++steps_left_[v];
  }
  for (const Value* v : main.initializers)
    if (v->is_graph_output) kept.insert(v);
  for (const Value* v : kept) steps_left_.erase(v);
}

void FreeingWhileCompiling::step_compiled(const Graph& graph, const CompiledStep& step) {
  if (!release_ || &graph != &main_) return;
  auto group = groups_.find(step.node);
  if (group == groups_.end()) return;
  const InitializerReader reader{step.provider ? step.provider->initializer_reader() : nullptr,
                                 step.fused ? static_cast<const void*>(step.view) : step.node};
  for (const Value* v : group->second.direct) readers_[v].push_back(reader);
  for (const Value* v : group->second.waits) {
    auto left = steps_left_.find(v);
    if (left == steps_left_.end() || left->second == 0 || --left->second > 0) continue;
    // Its last reader is made: free it now if every step reading it packed it. A step that read a
    // precomputed value made from it was never handed it, so it does not block, once the value holds its
    // own bytes; one its steps did not compute yet (the executors or a run will) keeps it till the plan
    // is made, when free_done_initializers judges it again.
    if (still_needed(v)) continue;
    const size_t bytes = release_->release_if_done(v->initializer.get(), readers_[v]);
    freed_bytes_ += bytes;
    freed_count_ += bytes > 0 ? 1 : 0;
  }
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
