#include "plan/overlap_index.h"

namespace ephost::plan {

namespace {

// Calls add(node) for the canonical segment-tree nodes covering [first, last]: disjoint, at most two
// per level, so a point query meets each buffer at most once.
template <typename Add>
void for_each_canonical_node(int leaves, int first, int last, Add&& add) {
  for (int lo = first + leaves, hi = last + leaves + 1; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) add(lo++);
    if (hi & 1) add(--hi);
  }
}

}  // namespace

OverlapIndex::OverlapIndex(const std::vector<Lifetime>& buffers, int steps) : buffers_(buffers) {
  while (leaves_ < steps) leaves_ *= 2;
  const int n = static_cast<int>(buffers.size());

  node_begin_.assign(static_cast<size_t>(2 * leaves_) + 1, 0);
  for (const Lifetime& b : buffers)
    for_each_canonical_node(leaves_, b.first, b.last, [&](int node) { ++node_begin_[static_cast<size_t>(node) + 1]; });
  for (size_t k = 1; k < node_begin_.size(); ++k) node_begin_[k] += node_begin_[k - 1];
  node_buffers_.resize(static_cast<size_t>(node_begin_.back()));
  std::vector<int> fill(node_begin_.begin(), node_begin_.end() - 1);
  for (int i = 0; i < n; ++i) {
    const Lifetime& b = buffers[static_cast<size_t>(i)];
    for_each_canonical_node(leaves_, b.first, b.last, [&](int node) {
      node_buffers_[static_cast<size_t>(fill[static_cast<size_t>(node)]++)] = i;
    });
  }

  start_begin_.assign(static_cast<size_t>(steps) + 1, 0);
  for (const Lifetime& b : buffers) ++start_begin_[static_cast<size_t>(b.first) + 1];
  for (size_t t = 1; t < start_begin_.size(); ++t) start_begin_[t] += start_begin_[t - 1];
  by_start_.resize(buffers.size());
  std::vector<int> next(start_begin_.begin(), start_begin_.end() - 1);
  for (int i = 0; i < n; ++i)
    by_start_[static_cast<size_t>(next[static_cast<size_t>(buffers[static_cast<size_t>(i)].first)]++)] = i;
}

}  // namespace ephost::plan
