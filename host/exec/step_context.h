// The kernel context of one step: what a plugin's compute sees through the host table
// (kernel_input, kernel_output, kernel_run_subgraph, and with plugin ABI 3 kernel_input_memory,
// kernel_output_device, kernel_stream). Places each tensor output's buffer in the step's location
// (host memory, or the device a device provider runs on): graph outputs get their own; others go to
// the memory pattern's block of that location when one is recorded for these input shapes, else to a
// dead value's buffer when the allocation plan says so, else to a fresh allocation. Sequences and
// none are never placed: the slot simply holds them. With profiling on it holds the step's span and
// files the operator spans the plugin reports from inside the step under it (plugin ABI 4).
#pragma once

#include <deque>
#include <memory>

#include "plugin_abi/handles.h"
#include "exec/graph_executor.h"

namespace ephost {

// The value bound to `v` in `frame` (its slot, its initializer, or an enclosing frame's value), or null.
const RuntimeValue* lookup_value(const Frame& frame, const Value* v);

class StepContext final : public EphostKernelContext {
 public:
  // `step_index`: the step's index among the compiled steps (and the plan's group steps). `span`: the
  // step's profile span while it computes, or null when the session does not profile.
  StepContext(const GraphExecutor& executor, Frame& frame, const CompiledStep& step, size_t step_index,
              const Profiler::Span* span = nullptr)
      : executor_(executor), frame_(frame), step_(step), step_index_(step_index), span_(span) {}

  size_t num_inputs() const override { return step_.inputs.size(); }
  const RuntimeValue* input(size_t index) const override;
  size_t num_outputs() const override { return step_.outputs.size(); }
  Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) override;
  Tensor* allocated_output(size_t index) override;
  void set_output(size_t index, RuntimeValue value) override;
  void begin_sequence_output(size_t index, int32_t elem_type, size_t length) override;
  TensorSequence& sequence_output(size_t index) override;
  int32_t num_threads() const override { return executor_.options().num_threads; }
  std::vector<RuntimeValue> run_subgraph(const std::string& attribute, std::vector<RuntimeValue> inputs) override;
  const Device* memory_device() const override { return step_.provider->memory_device(); }
  EphostStream* stream() override;
  bool profiling() const override { return span_ != nullptr && span_->profiler() != nullptr; }
  int64_t profile_clock_ns() const override;
  void record_span(const EphostProfileSpan& span) override;
  const RunLimits* run_limits() const override { return frame_.limits; }
  const Tensor* output_destination(size_t index) const override;
  bool output_read_only_by_provider(size_t index) const override;

  // Throws when the plugin returned success without writing a required output, or left an element
  // of a sequence output unwritten.
  void check_outputs_written() const;

  // A buffer for plan value `id` of `executor`'s plan, in the value's location (its memory pattern
  // offset, a dead value's buffer, or a new allocation). Also used for copies.
  static Tensor place_value(const GraphExecutor& executor, Frame& frame, int id, int32_t elem_type,
                            std::vector<int64_t> shape);

 private:
  // Output `index`'s storage: its frame slot, or a scratch value for an omitted optional output.
  RuntimeValue& output_slot(size_t index);
  void check_output_index(size_t index) const;
  // `value` in the step's location: itself, or a copy made now (a bound device tensor read by a host
  // step, an outer-scope value on another device), kept for the rest of the run.
  const RuntimeValue* in_step_location(int id, const RuntimeValue* value) const;

  const GraphExecutor& executor_;
  Frame& frame_;
  const CompiledStep& step_;
  size_t step_index_;
  const Profiler::Span* span_;
  std::deque<RuntimeValue> scratch_;            // outputs the graph does not use (omitted optional outputs)
  std::vector<RuntimeValue*> scratch_by_index_; // output index -> scratch value
  // Sequence outputs being filled during this call (the slot holds the same sequence, read-only).
  std::vector<std::pair<size_t, std::shared_ptr<TensorSequence>>> open_sequences_;
};

}  // namespace ephost
