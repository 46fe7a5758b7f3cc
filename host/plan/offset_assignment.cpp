#include "plan/offset_assignment.h"

#include <algorithm>
#include <limits>
#include <numeric>
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

Placement place_in_order(const std::vector<Lifetime>& buffers, const OverlapIndex& index, const std::vector<int>& order) {
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

int span(const Lifetime& b) { return b.last - b.first; }

// Orders to try, best first on typical graphs. Every comparison ends on the buffer index so the
// result is deterministic.
using Before = bool (*)(const std::vector<Lifetime>&, int, int);

bool largest_first(const std::vector<Lifetime>& b, int x, int y) {
  const Lifetime& p = b[static_cast<size_t>(x)];
  const Lifetime& q = b[static_cast<size_t>(y)];
  if (p.bytes != q.bytes) return p.bytes > q.bytes;
  if (span(p) != span(q)) return span(p) > span(q);
  if (p.first != q.first) return p.first < q.first;
  return x < y;
}

bool earliest_first(const std::vector<Lifetime>& b, int x, int y) {
  const Lifetime& p = b[static_cast<size_t>(x)];
  const Lifetime& q = b[static_cast<size_t>(y)];
  if (p.first != q.first) return p.first < q.first;
  if (p.bytes != q.bytes) return p.bytes > q.bytes;
  return x < y;
}

bool longest_first(const std::vector<Lifetime>& b, int x, int y) {
  const Lifetime& p = b[static_cast<size_t>(x)];
  const Lifetime& q = b[static_cast<size_t>(y)];
  if (span(p) != span(q)) return span(p) > span(q);
  if (p.bytes != q.bytes) return p.bytes > q.bytes;
  return x < y;
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
  std::vector<int> order(buffers.size());
  Placement best;
  best.peak = std::numeric_limits<int64_t>::max();
  for (Before before : {largest_first, earliest_first, longest_first}) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int x, int y) { return before(buffers, x, y); });
    Placement candidate = place_in_order(buffers, index, order);
    if (candidate.peak < best.peak) best = std::move(candidate);
    if (best.peak <= lower_bound) break;
  }
  if (buffers.empty()) best.peak = 0;
  return best;
}

}  // namespace ephost::plan
