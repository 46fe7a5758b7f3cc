// Offset assignment (the "dynamic storage allocation" problem): buffers with known lifetimes and
// sizes get offsets in one block so that buffers alive at the same step never share bytes, with the
// block as small as possible. Internal to the memory pattern.
#pragma once

#include <cstdint>
#include <vector>

namespace ephost::plan {

struct Lifetime {
  int first = 0;      // first step (position) the buffer is alive at
  int last = 0;       // last step it is alive at, inclusive
  int64_t bytes = 0;  // already rounded to the alignment the offsets must keep
};

struct Placement {
  std::vector<int64_t> offsets;  // per buffer
  int64_t peak = 0;              // block size: max(offset + bytes)
};

// The busiest step's total: max over steps of the bytes of the buffers alive at it. No placement
// can be smaller.
int64_t max_live_bytes(const std::vector<Lifetime>& buffers, int steps);

// Greedy best-fit placement: each buffer goes into the smallest gap left between the placed buffers
// whose lifetimes overlap its own, or on top of them. Tried in several orders (largest first, as
// TFLite's greedy-by-size; by first step, as ONNX Runtime's planner; longest-lived first; ...),
// keeping the smallest block and stopping as soon as one reaches max_live_bytes (it is optimal).
//
// What is guaranteed: no two buffers alive at a common step share a byte; the block is
// max_live_bytes exactly when all buffers have the same size. In general the optimum can exceed
// max_live_bytes (the problem is NP-hard: Buchsbaum et al., "OPT versus LOAD in dynamic storage
// allocation", STOC 2003), so no placement rule can promise it.
// Offsets are sums of buffer sizes, so they keep the sizes' alignment. All lifetimes must lie in
// [0, steps). About O(n log n + overlapping pairs) per order.
Placement assign_offsets(const std::vector<Lifetime>& buffers, int steps);

}  // namespace ephost::plan
