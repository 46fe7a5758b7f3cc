// A program on a device: built once from its source into a binary (build_binary), and made runnable from a
// binary (DeviceProgram), for a fresh compile and for a cached context alike.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cl_error.h"
#include "ephost/sdk/plugin.hpp"
#include "program.h"
#include "shapes.h"

namespace ephost_opencl {

// Builds `source` (generated from `program`) for device `device` with clBuildProgram, launches every kernel
// once with an empty grid in both the small-grid and large-grid variants (drivers such as PoCL generate a
// kernel's machine code at its first launch, per work-group size), and returns CL_PROGRAM_BINARIES, which
// then hold finished machine code. `what` names the group in errors.
std::vector<uint8_t> build_binary(uint32_t device, const Program& program, const std::string& source, const std::string& what);

class DeviceProgram {
 public:
  // Creates the program from `binary`, its kernels, and uploads its weights. Throws naming the OpenCL call.
  DeviceProgram(uint32_t device, std::shared_ptr<const Program> program, const std::vector<uint8_t>& binary, std::string what);
  ~DeviceProgram();
  DeviceProgram(const DeviceProgram&) = delete;
  DeviceProgram& operator=(const DeviceProgram&) = delete;

  // One run: `bindings[i]` is the kernel-context input of program input i. Enqueues on the run's stream
  // (or the device's queue, then waits). Thread-safe.
  void run(ephost::sdk::KernelContext& ctx, const std::vector<size_t>& bindings);
  const Program& program() const { return *program_; }

 private:
  struct Memory {
    cl_mem mem = nullptr;
    uint64_t offset = 0;  // bytes
  };
  struct Temporary {
    int32_t value;
    size_t first, last;  // kernels writing it first and reading it last
  };
  void plan_temporaries();
  void bind_inputs(ephost::sdk::KernelContext& ctx, const std::vector<size_t>& bindings, cl_command_queue queue,
                   RunShapes& shapes, std::vector<Memory>& mem);
  std::string kernel_label(size_t k) const;

  uint32_t device_;
  std::shared_ptr<const Program> program_;
  std::string what_;
  cl_program cl_program_ = nullptr;
  std::vector<cl_kernel> kernels_;
  cl_mem weights_ = nullptr;
  std::vector<int32_t> root_;          // per value: the value whose memory it uses (itself, or a view's source)
  std::vector<bool> stored_;           // per value: a kernel writes it
  std::vector<Temporary> temporaries_; // values kernels write that are not outputs
  std::mutex enqueue_mutex_;
};

}  // namespace ephost_opencl
