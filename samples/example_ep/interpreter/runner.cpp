#include "runner.h"

#include <cstdint>
#include <memory>

#include "ops.h"

namespace example_ep {

Runner::Runner(Program program) : program_(std::move(program)) {
  const size_t slots = program_.num_slots();
  last_reader_.assign(slots, SIZE_MAX);
  output_of_.assign(slots, -1);
  for (size_t i = 0; i < program_.ops.size(); ++i)
    for (uint32_t slot : program_.ops[i].inputs) last_reader_[slot] = i;
  for (size_t i = 0; i < program_.outputs.size(); ++i) output_of_[program_.outputs[i]] = static_cast<int64_t>(i);
}

void Runner::run(const std::vector<ConstTensor>& inputs, const OutputAllocator& allocate_output) const {
  const Program& p = program_;
  if (inputs.size() != p.input_names.size())
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "example EP program takes " + std::to_string(p.input_names.size()) +
                                                   " inputs, got " + std::to_string(inputs.size()));
  std::vector<ConstTensor> slots(p.num_slots());
  std::vector<std::unique_ptr<float[]>> owned(p.num_slots());
  for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
  for (size_t i = 0; i < p.weights.size(); ++i)
    slots[p.first_weight_slot() + i] = ConstTensor{p.weights[i].data.data(), p.weights[i].shape};
  std::vector<ConstTensor> args;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    args.clear();
    for (uint32_t slot : op.inputs) args.push_back(slots[slot]);
    Shape shape = output_shape(op, args);
    const size_t slot = p.first_op_slot() + i;
    float* y;
    if (output_of_[slot] >= 0) {
      y = allocate_output(static_cast<size_t>(output_of_[slot]), shape);
    } else {
      owned[slot].reset(new float[static_cast<size_t>(numel(shape))]);
      y = owned[slot].get();
    }
    execute(op, args, y, shape);
    slots[slot] = ConstTensor{y, std::move(shape)};
    // Free intermediate results nobody reads any more, so peak memory follows the live values.
    for (uint32_t read : op.inputs)
      if (last_reader_[read] == i) owned[read].reset();
  }
}

}  // namespace example_ep
