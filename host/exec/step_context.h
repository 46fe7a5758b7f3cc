// The kernel context of one step: what a plugin's compute sees through the host table
// (kernel_input, kernel_output, kernel_run_subgraph...). Places each tensor output's buffer: graph
// outputs get their own; others go to the memory pattern's block when one is recorded for these
// input shapes, else to a dead value's buffer when the allocation plan says so, else to a fresh
// allocation. Sequences and none are never placed: the slot simply holds them.
#pragma once

#include <deque>
#include <memory>

#include "abi/handles.h"
#include "exec/graph_executor.h"

namespace ephost {

// The value bound to `v` in `frame` (its slot, its initializer, or an enclosing frame's value), or null.
const RuntimeValue* lookup_value(const Frame& frame, const Value* v);

class StepContext final : public EphostKernelContext {
 public:
  StepContext(const GraphExecutor& executor, Frame& frame, const CompiledStep& step)
      : executor_(executor), frame_(frame), step_(step) {}

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

  // Throws when the plugin returned success without writing a required output, or left an element
  // of a sequence output unwritten.
  void check_outputs_written() const;

 private:
  Tensor place(const Value& v, int32_t elem_type, std::vector<int64_t> shape);
  // Output `index`'s storage: its frame slot, or a scratch value for an omitted optional output.
  RuntimeValue& output_slot(size_t index);
  void check_output_index(size_t index) const;

  const GraphExecutor& executor_;
  Frame& frame_;
  const CompiledStep& step_;
  std::deque<RuntimeValue> scratch_;            // outputs the graph does not use (omitted optional outputs)
  std::vector<RuntimeValue*> scratch_by_index_; // output index -> scratch value
  // Sequence outputs being filled during this call (the slot holds the same sequence, read-only).
  std::vector<std::pair<size_t, std::shared_ptr<TensorSequence>>> open_sequences_;
};

}  // namespace ephost
