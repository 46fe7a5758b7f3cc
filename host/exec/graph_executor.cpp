#include "exec/graph_executor.h"

#include <deque>
#include <optional>

#include "plugin_abi/handles.h"
#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "core/tensor_copy.h"
#include "exec/step_context.h"  // lookup_value, StepContext
#include "model/initializer_release.h"

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
    // A freed initializer (every step reading it is done with it: model/initializer_release.h) is
    // bound to nothing (bound_initializer reads it back should a step read it all the same). One that
    // may be freed or read back on another thread meanwhile is copied under that lock.
    const InitializerRelease* release = initializer_release_of(*v);
    Tensor held = release ? release->copy_if_held(*v->initializer) : *v->initializer;
    initializer_values_.emplace_back(held.empty() && v->initializer->data_released() ? RuntimeValue()
                                                                                     : RuntimeValue(std::move(held)));
  }
  output_position_.assign(graph_.values.size(), -1);
  for (size_t i = 0; i < graph_.outputs.size(); ++i)
    if (output_position_[graph_.outputs[i]->index] < 0) output_position_[graph_.outputs[i]->index] = static_cast<int>(i);
  find_values_read_only_by_producer();
  // Constant initializers that device steps read go to their devices once, now.
  uploaded_.resize(plan_.graph.values.size());
  for (const PlannedCopy& c : plan_.copies) {
    if (c.step >= 0) continue;
    const Value& v = *graph_.values[static_cast<size_t>(c.source)];
    const Device& device = *plan_.devices[static_cast<size_t>(c.device)];
    v.initializer->ensure_data();
    const Tensor& host = *v.initializer;
    Tensor on_device = Tensor::allocate_on_device(device, host.elem_type(), host.shape(), "initializer '" + v.name + "'");
    copy_tensor(host, on_device, nullptr, "initializer '" + v.name + "'");
    uploaded_[static_cast<size_t>(c.target)] = std::move(on_device);
  }
}

GraphExecutor::~GraphExecutor() = default;

void GraphExecutor::find_values_read_only_by_producer() {
  read_only_by_producer_.assign(graph_.values.size(), 0);
  const auto& groups = partition().groups;
  if (groups.size() != steps().size()) return;  // unknown: nothing qualifies
  // The provider of each node's step (single nodes and fused groups alike).
  std::vector<const Provider*> provider_of(graph_.nodes.size(), nullptr);
  for (size_t i = 0; i < groups.size(); ++i)
    for (const Node* n : groups[i].nodes)
      if (n->index < provider_of.size()) provider_of[n->index] = steps()[i]->provider;
  for (const auto& step : steps())
    for (const Value* v : step->outputs) {
      if (!v || v->index >= read_only_by_producer_.size()) continue;
      bool only = true;
      for (const Node* reader : v->consumers)
        only = only && reader->index < provider_of.size() && provider_of[reader->index] == step->provider;
      read_only_by_producer_[v->index] = only ? 1 : 0;
    }
}

void GraphExecutor::forget_freed_initializers() {
  for (const Value* v : graph_.initializers)
    if (v->initializer->data_released()) initializer_values_[static_cast<size_t>(initializer_index_[v->index])] = {};
}

const RuntimeValue& GraphExecutor::bound_initializer(const Value& v) const {
  const RuntimeValue& value = initializer_value(v);
  if (value.is_set()) return value;
  const InitializerRelease* release = initializer_release_of(v);
  if (!release)
    fail(EPHOST_FAIL, "initializer '{}' has no bytes (internal error: freed without a model file to read it from)",
         v.name);
  std::lock_guard<std::mutex> lock(read_back_mutex_);
  std::unique_ptr<RuntimeValue>& slot = read_back_[&v];
  if (slot) return *slot;
  log_warning(fmt::format(
      "a step read initializer '{}' after every provider reading it had said it was done with it "
      "(value_initializer_done), so the host had freed it: a provider broke its word (a plugin bug; tell its "
      "vendor). The host reads it back from the model file and keeps it for this plan",
      v.name));
  Tensor held;
  for (int attempt = 0; attempt < 2 && held.empty(); ++attempt) {  // once more should it be freed meanwhile
    v.initializer->ensure_data();  // a model file that changed throws here, naming the initializer
    held = release->copy_if_held(*v.initializer);
  }
  if (held.empty()) fail(EPHOST_FAIL, "initializer '{}' could not be read back from the model file", v.name);
  slot = std::make_unique<RuntimeValue>(std::move(held));
  return *slot;
}

size_t GraphExecutor::memory_patterns_recorded() const { return patterns_.size(); }

const RuntimeValue* GraphExecutor::uploaded_initializer(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= uploaded_.size() || !uploaded_[static_cast<size_t>(id)].is_set())
    return nullptr;
  return &uploaded_[static_cast<size_t>(id)];
}

std::vector<RuntimeValue> GraphExecutor::run(const std::vector<std::pair<const Value*, RuntimeValue>>& feeds,
                                             const Frame* parent, const OutputRequests& output_requests,
                                             RunCopyStats* stats, const RunLimits* limits) const {
  Frame frame;
  frame.graph = &graph_;
  frame.executor = this;
  frame.parent = parent;
  const size_t n = plan_.graph.values.size();
  frame.slots.resize(n);
  frame.capacity.assign(n, 0);
  frame.observed_bytes.assign(n, -1);
  frame.blocks.resize(plan_.devices.size());
  if (!output_requests.empty()) frame.output_requests = &output_requests;

  // A top-level run owns its streams and copy counts; a subgraph's run shares its parent's. Declared
  // after the frame: the streams are synchronized before the frame frees any device memory.
  RunCopyStats local_stats;
  std::unique_ptr<RunStreams> own_streams;
  if (parent) {
    frame.streams = parent->streams;
    frame.copies = parent->copies;
    frame.limits = parent->limits;
  } else {
    frame.limits = limits;
    own_streams = std::make_unique<RunStreams>(streams_);
    frame.streams = own_streams.get();
    frame.copies = stats ? stats : &local_stats;
  }

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
    if (frame.pattern) {
      for (const plan::MemoryBlock& b : frame.pattern->blocks) {
        if (b.bytes <= 0 || static_cast<size_t>(b.device) >= plan_.devices.size()) continue;
        const Device* device = plan_.devices[static_cast<size_t>(b.device)];
        // A device block is named by the values it holds, should allocating it fail.
        auto describe = [&] {
          std::string values;
          for (size_t v = 0; v < frame.pattern->offsets.size() && v < plan_.graph.values.size(); ++v)
            if (frame.pattern->offsets[v] >= 0 && plan_.graph.values[v].device == b.device)
              values += (values.empty() ? "'" : ", '") + plan_.graph.values[v].name + "'";
          return fmt::format("the memory-pattern block of graph '{}' (values {})", graph_.name, values);
        };
        frame.blocks[static_cast<size_t>(b.device)] =
            device ? std::static_pointer_cast<void>(device_blocks_.take(*device, static_cast<size_t>(b.bytes), describe))
                   : blocks_.take(static_cast<size_t>(b.bytes));
      }
    }
  }

  std::vector<RuntimeValue> outputs;
  try {
    outputs = run_steps(frame);
  } catch (...) {
    // A plugin that saw the run should stop (kernel_run_check) returns early with some error, and a
    // subgraph's stop reaches here through the plugin that ran it: the run fails with the stop's own
    // status (cancelled, deadline exceeded), whatever the provider made of it.
    if (frame.limits) frame.limits->check();
    throw;
  }

  if (use_patterns && !frame.pattern) {
    auto pattern = std::make_shared<plan::MemoryPattern>(
        plan::make_memory_pattern(plan_.graph, plan_.allocation, frame.observed_bytes));
    patterns_.insert(signature, std::move(pattern));
  }
  // Every output is ready for the caller; what device memory the run used may be freed.
  if (own_streams) own_streams->synchronize_all("end of run");
  return outputs;
}

std::vector<RuntimeValue> GraphExecutor::run_steps(Frame& frame) const {
  const auto& steps = compiled_->steps();
  // Checked once per graph run too, so that a subgraph without steps (a Loop body that only passes
  // values through) still stops its loop.
  if (frame.limits) frame.limits->check();
  for (size_t pos = 0; pos < plan_.execution.order.size(); ++pos) {
    const size_t id = static_cast<size_t>(plan_.execution.order[pos]);
    if (frame.limits && pos > 0) frame.limits->check();
    if (id >= steps.size()) {
      const PlannedCopy& copy = plan_.copies[static_cast<size_t>(plan_.copy_of_step[id])];
      std::optional<Profiler::Span> span;
      if (options_.profiler) span.emplace(profile_copy(copy));
      run_copy(frame, copy);
    } else {
      const CompiledStep& step = *steps[id];
      std::optional<Profiler::Span> span;
      if (options_.profiler) span.emplace(profile_step(frame, step, id));
      StepContext context(*this, frame, step, id, span ? &*span : nullptr);
      step.provider->compute(*step.unit, &context);
      context.check_outputs_written();
    }
    for (int v : plan_.allocation.release_after[pos]) {
      RuntimeValue& slot = frame.slots[static_cast<size_t>(v)];
      // Work enqueued on a stream may still read a device buffer: it is freed once the run has waited.
      if (slot.is_tensor() && slot.tensor().on_device()) frame.released_on_device.push_back(std::move(slot));
      slot = RuntimeValue();
    }
  }

  // A provider that noticed the stop may have returned early with success: its outputs are incomplete.
  if (frame.limits) frame.limits->check();
  std::vector<RuntimeValue> outputs;
  outputs.reserve(graph_.outputs.size());
  static const OutputRequest kHost;
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    const OutputRequest& request =
        frame.output_requests && i < frame.output_requests->size() ? (*frame.output_requests)[i] : kHost;
    outputs.push_back(hand_out(frame, *graph_.outputs[i], request));
  }
  // Outputs must not share a buffer: the caller owns each one.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_tensor()) continue;
    const Tensor& t = outputs[i].tensor();
    for (size_t j = 0; j < i; ++j) {
      if (!outputs[j].is_tensor()) continue;
      const Tensor& u = outputs[j].tensor();
      const bool same = t.on_device() ? (u.on_device() && u.device_buffer().handle == t.device_buffer().handle &&
                                         u.device_buffer().offset == t.device_buffer().offset)
                                      : (!u.on_device() && u.data() == t.data() && t.data() != nullptr);
      if (same) {
        outputs[i] = t.clone();
        break;
      }
    }
  }
  return outputs;
}

Profiler::Span GraphExecutor::profile_step(const Frame& frame, const CompiledStep& step, size_t index) const {
  Profiler::Args args = {{"provider", step.provider->label()},
                         {"op_type", step.fused ? "fused group" : step.node->op_type},
                         {"graph", graph_.name}};
  if (step.fused) args.emplace_back("nodes", std::to_string(step.view->nodes.size()));
  std::string shapes;
  const auto& reads = plan_.step_inputs[index];
  for (size_t i = 0; i < reads.size(); ++i) {
    const Value* v = step.inputs[i];
    if (v && v->initializer && v->initializer->data_released()) {  // freed: its shape is known all the same
      shapes += (i ? ";" : "") + shape_to_string(v->initializer->shape());
      continue;
    }
    const RuntimeValue* value = v ? lookup_value(frame, v) : nullptr;
    if (reads[i] != static_cast<int>(v ? v->index : 0) && reads[i] >= 0 &&
        frame.slots[static_cast<size_t>(reads[i])].is_set())
      value = &frame.slots[static_cast<size_t>(reads[i])];
    shapes += (i ? ";" : "") + (value && value->is_tensor() ? shape_to_string(value->tensor().shape())
                                                             : value ? value->describe() : std::string("-"));
  }
  args.emplace_back("input_shapes", shapes);
  return Profiler::Span(options_.profiler, "node", step.fused ? step.name : step.node->name, std::move(args));
}

Profiler::Span GraphExecutor::profile_copy(const PlannedCopy& copy) const {
  const plan::PlanValue& from = plan_.graph.values[static_cast<size_t>(copy.source)];
  auto where = [&](int32_t id) {
    const Device* d = plan_.devices[static_cast<size_t>(id)];
    return d ? d->label() : std::string("host");
  };
  return Profiler::Span(options_.profiler, "copy", "copy " + from.name,
                        {{"value", from.name}, {"from", where(from.device)}, {"to", where(copy.device)}});
}

RuntimeValue GraphExecutor::hand_out(Frame& frame, const Value& v, const OutputRequest& request) const {
  const RuntimeValue* value = lookup_value(frame, &v);
  if (!value) fail(EPHOST_INVALID_GRAPH, "graph '{}' output '{}' was not produced", graph_.name, v.name);
  if (!value->is_tensor()) return *value;  // sequences own their elements; none owns nothing
  const Tensor& t = value->tensor();
  const Device* location = request.location;
  if (!request.destination.empty()) {
    const Tensor& dst = request.destination;
    // Placed there by the step that made it: nothing to do.
    const bool same_buffer = t.on_device() ? (dst.on_device() && dst.device_buffer().handle == t.device_buffer().handle &&
                                              dst.device_buffer().offset == t.device_buffer().offset)
                                           : (!dst.on_device() && dst.data() == t.data());
    if (same_buffer) return dst;
    const Device* copier = copying_device(t, dst);
    EphostStream* stream = copier ? frame.streams->stream(*copier, "output", v.name) : nullptr;
    copy_tensor(t, dst, stream, "output '" + v.name + "'");
    if (copier) frame.streams->synchronize(*copier, "output");
    if (t.on_device() != dst.on_device() || t.device() != dst.device())
      ++(!t.on_device() ? frame.copies->to_device : !dst.on_device() ? frame.copies->to_host
                                                                       : frame.copies->between_devices);
    return dst;
  }
  // The tensor is the caller's only when nothing else holds its buffer: a value made by a step, not an
  // input or initializer, and not inside a memory-pattern block (graph outputs are placed outside).
  const RuntimeValue& slot = frame.slots[v.index];
  bool owned = v.producer && slot.is_tensor() && slot.tensor().holder() != nullptr;
  for (const auto& block : frame.blocks) owned = owned && slot.tensor().holder() != block;
  if (t.device() == location) return owned ? t : t.clone();
  // Another location: copy there (device to host for a default output).
  std::optional<Profiler::Span> span;  // the span's name and arguments are built only when profiling
  if (options_.profiler)
    span.emplace(options_.profiler, "copy", "copy output " + v.name,
                 Profiler::Args{{"value", v.name},
                                {"from", t.device() ? t.device()->label() : "host"},
                                {"to", location ? location->label() : "host"}});
  Tensor out = location ? Tensor::allocate_on_device(*location, t.elem_type(), t.shape(), "output '" + v.name + "'")
                        : host_output_from_device(frame, t);
  const Device* copier = copying_device(t, out);
  EphostStream* stream = copier ? frame.streams->stream(*copier, "output", v.name) : nullptr;
  copy_tensor(t, out, stream, "output '" + v.name + "'");
  if (copier) frame.streams->synchronize(*copier, "output");
  if (!t.on_device())
    ++frame.copies->to_device;
  else if (!location)
    ++frame.copies->to_host;
  else
    ++frame.copies->between_devices;
  return out;
}

Tensor GraphExecutor::host_output_from_device(const Frame& frame, const Tensor& t) const {
  // Only the application reads a top-level run's output (a subgraph's goes to the kernel that ran it),
  // so it may lie in memory the device's copy fills best (Device::host_memory_for_output).
  if (!frame.parent && t.on_device() && t.elem_type() != EPHOST_ELEMENT_STRING)
    if (std::shared_ptr<void> memory = t.device()->host_memory_for_output(t.byte_size()))
      return Tensor::borrow(t.elem_type(), t.shape(), memory.get(), memory);
  return Tensor::allocate(t.elem_type(), t.shape());
}

void GraphExecutor::run_copy(Frame& frame, const PlannedCopy& copy) const {
  const Value& v = *graph_.values[static_cast<size_t>(copy.source)];
  const RuntimeValue* source = lookup_value(frame, &v);
  if (!source)
    fail(EPHOST_RUNTIME_EXCEPTION, "copy of '{}': the value has no value (not produced before use)", v.name);
  const Device* to = plan_.devices[static_cast<size_t>(copy.device)];
  RuntimeValue& slot = frame.slots[static_cast<size_t>(copy.target)];
  const Tensor& src = source->is_tensor() ? source->tensor() : source->tensor(("copy of '" + v.name + "'").c_str());
  // Already there (a device tensor the caller bound where this device reads it): no copy.
  if (src.device() == to) {
    slot = *source;
    return;
  }
  Tensor dst = StepContext::place_value(*this, frame, copy.target, src.elem_type(), src.shape());
  const Device* copier = copying_device(src, dst);
  EphostStream* stream = copier ? frame.streams->stream(*copier, "value", v.name) : nullptr;
  const std::string what = "'" + v.name + "'";
  copy_tensor(src, dst, stream, what);
  if (!src.on_device()) {
    ++frame.copies->to_device;
    // The host source must not change before the device has read it: caller-owned inputs and
    // initializers do not, but a planned buffer may be handed to another value right after.
    const bool stable = v.is_graph_input || v.is_initializer() || v.is_outer_scope();
    if (!stable) frame.streams->synchronize(*copier, "copy to the device");
  } else {
    if (to)
      ++frame.copies->between_devices;
    else
      ++frame.copies->to_host;
    // Host steps read the copy next, and another device's stream does not wait for this one.
    frame.streams->synchronize(*copier, to ? "copy to another device" : "copy to the host");
  }
  slot = std::move(dst);
}

const RuntimeValue* lookup_value(const Frame& frame, const Value* v) {
  const RuntimeValue& slot = frame.slots[v->index];
  if (slot.is_set()) return &slot;
  if (v->initializer) return &frame.executor->bound_initializer(*v);
  for (const Frame* f = frame.parent; f; f = f->parent) {
    const Value* outer = f->graph->find(v->name);
    if (!outer) continue;
    const RuntimeValue& s = f->slots[outer->index];
    if (s.is_set()) return &s;
    if (outer->initializer) return &f->executor->bound_initializer(*outer);
  }
  return nullptr;
}

}  // namespace ephost
