// OrtKernelContext: one Compute call's inputs and outputs, over the executor's kernel context. Inputs
// and outputs are handed to the plugin as OrtValues that borrow the executor's tensors; an output's
// element type is the fused node's output type (ONNX Runtime's GetOutput takes only a shape).
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "plugin_abi/handles.h"
#include "ort_ep/ort_objects.h"

struct OrtKernelContext {
  static constexpr uint32_t kMagic = 0x4f4b4358;  // "OKCX"
  uint32_t magic = kMagic;
  EphostKernelContext* context = nullptr;
  const std::vector<int32_t>* output_elem_types = nullptr;  // one per output of the fused node
  // The OrtValues handed out, by index (null until asked for); a deque keeps their addresses stable.
  std::deque<OrtValue> values;
  std::vector<OrtValue*> inputs, outputs;
  // A registry kernel's (input, output) aliases (KernelDefBuilder_AddInputOutputAliases), or null: such
  // an output is the input's bytes. When the planner could not give it the input's buffer (the input is
  // read later), GetOutput fills it with a copy of the input, so a kernel that writes nothing still
  // returns its input.
  const std::vector<std::pair<int, int>>* alias_outputs = nullptr;
  // The memory of a device with memory of its own and the factory's allocator for it
  // (KernelContext_GetAllocator / GetScratchBuffer); null on host memory, where the CPU's serves.
  const OrtMemoryInfo* device_memory = nullptr;
  OrtAllocator* device_allocator = nullptr;

  OrtKernelContext(EphostKernelContext* ctx, const std::vector<int32_t>* elem_types)
      : context(ctx), output_elem_types(elem_types), inputs(ctx->num_inputs()), outputs(ctx->num_outputs()) {}
};
