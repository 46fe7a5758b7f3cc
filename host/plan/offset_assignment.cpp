#include "plan/offset_assignment.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "plan/overlap_index.h"

namespace ephost::plan {

namespace {

struct Occupied {
  int64_t begin;
  int64_t end;
};

// The smallest gap between `occupied` ranges that holds `bytes` (lowest offset on ties), or the top
// of the highest range when none does. Sorts `occupied`.
int64_t best_fit(std::vector<Occupied>& occupied, int64_t bytes) {
  if (bytes == 0) return 0;
  std::sort(occupied.begin(), occupied.end(), [](const Occupied& a, const Occupied& b) { return a.begin < b.begin; });
  int64_t covered_to = 0;
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (const Occupied& o : occupied) {
    const int64_t gap = o.begin - covered_to;
    if (gap >= bytes && gap < best_gap) {
      best = covered_to;
      best_gap = gap;
    }
    covered_to = std::max(covered_to, o.end);
  }
  return best >= 0 ? best : covered_to;
}

Placement place_in_order(const std::vector<Lifetime>& buffers, const OverlapIndex& index,
                         const std::vector<int>& order) {
  Placement result;
  result.offsets.assign(buffers.size(), -1);
  std::vector<Occupied> occupied;
  for (int i : order) {
    occupied.clear();
    index.for_each_overlap(i, [&](int j) {
      const int64_t offset = result.offsets[static_cast<size_t>(j)];
      if (offset >= 0) occupied.push_back(Occupied{offset, offset + buffers[static_cast<size_t>(j)].bytes});
    });
    const int64_t bytes = buffers[static_cast<size_t>(i)].bytes;
    const int64_t offset = best_fit(occupied, bytes);
    result.offsets[static_cast<size_t>(i)] = offset;
    result.peak = std::max(result.peak, offset + bytes);
  }
  return result;
}

// The orders tried, best first on typical graphs. Each is a sort key; ties end on the buffer index
// so the result is deterministic.
struct Key {
  int64_t k1, k2, k3;
  bool operator<(const Key& o) const {
    if (k1 != o.k1) return k1 < o.k1;
    if (k2 != o.k2) return k2 < o.k2;
    return k3 < o.k3;
  }
};
using OrderKey = Key (*)(const Lifetime&);

int64_t steps_alive(const Lifetime& b) { return b.last - b.first + 1; }

// TFLite's greedy-by-size: big buffers first, they are the hardest to fit into gaps later.
Key largest_first(const Lifetime& b) { return {-b.bytes, -steps_alive(b), b.first}; }
// ONNX Runtime's planner, offline: allocation order. With equal sizes this is optimal (interval
// graph colouring by start): every buffer placed so far that overlaps is alive at the same step.
Key earliest_first(const Lifetime& b) { return {b.first, -b.bytes, 0}; }
Key longest_first(const Lifetime& b) { return {-steps_alive(b), -b.bytes, b.first}; }
Key largest_area_first(const Lifetime& b) { return {-b.bytes * steps_alive(b), -b.bytes, b.first}; }
Key largest_then_earliest(const Lifetime& b) { return {-b.bytes, b.first, 0}; }

constexpr OrderKey kOrders[] = {largest_first, earliest_first, longest_first, largest_area_first,
                                largest_then_earliest};

std::vector<int> sorted_by(const std::vector<Lifetime>& buffers, OrderKey key) {
  std::vector<std::pair<Key, int>> keyed(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) keyed[i] = {key(buffers[i]), static_cast<int>(i)};
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> order(buffers.size());
  for (size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
  return order;
}

}  // namespace

int64_t max_live_bytes(const std::vector<Lifetime>& buffers, int steps) {
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (const Lifetime& b : buffers) {
    delta[static_cast<size_t>(b.first)] += b.bytes;
    delta[static_cast<size_t>(b.last) + 1] -= b.bytes;
  }
  int64_t live = 0;
  int64_t busiest = 0;
  for (int t = 0; t < steps; ++t) {
    live += delta[static_cast<size_t>(t)];
    busiest = std::max(busiest, live);
  }
  return busiest;
}

Placement assign_offsets(const std::vector<Lifetime>& buffers, int steps) {
  const int64_t lower_bound = max_live_bytes(buffers, steps);
  const OverlapIndex index(buffers, steps);
  Placement best;
  best.offsets.assign(buffers.size(), 0);
  best.peak = buffers.empty() ? 0 : std::numeric_limits<int64_t>::max();
  for (OrderKey key : kOrders) {
    if (best.peak <= lower_bound) break;  // optimal: no order can do better
    Placement candidate = place_in_order(buffers, index, sorted_by(buffers, key));
    if (candidate.peak < best.peak) best = std::move(candidate);
  }
  return best;
}

}  // namespace ephost::plan
