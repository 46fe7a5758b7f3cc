// Each run's shapes: from the shapes of the group's inputs (and the data of its integer inputs), the shape
// of every value and the data of every host value, operation by operation. This is where a run finds out
// whether the tensors it was given fit the program (channels, sizes, broadcasting), before any kernel is
// enqueued.
#pragma once

#include <cstdint>
#include <vector>

#include "program.h"

namespace ephost_opencl {

struct RunShapes {
  std::vector<std::vector<int64_t>> shape;  // per value
  std::vector<std::vector<int64_t>> data;   // per host value and integer constant: its elements
  std::vector<bool> known;                  // per value: shape computed
};

// Starts a RunShapes for `program`: constants filled in; inputs are set by the caller.
RunShapes start_shapes(const Program& program);

// Computes every operation's result shape (and host data). Throws ephost::sdk::Error (EPHOST_INVALID_ARGUMENT)
// naming the node when a shape does not fit.
void infer_shapes(const Program& program, RunShapes& shapes);

// The scales a Resize applies along H and W in this run (given, or output size / input size).
void resize_scales(const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out, float* scale_h,
                   float* scale_w);

int64_t element_count(const std::vector<int64_t>& shape);

}  // namespace ephost_opencl
