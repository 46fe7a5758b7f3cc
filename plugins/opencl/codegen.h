// OpenCL C from a program (program.h): one kernel per KernelPlan, named k<index>, specialized on everything
// static (channel counts, window sizes, strides, pads, weight offsets, fused elementwise chains), with
// the dimensions a model leaves symbolic (batch, height, width) read from run-time arguments. The source
// depends on the program alone, so the hash of the source identifies the kernels a binary holds.
//
// Every kernel takes, in this order: for each buffer parameter (kernel_params) a `__global float*` and a
// `ulong` offset in floats; the weights buffer; `int16 P` (P.s0-s3: the 4-D shape of the kernel's output
// grid; P.s4-s7: the 4-D shape of its first input; P.s8-sf: per anchor kind, see launch.h); `float4 F`.
// Work groups are (work_group_size, 1, 1); a kernel returns at once for work items past its grid, so a
// launch with all of P zero does nothing (the build warms every kernel that way).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cl_runtime.h"
#include "program.h"

namespace ephost_opencl {

struct KernelParam {
  enum class Kind { kStore, kMain, kExtra };
  Kind kind;
  int32_t value;
};

// The buffer parameters of kernel `k`: the values it stores, its anchor's inputs, the values its
// elementwise operations read from memory.
std::vector<KernelParam> kernel_params(const Program& program, const KernelPlan& k);

// The number of arguments kernel `k` takes (2 per buffer parameter, the weights, P and F).
size_t kernel_arg_count(const Program& program, const KernelPlan& k);

// 3 for convolutions (pixels, channel blocks, batch), 1 for the others.
uint32_t kernel_work_dims(const Program& program, const KernelPlan& k);

std::string kernel_name(size_t index);

// The whole program's source. Throws ephost::sdk::Error when the program cannot be expressed.
std::string generate_source(const Program& program);

// XXH64 of the source: recorded in contexts, compared when one is judged.
uint64_t source_hash(const std::string& source);

// The options programs are built with on `device`. Where the device can, division is correctly rounded:
// OpenCL C allows 2.5 ulp for a float division otherwise, and Resize's source coordinate
// ((x + 0.5) / scale - 0.5) must land exactly on .5 where IEEE division does, or round_prefer_floor picks
// the other pixel (NVIDIA's driver gave 3.5 / 3.5 > 1 before this).
std::string build_options(const DeviceIdentity& device);

}  // namespace ephost_opencl
