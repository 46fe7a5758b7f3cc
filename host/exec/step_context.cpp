#include "exec/step_context.h"

#include "core/error.h"

namespace ephost {

const RuntimeValue* StepContext::input(size_t index) const {
  if (index >= step_.inputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': input {} requested, it has {}", step_.name, index, step_.inputs.size());
  const Value* v = step_.inputs[index];
  if (!v) return nullptr;
  const RuntimeValue* value = lookup_value(frame_, v);
  if (!value)
    fail(EPHOST_RUNTIME_EXCEPTION, "step '{}': input {} '{}' has no value (not produced before use)", step_.name,
         index, v->name);
  return value;
}

void StepContext::check_output_index(size_t index) const {
  if (index >= step_.outputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} requested, it has {}", step_.name, index,
         step_.outputs.size());
}

RuntimeValue& StepContext::output_slot(size_t index) {
  const Value* v = step_.outputs[index];
  if (v) return frame_.slots[v->index];
  if (scratch_by_index_.size() <= index) scratch_by_index_.resize(index + 1, nullptr);
  if (!scratch_by_index_[index]) {
    scratch_.emplace_back();
    scratch_by_index_[index] = &scratch_.back();
  }
  return *scratch_by_index_[index];
}

Tensor* StepContext::allocated_output(size_t index) {
  if (index >= step_.outputs.size()) return nullptr;
  RuntimeValue& slot = output_slot(index);
  return slot.is_tensor() ? &slot.tensor() : nullptr;
}

Tensor& StepContext::allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) {
  check_output_index(index);
  if (element_size(elem_type) == 0)
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} has unknown element type {}", step_.name, index, elem_type);
  RuntimeValue& slot = output_slot(index);
  if (slot.is_set()) fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} allocated twice", step_.name, index);
  const Value* v = step_.outputs[index];
  slot = v ? place(*v, elem_type, std::move(shape)) : Tensor::allocate(elem_type, std::move(shape));
  return slot.tensor();
}

void StepContext::set_output(size_t index, RuntimeValue value) {
  check_output_index(index);
  if (!value.is_set()) fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} set to nothing", step_.name, index);
  RuntimeValue& slot = output_slot(index);
  if (slot.is_set()) fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} set twice", step_.name, index);
  // A tensor placed here is shared with whoever handed it over: capacity 0 keeps the allocation plan
  // from handing its buffer to a later value (observed_bytes stays -1: it is not in the pattern).
  if (const Value* v = step_.outputs[index]) frame_.capacity[v->index] = 0;
  slot = std::move(value);
}

void StepContext::begin_sequence_output(size_t index, int32_t elem_type, size_t length) {
  check_output_index(index);
  if (element_size(elem_type) == 0)
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': sequence output {} has unknown element type {}", step_.name, index,
         elem_type);
  auto seq = std::make_shared<TensorSequence>();
  seq->elem_type = elem_type;
  seq->elements.resize(length);
  set_output(index, RuntimeValue::sequence(seq));
  open_sequences_.emplace_back(index, std::move(seq));
}

TensorSequence& StepContext::sequence_output(size_t index) {
  for (auto& [i, seq] : open_sequences_)
    if (i == index) return *seq;
  fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} is not a sequence begun with kernel_output_sequence", step_.name,
       index);
}

Tensor StepContext::place(const Value& v, int32_t elem_type, std::vector<int64_t> shape) {
  size_t bytes = byte_count(elem_type, shape);
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
    RuntimeValue& dead = frame_.slots[vp.reuse_of];
    size_t capacity = frame_.capacity[vp.reuse_of];
    // Never take memory inside the pattern block: after the dead value, the pattern gives its bytes to others.
    if (dead.is_tensor() && dead.tensor().holder() && dead.tensor().holder() != frame_.pattern_block &&
        capacity >= bytes) {
      std::shared_ptr<void> buffer = dead.tensor().holder();
      void* base = dead.tensor().data();
      dead = RuntimeValue();
      frame_.capacity[v.index] = capacity;
      return Tensor::borrow(elem_type, std::move(shape), base, std::move(buffer));
    }
    dead = RuntimeValue();  // too small (sizes differ at run time): free it now rather than at the end
  }
  frame_.capacity[v.index] = bytes;
  return Tensor::allocate(elem_type, std::move(shape));
}

void StepContext::check_outputs_written() const {
  for (size_t i = 0; i < step_.outputs.size(); ++i) {
    const Value* v = step_.outputs[i];
    if (v && !frame_.slots[v->index].is_set())
      fail(EPHOST_EP_FAIL, "provider '{}' returned success for '{}' without writing output {} '{}'",
           step_.provider->name(), step_.name, i, v->name);
  }
  for (const auto& [i, seq] : open_sequences_) {
    for (size_t k = 0; k < seq->elements.size(); ++k) {
      if (seq->elements[k].empty())
        fail(EPHOST_EP_FAIL, "provider '{}' returned success for '{}' without writing element {} of sequence output {}",
             step_.provider->name(), step_.name, k, i);
    }
  }
}

std::vector<RuntimeValue> StepContext::run_subgraph(const std::string& attribute, std::vector<RuntimeValue> inputs) {
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
  std::vector<std::pair<const Value*, RuntimeValue>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(g.inputs[i], std::move(inputs[i]));
  return it->second->run(feeds, &frame_);
}

}  // namespace ephost
