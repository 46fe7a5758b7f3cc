// Kernels from operations: every device operation that is not elementwise anchors a kernel; an
// elementwise operation joins the kernel that computes one of its inputs in registers when its result has
// that kernel's output shape and everything else it reads is in memory before that kernel runs (so that
// chains such as Conv → Add → Clip → Mul → Div become one kernel); otherwise it starts a kernel of its own.
// Values are written to memory only where something outside their kernel reads them.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "program.h"

namespace ephost_opencl {

// Fills program.kernels (replacing what is there).
void plan_kernels(Program& program);

// How a tensor read by an elementwise operation lines up with its kernel's output grid, both seen as 4-D
// (leading axes of size 1 added): broadcast[d] when the tensor has size 1 along axis d.
struct Broadcast {
  std::array<bool, 4> axis{};
};
// From static dimensions: an axis of static size 1 (or missing) is broadcast; an unknown one is taken to
// match the grid (checked on every run).
Broadcast broadcast_of(const std::vector<int64_t>& dims);

// The device values kernel `k` reads from memory: its anchor's inputs ("main"), and what its elementwise
// operations read that other kernels computed ("extra"). Constants are read from the weights buffer.
struct KernelReads {
  std::vector<int32_t> main;
  std::vector<int32_t> extra;
};
KernelReads kernel_reads(const Program& program, const KernelPlan& k);

// The values computed in kernel `k`'s registers: its anchor's result and its elementwise results.
std::vector<int32_t> kernel_values(const Program& program, const KernelPlan& k);

// 4-D view of a shape (leading 1s added); shapes of rank > 4 are refused by lowering.
std::array<int64_t, 4> as_4d(const std::vector<int64_t>& shape);

}  // namespace ephost_opencl
