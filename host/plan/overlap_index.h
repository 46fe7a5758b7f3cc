// Finds the buffers whose lifetimes overlap a given buffer's, in time proportional to how many there
// are (plus log steps). Built once for a fixed set of lifetimes. Internal to offset assignment.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/offset_assignment.h"

namespace ephost::plan {

class OverlapIndex {
 public:
  OverlapIndex(const std::vector<Lifetime>& buffers, int steps);

  // Calls visit(j) once for every buffer j != i whose lifetime intersects buffer i's.
  template <typename Visit>
  void for_each_overlap(int i, Visit&& visit) const;

 private:
  // A buffer alive at buffers[i].first either started earlier or at the same step (found by stabbing
  // the segment tree at that step), or starts later within buffers[i]'s lifetime (a range of the
  // buffers sorted by first step).
  template <typename Visit>
  void for_each_alive_at(int step, int skip, Visit&& visit) const;

  const std::vector<Lifetime>& buffers_;
  int leaves_ = 1;                  // segment tree width: a power of two >= steps
  std::vector<int> node_begin_;     // CSR: buffers whose lifetime covers node n's whole range, canonically
  std::vector<int> node_buffers_;
  std::vector<int> start_begin_;    // CSR: buffers by first step
  std::vector<int> by_start_;
};

template <typename Visit>
void OverlapIndex::for_each_alive_at(int step, int skip, Visit&& visit) const {
  for (int node = step + leaves_; node >= 1; node >>= 1)
    for (int k = node_begin_[static_cast<size_t>(node)]; k < node_begin_[static_cast<size_t>(node) + 1]; ++k)
      if (node_buffers_[static_cast<size_t>(k)] != skip) visit(node_buffers_[static_cast<size_t>(k)]);
}

template <typename Visit>
void OverlapIndex::for_each_overlap(int i, Visit&& visit) const {
  const Lifetime& life = buffers_[static_cast<size_t>(i)];
  for_each_alive_at(life.first, i, visit);
  for (int k = start_begin_[static_cast<size_t>(life.first) + 1]; k < start_begin_[static_cast<size_t>(life.last) + 1];
       ++k)
    visit(by_start_[static_cast<size_t>(k)]);
}

}  // namespace ephost::plan
