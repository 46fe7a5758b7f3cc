// How each kernel is launched in a run: its global work size and the run-time arguments P and F
// (codegen.h), from the run's shapes.
//   P.s0-s3  the kernel's output grid, 4-D          P.s4-s7  its first input, 4-D
//   Concat: P.s8+j  input j's size along the axis   MatMul with B computed at run time: P.s8-sb  B, 4-D
//   Softmax: P.s8 outer, P.s9 axis length, P.sa inner   Resize: F.s0, F.s1  the scales along H and W
#pragma once

#include <cstddef>

#include "cl_error.h"
#include "program.h"
#include "shapes.h"

namespace ephost_opencl {

struct Launch {
  cl_uint work_dims = 1;
  size_t global[3] = {0, 1, 1};
  cl_int16 P{};
  cl_float4 F{};
  bool empty = false;  // no output element: nothing to launch
};

Launch launch_of(const Program& program, const KernelPlan& kernel, const RunShapes& shapes);

// Checks that the run's shapes fit the kernels as fused: every value a kernel computes has the kernel's grid
// shape, every tensor its elementwise operations read lines up with the grid as compiled, and no device
// tensor has 2^31 elements or more (kernels index with int). Throws ephost::sdk::Error naming the node.
void check_kernel_shapes(const Program& program, const RunShapes& shapes);

}  // namespace ephost_opencl
