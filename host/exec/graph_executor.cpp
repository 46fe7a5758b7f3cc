#include "exec/graph_executor.h"

#include <deque>

#include "abi/handles.h"
#include "core/error.h"
#include "core/log.h"
#include "exec/step_context.h"  // lookup_value, StepContext

namespace ephost {
GraphExecutor::GraphExecutor(std::unique_ptr<CompiledGraph> compiled, GraphPlan plan, const ExecOptions& options,
                             const ExecutorMap& executors)
    : compiled_(std::move(compiled)),
      graph_(compiled_->graph()),
      plan_(std::move(plan)),
      options_(options),
      executors_(executors) {
  initializer_index_.assign(graph_.values.size(), -1);
  for (const Value* v : graph_.initializers) {
    initializer_index_[v->index] = static_cast<int32_t>(initializer_values_.size());
    initializer_values_.emplace_back(*v->initializer);
  }
}

GraphExecutor::~GraphExecutor() = default;

size_t GraphExecutor::memory_patterns_recorded() const { return patterns_.size(); }

std::vector<RuntimeValue> GraphExecutor::run(const std::vector<std::pair<const Value*, RuntimeValue>>& feeds,
                                             const Frame* parent) const {
  Frame frame;
  frame.graph = &graph_;
  frame.executor = this;
  frame.parent = parent;
  size_t n = graph_.values.size();
  frame.slots.resize(n);
  frame.capacity.assign(n, 0);
  frame.observed_bytes.assign(n, -1);

  std::vector<std::vector<int64_t>> input_shapes;
  bool only_tensors = true;
  for (const auto& [value, fed] : feeds) {
    frame.slots[value->index] = fed;
    if (fed.is_tensor())
      input_shapes.push_back(fed.tensor().shape());
    else
      only_tensors = false;
  }
  const bool use_patterns = options_.enable_mem_pattern && only_tensors;
  std::string signature;
  if (use_patterns) {
    signature = plan::MemoryPatternCache::signature(input_shapes);
    frame.pattern = patterns_.find(signature);
    if (frame.pattern && frame.pattern->peak_bytes > 0)
      frame.pattern_block = blocks_.take(static_cast<size_t>(frame.pattern->peak_bytes));
  }

  const auto& steps = compiled_->steps();
  for (size_t pos = 0; pos < plan_.execution.order.size(); ++pos) {
    const CompiledStep& step = *steps[plan_.execution.order[pos]];
    StepContext context(*this, frame, step);
    const ProviderInstance& p = *step.provider;
    if (step.fused) {
      p.call_described([&] { return fmt::format("compute of fused group '{}'", step.name); },
                       [&] { return step.compute.compute(step.compute.user, step.state, &context); });
    } else {
      p.call_described([&] { return fmt::format("kernel for node '{}' ({})", step.node->name, step.node->op_type); },
                       [&] { return p.plugin().kernel_compute(step.kernel, &context); });
    }
    context.check_outputs_written();
    for (int v : plan_.allocation.release_after[pos]) frame.slots[v] = RuntimeValue();
  }

  std::vector<RuntimeValue> outputs;
  outputs.reserve(graph_.outputs.size());
  std::vector<const void*> handed_out;
  for (const Value* v : graph_.outputs) {
    const RuntimeValue* value = lookup_value(frame, v);
    if (!value) fail(EPHOST_INVALID_GRAPH, "graph '{}' output '{}' was not produced", graph_.name, v->name);
    if (!value->is_tensor()) {
      outputs.push_back(*value);  // sequences own their elements; none owns nothing
      continue;
    }
    const Tensor& t = value->tensor();
    // Outputs must own their memory: copy when the tensor is an input, an initializer, lives in the
    // pattern block, or is the same buffer as an earlier output.
    const RuntimeValue& slot = frame.slots[v->index];
    bool owned = v->producer && slot.is_tensor() && slot.tensor().holder() != nullptr &&
                 slot.tensor().holder() != frame.pattern_block;
    for (const void* d : handed_out) owned = owned && d != t.data();
    outputs.emplace_back(owned ? t : t.clone());
    handed_out.push_back(outputs.back().tensor().data());
  }

  if (use_patterns && !frame.pattern) {
    auto pattern = std::make_shared<plan::MemoryPattern>(
        plan::make_memory_pattern(plan_.graph, plan_.allocation, frame.observed_bytes));
    patterns_.insert(signature, std::move(pattern));
  }
  return outputs;
}

const RuntimeValue* lookup_value(const Frame& frame, const Value* v) {
  const RuntimeValue& slot = frame.slots[v->index];
  if (slot.is_set()) return &slot;
  if (v->initializer) return &frame.executor->initializer_value(*v);
  for (const Frame* f = frame.parent; f; f = f->parent) {
    const Value* outer = f->graph->find(v->name);
    if (!outer) continue;
    const RuntimeValue& s = f->slots[outer->index];
    if (s.is_set()) return &s;
    if (outer->initializer) return &f->executor->initializer_value(*outer);
  }
  return nullptr;
}

}  // namespace ephost
