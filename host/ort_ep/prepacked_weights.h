// Pre-packed weights of kernel-registry EPs (ONNX Runtime API 24, OrtKernelImpl::PrePackWeight), and the
// container that shares them.
//
// When the host creates a kernel it offers the kernel each constant initializer input
// (PrePackWeight). In sharing mode it also hands an OrtSharedPrePackedWeightCache: a kernel that wants its
// packed copy shared stores the buffers there (SharedPrePackedWeightCache_StoreWeightData, allocated with
// the allocator PrePackWeight was given) and the host adopts them into the process-wide container, keyed
// as ONNX Runtime keys its container (the node's operator type and the packed bytes), so that every kernel
// packing an equal weight, in this session or another, gets the same buffers
// (OrtKernelImpl::SetSharedPrePackedWeight). An entry lives as long as a kernel uses it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ort_ep/ort_objects.h"

// What one PrePackWeight call stored to be shared: buffers allocated with `allocator`, owned here until
// the host adopts them into the container (freed with the allocator if the kernel then says it did not
// pack, or fails).
struct OrtSharedPrePackedWeightCache {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kPrePackedCache;
  OrtAllocator* allocator = nullptr;
  std::vector<void*> buffers;
  std::vector<size_t> sizes;

  explicit OrtSharedPrePackedWeightCache(OrtAllocator* a) : allocator(a) {}
  ~OrtSharedPrePackedWeightCache() { free_buffers(); }
  OrtSharedPrePackedWeightCache(const OrtSharedPrePackedWeightCache&) = delete;
  OrtSharedPrePackedWeightCache& operator=(const OrtSharedPrePackedWeightCache&) = delete;
  void free_buffers() noexcept;
};

namespace ephost::ort_ep {

// One shared packed weight: its buffers (freed with the allocator that made them when the last kernel
// using it is gone).
struct SharedPrePackedWeight {
  std::string op_type;
  uint64_t hash = 0;
  OrtAllocator* allocator = nullptr;
  std::vector<void*> buffers;
  std::vector<size_t> sizes;
  ~SharedPrePackedWeight();
};

// The weight to hand the kernel for what `filled` holds, packed by a kernel of `op_type`: an equal weight
// already in the container (same operator type, same buffers byte for byte; `filled`'s buffers are then
// freed), or `filled`'s buffers adopted as a new entry. The caller keeps the answer as long as its kernel.
std::shared_ptr<const SharedPrePackedWeight> share_prepacked_weight(const std::string& op_type,
                                                                    OrtSharedPrePackedWeightCache& filled);

// How many shared weights the container holds now (kernels alive use them).
size_t shared_prepacked_weight_count();

}  // namespace ephost::ort_ep
