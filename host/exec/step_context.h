// The kernel context of one step: what a plugin's compute sees through the host table
// (kernel_input, kernel_output, kernel_run_subgraph...). Places each output buffer: graph outputs get
// their own; others go to the memory pattern's block when one is recorded for these input shapes,
// else to a dead value's buffer when the allocation plan says so, else to a fresh allocation.
#pragma once

#include <deque>

#include "abi/handles.h"
#include "exec/graph_executor.h"

namespace ephost {

// The tensor bound to `v` in `frame` (its slot, its initializer, or an enclosing frame's value), or null.
const Tensor* lookup_value(const Frame& frame, const Value* v);

class StepContext final : public EphostKernelContext {
 public:
  StepContext(const GraphExecutor& executor, Frame& frame, const ExecStep& step)
      : executor_(executor), frame_(frame), step_(step) {}

  size_t num_inputs() const override { return step_.inputs.size(); }
  const Tensor* input(size_t index) const override;
  size_t num_outputs() const override { return step_.outputs.size(); }
  Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) override;
  Tensor* allocated_output(size_t index) override;
  int32_t num_threads() const override { return executor_.options().num_threads; }
  std::vector<Tensor> run_subgraph(const std::string& attribute, std::vector<Tensor> inputs) override;

  // Throws when the plugin returned success without writing a required output.
  void check_outputs_written() const;

 private:
  Tensor place(const Value& v, int32_t elem_type, std::vector<int64_t> shape);

  const GraphExecutor& executor_;
  Frame& frame_;
  const ExecStep& step_;
  std::deque<Tensor> scratch_;            // outputs the graph does not use (omitted optional outputs)
  std::vector<Tensor*> scratch_by_index_; // output index -> scratch tensor
};

}  // namespace ephost
