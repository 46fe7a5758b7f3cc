#include "exec/step_context.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/device.h"
#include "core/error.h"
#include "core/tensor_copy.h"

namespace ephost {

const RuntimeValue* StepContext::input(size_t index) const {
  if (index >= step_.inputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': input {} requested, it has {}", step_.name, index, step_.inputs.size());
  const Value* v = step_.inputs[index];
  if (!v) return nullptr;
  // The plan says which value the step reads: the IR value itself, or its copy in the step's location.
  const auto& reads = executor_.plan().step_inputs;
  const int id = step_index_ < reads.size() && index < reads[step_index_].size() ? reads[step_index_][index]
                                                                               : static_cast<int>(v->index);
  const RuntimeValue* value = nullptr;
  if (id == static_cast<int>(v->index)) {
    value = lookup_value(frame_, v);
  } else if (const RuntimeValue* uploaded = executor_.uploaded_initializer(id)) {
    value = uploaded;
  } else {
    const RuntimeValue& copy = frame_.slots[static_cast<size_t>(id)];
    value = copy.is_set() ? &copy : nullptr;
  }
  if (!value)
    fail(EPHOST_RUNTIME_EXCEPTION, "step '{}': input {} '{}' has no value (not produced before use)", step_.name,
         index, v->name);
  return in_step_location(id, value);
}

const RuntimeValue* StepContext::in_step_location(int id, const RuntimeValue* value) const {
  if (!value->is_tensor()) return value;
  const Device* here = memory_device();
  const Tensor& t = value->tensor();
  if (t.device() == here) return value;
  for (auto& [key, copy] : frame_.on_demand)
    if (key == id && copy.tensor().device() == here) return &copy;
  // Not where the plan expected it (a caller's device tensor read by a host step, an outer-scope value
  // on another device): copy it here now, once for the rest of the run.
  Tensor moved = here ? Tensor::allocate_on_device(*here, t.elem_type(), t.shape(), "a copy of input of " + step_.name)
                      : Tensor::allocate(t.elem_type(), t.shape());
  const Device* copier = copying_device(t, moved);
  EphostStream* s = frame_.streams->stream(*copier, "value", executor_.plan().graph.values[static_cast<size_t>(id)].name);
  copy_tensor(t, moved, s, "input of " + step_.name);
  frame_.streams->synchronize(*copier, "copy for a step");
  if (!t.on_device())
    ++frame_.copies->to_device;
  else if (here)
    ++frame_.copies->between_devices;
  else
    ++frame_.copies->to_host;
  frame_.on_demand.emplace_back(id, std::move(moved));
  return &frame_.on_demand.back().second;
}

EphostStream* StepContext::stream() {
  const Device* here = memory_device();
  return here ? frame_.streams->stream(*here, step_.fused ? "fused group" : "node", step_.name) : nullptr;
}

int64_t StepContext::profile_clock_ns() const {
  if (!profiling()) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Profiler::Clock::now() - span_->start()).count();
}

void StepContext::record_span(const EphostProfileSpan& span) {
  if (!profiling()) return;
  // Clipped to the step: from its start at the earliest to now at the latest, so that it nests.
  const Profiler::Clock::time_point now = Profiler::Clock::now();
  const Profiler::Clock::time_point step_start = span_->start();
  auto at = [&](int64_t ns) {
    const auto t = step_start + std::chrono::nanoseconds(std::max<int64_t>(ns, 0));
    return std::min(t, now);
  };
  const int64_t duration = std::max<int64_t>(span.duration_ns, 0);
  const int64_t start_ns = std::max<int64_t>(span.start_ns, 0);
  // Added without overflow: a duration past the step's end is cut at now anyway.
  const int64_t end_ns = duration > INT64_MAX - start_ns ? INT64_MAX : start_ns + duration;
  std::string nodes;
  for (size_t i = 0; i < span.num_nodes; ++i)
    nodes += (i ? "," : "") + std::string(span.nodes[i] ? span.nodes[i] : "");
  Profiler::Args args = {{"op_type", span.op_type ? span.op_type : ""},
                         {"nodes", std::move(nodes)},
                         {"provider", step_.provider->label()},
                         {"step", step_.fused ? step_.name : step_.node->name}};
  span_->profiler()->record("op", span.name, at(start_ns), at(end_ns), std::move(args), span_->thread());
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
  if (!element_type_known(elem_type))
    fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} has unknown element type {}", step_.name, index, elem_type);
  RuntimeValue& slot = output_slot(index);
  if (slot.is_set()) fail(EPHOST_INVALID_ARGUMENT, "step '{}': output {} allocated twice", step_.name, index);
  const Value* v = step_.outputs[index];
  const Device* here = memory_device();
  if (v)
    slot = place_value(executor_, frame_, static_cast<int>(v->index), elem_type, std::move(shape));
  else
    slot = here ? Tensor::allocate_on_device(*here, elem_type, std::move(shape), "an unused output of " + step_.name)
                : Tensor::allocate(elem_type, std::move(shape));
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
  if (!element_type_known(elem_type))
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

const Tensor* StepContext::output_destination(size_t index) const {
  if (index >= step_.outputs.size() || !step_.outputs[index] || !frame_.output_requests) return nullptr;
  const Value* v = step_.outputs[index];
  if (v->index >= executor_.graph().values.size()) return nullptr;
  const int position = executor_.output_position(v->index);
  if (position < 0 || static_cast<size_t>(position) >= frame_.output_requests->size()) return nullptr;
  const Tensor& dst = (*frame_.output_requests)[static_cast<size_t>(position)].destination;
  return dst.empty() ? nullptr : &dst;
}

bool StepContext::output_read_only_by_provider(size_t index) const {
  if (index >= step_.outputs.size() || !step_.outputs[index]) return false;
  const Value* v = step_.outputs[index];
  if (!executor_.read_only_by_producer(v->index)) return false;
  // A subgraph's outputs are read by the control-flow kernel that ran it.
  return executor_.output_position(v->index) < 0 || frame_.parent == nullptr;
}

Tensor StepContext::place_value(const GraphExecutor& executor, Frame& frame, int id, int32_t elem_type,
                                std::vector<int64_t> shape) {
  const GraphPlan& plan = executor.plan();
  const plan::PlanValue& pv = plan.graph.values[static_cast<size_t>(id)];
  const Device* device = plan.devices[static_cast<size_t>(pv.device)];
  const std::shared_ptr<void>& block = frame.blocks[static_cast<size_t>(pv.device)];
  const std::string what = "value '" + pv.name + "'";
  auto make = [&](std::vector<int64_t> s) {
    return device ? Tensor::allocate_on_device(*device, elem_type, std::move(s), what)
                  : Tensor::allocate(elem_type, std::move(s));
  };
  const size_t bytes = byte_count(elem_type, shape);  // checked: a hostile shape is an error, not a wrap
  // A graph output goes straight into the tensor the caller asked for, when it fits.
  if (pv.is_graph_output && frame.output_requests && static_cast<size_t>(id) < executor.graph().values.size()) {
    const int position = executor.output_position(static_cast<size_t>(id));
    if (position >= 0 && static_cast<size_t>(position) < frame.output_requests->size()) {
      const Tensor& dst = (*frame.output_requests)[static_cast<size_t>(position)].destination;
      if (!dst.empty() && dst.device() == device && dst.elem_type() == elem_type && dst.shape() == shape &&
          elem_type != EPHOST_ELEMENT_STRING)
        return dst;
    }
  }
  // Strings own heap storage per element and graph outputs are handed to the caller: both get their own.
  if (pv.is_graph_output || elem_type == EPHOST_ELEMENT_STRING) return make(std::move(shape));
  frame.observed_bytes[static_cast<size_t>(id)] = static_cast<int64_t>(bytes);
  if (frame.pattern && block) {
    const auto& p = *frame.pattern;
    if (static_cast<size_t>(id) < p.offsets.size() && p.offsets[static_cast<size_t>(id)] >= 0 &&
        static_cast<int64_t>(bytes) <= p.sizes[static_cast<size_t>(id)]) {
      const int64_t offset = p.offsets[static_cast<size_t>(id)];
      frame.capacity[static_cast<size_t>(id)] = static_cast<size_t>(p.sizes[static_cast<size_t>(id)]);
      if (device) {
        EphostDeviceBuffer base = static_cast<DeviceAllocation*>(block.get())->buffer();
        base.offset += static_cast<uint64_t>(offset);
        return Tensor::on_device(*device, elem_type, std::move(shape), base, block);
      }
      return Tensor::borrow(elem_type, std::move(shape), static_cast<char*>(block.get()) + offset, block);
    }
  }
  // The allocation plan hands this value the buffer of a value that died before it (kReuse); that
  // buffer is still in the dead value's slot, since release_after never lists a handed-over buffer.
  // Both live in the same place (the plan reuses only within one device).
  const plan::ValuePlan& vp = executor.allocation_plan().values[static_cast<size_t>(id)];
  // An in-place output takes the buffer of its own step's input, which the kernel still reads: that
  // slot is left as it is (the executor empties it after the step, release_after) and never freed here.
  if (vp.kind == plan::AllocKind::kReuse && vp.reuse_of >= 0) {
    RuntimeValue& dead = frame.slots[static_cast<size_t>(vp.reuse_of)];
    size_t capacity = frame.capacity[static_cast<size_t>(vp.reuse_of)];
    bool in_block = false;
    for (const auto& b : frame.blocks) in_block = in_block || (dead.is_tensor() && dead.tensor().holder() == b && b);
    // Never take memory inside a pattern block: after the dead value, the pattern gives its bytes to others.
    if (dead.is_tensor() && dead.tensor().holder() && !in_block && capacity >= bytes &&
        dead.tensor().device() == device) {
      const Tensor& d = dead.tensor();
      std::shared_ptr<void> buffer = d.holder();
      Tensor reused = device ? Tensor::on_device(*device, elem_type, std::move(shape), d.device_buffer(), buffer)
                             : Tensor::borrow(elem_type, std::move(shape), const_cast<void*>(d.data()), buffer);
      if (!vp.in_place) dead = RuntimeValue();
      frame.capacity[static_cast<size_t>(id)] = capacity;
      return reused;
    }
    // Too small (sizes differ at run time): free it now rather than at the end (device memory only
    // once the run has waited for its streams).
    if (!vp.in_place) {
      if (dead.is_tensor() && dead.tensor().on_device()) frame.released_on_device.push_back(std::move(dead));
      dead = RuntimeValue();
    }
  }
  frame.capacity[static_cast<size_t>(id)] = bytes;
  return make(std::move(shape));
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
