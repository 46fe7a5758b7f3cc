#include "exec/step_context.h"

#include "core/error.h"

namespace ephost {

const Tensor* StepContext::input(size_t index) const {
  const Value* v = step_.inputs.at(index);
  if (!v) return nullptr;
  const Tensor* t = lookup_value(frame_, v);
  if (!t)
    fail(EPHOST_RUNTIME_EXCEPTION, "step '{}': input {} '{}' has no value (not produced before use)", step_.name,
         index, v->name);
  return t;
}

Tensor* StepContext::allocated_output(size_t index) {
  if (index >= step_.outputs.size()) return nullptr;
  const Value* v = step_.outputs[index];
  if (!v) return index < scratch_by_index_.size() ? scratch_by_index_[index] : nullptr;
  Tensor& slot = frame_.slots[v->index];
  return slot.empty() ? nullptr : &slot;
}

Tensor& StepContext::allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) {
  if (index >= step_.outputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} requested, it has {}", step_.name, index,
         step_.outputs.size());
  if (element_size(elem_type) == 0)
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} has unknown element type {}", step_.name, index, elem_type);
  if (allocated_output(index))
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} allocated twice", step_.name, index);
  const Value* v = step_.outputs[index];
  if (!v) {
    scratch_.push_back(Tensor::allocate(elem_type, std::move(shape)));
    if (scratch_by_index_.size() <= index) scratch_by_index_.resize(index + 1, nullptr);
    scratch_by_index_[index] = &scratch_.back();
    return scratch_.back();
  }
  Tensor& slot = frame_.slots[v->index];
  slot = place(*v, elem_type, std::move(shape));
  return slot;
}

Tensor StepContext::place(const Value& v, int32_t elem_type, std::vector<int64_t> shape) {
  int64_t count = element_count(shape);
  size_t bytes = static_cast<size_t>(count) * element_size(elem_type);
  // Strings own heap storage per element and graph outputs are handed to the caller: both get their own.
  if (v.is_graph_output || elem_type == EPHOST_ELEMENT_STRING) return Tensor::allocate(elem_type, std::move(shape));
  frame_.observed_bytes[v.index] = static_cast<int64_t>(bytes);
  if (frame_.pattern) {
    const auto& p = *frame_.pattern;
    if (v.index < p.offsets.size() && p.offsets[v.index] >= 0 && static_cast<int64_t>(bytes) <= p.sizes[v.index]) {
      auto* base = static_cast<char*>(frame_.pattern_block.get()) + p.offsets[v.index];
      frame_.capacity[v.index] = static_cast<size_t>(p.sizes[v.index]);
      return Tensor::borrow(elem_type, std::move(shape), base, frame_.pattern_block);
    }
  }
  // The allocation plan hands this value the buffer of a value that died before it (kReuse); that
  // buffer is still in the dead value's slot, since release_after never lists a handed-over buffer.
  const plan::ValuePlan& vp = executor_.allocation_plan().values[v.index];
  if (vp.kind == plan::AllocKind::kReuse && vp.reuse_of >= 0) {
    Tensor& dead = frame_.slots[vp.reuse_of];
    size_t capacity = frame_.capacity[vp.reuse_of];
    // Never take memory inside the pattern block: after the dead value, the pattern gives its bytes to others.
    if (dead.holder() && dead.holder() != frame_.pattern_block && capacity >= bytes) {
      std::shared_ptr<void> buffer = dead.holder();
      void* base = dead.data();
      dead = Tensor();
      frame_.capacity[v.index] = capacity;
      return Tensor::borrow(elem_type, std::move(shape), base, std::move(buffer));
    }
    dead = Tensor();  // too small (sizes differ at run time): free it now rather than at the end
  }
  frame_.capacity[v.index] = bytes;
  return Tensor::allocate(elem_type, std::move(shape));
}

void StepContext::check_outputs_written() const {
  for (size_t i = 0; i < step_.outputs.size(); ++i) {
    const Value* v = step_.outputs[i];
    if (v && frame_.slots[v->index].empty())
      fail(EPHOST_EP_FAIL, "provider '{}' returned success for '{}' without writing output {} '{}'",
           step_.provider->name(), step_.name, i, v->name);
  }
}

std::vector<Tensor> StepContext::run_subgraph(const std::string& attribute, std::vector<Tensor> inputs) {
  if (step_.fused) fail(EPHOST_INVALID_ARGUMENT, "run_subgraph called from fused group '{}'", step_.name);
  const Graph* sub = step_.node->subgraph(attribute);
  if (!sub)
    fail(EPHOST_INVALID_ARGUMENT, "node '{}' ({}) has no graph attribute '{}'", step_.node->name,
         step_.node->op_type, attribute);
  auto it = executor_.executors().find(sub);
  if (it == executor_.executors().end())
    fail(EPHOST_FAIL, "no executor for subgraph '{}' of node '{}'", attribute, step_.node->name);
  const Graph& g = *sub;
  if (inputs.size() != g.inputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "subgraph '{}' of node '{}' takes {} inputs, {} given", attribute,
         step_.node->name, g.inputs.size(), inputs.size());
  std::vector<std::pair<const Value*, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(g.inputs[i], std::move(inputs[i]));
  return it->second->run(feeds, &frame_);
}

}  // namespace ephost
