// A set of small integer ids with insert and pop-smallest in O(log64 n): a hierarchy of 64-bit
// occupancy words. It lets Kahn's algorithm break ties by step id and still run in (practically)
// linear time, where a binary heap would add a log2 n factor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ephost::plan {

class ReadySet {
 public:
  // Ids in [0, capacity).
  explicit ReadySet(int capacity);

  void insert(int id);
  bool empty() const { return levels_.back()[0] == 0; }
  // Removes and returns the smallest id; the set must not be empty.
  int pop_min();

 private:
  // levels_[0] holds one bit per id; each word of levels_[k + 1] says which words of levels_[k] are
  // non-zero. The last level is a single word.
  std::vector<std::vector<uint64_t>> levels_;
};

}  // namespace ephost::plan
