// The one oneDNN CPU engine of the plugin, and small helpers to describe plain tensors.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "shape.h"

namespace ephost::cpu::math {

dnnl::engine& cpu_engine();
// A stream on cpu_engine() owned by the calling thread (creating one per call costs a few microseconds).
dnnl::stream& thread_stream();
// A u8 scratchpad memory of `bytes` in thread_buffer slot 2.
dnnl::memory scratchpad(size_t bytes);

// A row-major f32 descriptor, or one with explicit strides.
dnnl::memory::desc plain_desc(const Shape& dims, dnnl::memory::data_type dt = dnnl::memory::data_type::f32);
dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides,
                                dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

// precision=bf16 (provider option): products take bf16 operands and accumulate in f32 (oneDNN's
// avx512_core_bf16 / AMX kernels); the result stays f32. A primitive oneDNN can only offer as its
// reference code (a capped oneDNN) is no gain, so callers fall back to f32 where this says so.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// An f32 operand converted to bf16 for one product: `reorder` goes from `f32` to `bf16` (a dense
// descriptor of the same dims); the result lives in thread_buffer(slot) until the caller's next use
// of that slot.
struct Bf16Operand {
  dnnl::memory::desc f32, bf16;
  dnnl::reorder reorder;
  void prepare(const dnnl::memory::desc& f32_desc);  // bf16 = the plain bf16 layout of f32_desc's dims
  dnnl::memory convert(const float* data, int slot, dnnl::stream& s) const;
};

// A per-thread growable buffer for reorder targets and scratchpads, one per slot (0: src, 1: dst,
// 2: scratchpad, 3: weights, 4-7: other; 6-7 hold the NHWC bytes between the links of a fused int8
// convolution chain, 8 the NHWC values of an int8 trunk). The calling thread owns it and uses it within one call
// only, so no locking is needed, and steady-state runs allocate nothing.
constexpr int kThreadBufferSlots = 9;
void* thread_buffer(int slot, size_t bytes);
// thread_buffer(slot, bytes) with every page written once: a group planned at session creation
// calls it for the buffers its runs will use, so that their page faults are not the first run's.
void touch_thread_buffer(int slot, size_t bytes);

// Memory for weights that live as long as a compiled group (packed once, read by every run). Blocks
// of 2 MiB and more are aligned to 2 MiB and their whole 2 MiB pages (not the tail) advised as
// transparent huge pages: packing a large
// model's weights at session creation then faults in one page per 2 MiB instead of 512 (the faults
// cost more than the packing), and the runs read them with fewer TLB misses. oneDNN's memory does
// not own a buffer it is given, so `block` owns it: keep it as long as `memory` (or a copy) is used.
struct WeightsMemory {
  dnnl::memory memory;
  std::shared_ptr<void> block;  // null where oneDNN allocated (and owns) the memory
};
WeightsMemory weights_memory(const dnnl::memory::desc& desc);

}  // namespace ephost::cpu::math
