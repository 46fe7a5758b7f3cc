// One entry point per phase for every op kind: the runner asks for the output shape, allocates, then
// executes.
#pragma once

#include <vector>

#include "tensor.h"

namespace example_ep {

// The shape `op` produces from `inputs`; throws (bad_input) when it cannot take them.
Shape output_shape(const Op& op, const std::vector<ConstTensor>& inputs);

// Writes `op`'s result over `inputs` into `y` (of output_shape's shape, uninitialized).
void execute(const Op& op, const std::vector<ConstTensor>& inputs, float* y, const Shape& y_shape);

}  // namespace example_ep
