// The memory pattern: where each buffer the executor allocates lives inside one preallocated block
// per device, recorded from the sizes seen in one run (ONNX Runtime's MemoryPatternGroup). With a
// pattern, a run allocates one block per device and each value is a pointer into it.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/allocation_plan.h"
#include "plan/plan_graph.h"

namespace ephost::plan {

constexpr int64_t kPatternAlignment = 64;  // every offset is a multiple of this

struct MemoryBlock {
  int32_t device = 0;
  int64_t bytes = 0;      // the block to allocate: max(offset + aligned size) over its values
  int64_t min_bytes = 0;  // the busiest step's aligned live bytes: no pattern can use less
};

struct MemoryPattern {
  // Per value id: offset inside the block of the value's device, -1 when the value is not in a block.
  std::vector<int64_t> offsets;
  // Per value id: the observed byte size it occupies from its offset, -1 when not in a block.
  std::vector<int64_t> sizes;
  std::vector<MemoryBlock> blocks;  // one per device that has values in the pattern, ascending device
  int64_t peak_bytes = 0;           // sum of the blocks' bytes (the one block's when all use device 0)

  // The block of `device`, or nullptr when no value of that device is in the pattern.
  const MemoryBlock* block(int32_t device) const;
};

// Assigns offsets to every value that is kAllocate or kReuse in `plan` and has observed_bytes >= 0
// (the executor reports -1 for what it does not allocate: inputs, initializers, graph outputs; any
// other kind is left out whatever it reports). A value occupies [offset, offset + observed) during
// [def_step, last_use_step]; two values whose step ranges intersect never share a byte, except a
// value written in place of its step's input (ValuePlan::in_place), which gets that input's offset
// (the chain is placed as one buffer, as large as its largest value). Every other value gets its own
// offset, kReuse ones included: with a pattern the executor places every value at its
// offset and ignores reuse_of and release_after for values in the block (the pattern already reuses
// memory, and better, since it knows the real sizes).
//
// Sizes are rounded up to kPatternAlignment; each device's values are placed independently
// (offset_assignment.h: greedy best-fit in several orders, the smallest block kept, stopping at the
// first that reaches min_bytes). Every block is >= its min_bytes, and == when all its values have
// one aligned size. With mixed sizes the best possible block can be larger than min_bytes (finding
// it is NP-hard), so that is not promised; on random graphs the block is min_bytes ~93% of the time
// and within 10% of it otherwise (tests/unit/plan_test.cpp). O(n log n + overlapping pairs).
// Throws INVALID_ARGUMENT when observed_bytes does not have one entry per value.
MemoryPattern make_memory_pattern(const PlanGraph& g, const AllocationPlan& plan,
                                  const std::vector<int64_t>& observed_bytes);

}  // namespace ephost::plan
