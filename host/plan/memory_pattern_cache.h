// Memory patterns recorded per input-shape signature: with dynamic shapes every distinct set of
// input shapes has its own pattern. Shared by concurrent runs of one session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plan/memory_pattern.h"

namespace ephost::plan {

class MemoryPatternCache {
 public:
  static constexpr size_t kDefaultCapacity = 64;

  explicit MemoryPatternCache(size_t capacity = kDefaultCapacity);

  // "[1,3,224,224][1,10]": one bracket per input in feed order; "[]" for a scalar. Two lists of
  // shapes have the same signature exactly when they are equal.
  static std::string signature(const std::vector<std::vector<int64_t>>& input_shapes);

  // The pattern recorded for `signature`, or nullptr. Marks it most recently used.
  std::shared_ptr<const MemoryPattern> find(const std::string& signature) const;

  // Records a pattern unless one is already recorded for the signature (the first insert wins, so
  // concurrent runs that recorded the same signature agree on one pattern). Returns the pattern now
  // cached for the signature (nullptr, and nothing recorded, for a null pattern). When full, the
  // least recently used entry is evicted.
  std::shared_ptr<const MemoryPattern> insert(const std::string& signature,
                                              std::shared_ptr<const MemoryPattern> pattern);

  using Entry = std::pair<std::string, std::shared_ptr<const MemoryPattern>>;

  size_t size() const;
  size_t capacity() const { return capacity_; }
  // A snapshot of the recorded patterns, most recently used first (for reports; does not touch the
  // recency order).
  std::vector<Entry> entries() const;

 private:

  const size_t capacity_;
  mutable std::mutex mutex_;
  mutable std::list<Entry> recency_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> entries_;
};

}  // namespace ephost::plan
