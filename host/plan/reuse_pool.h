// Free buffers waiting to be reused, grouped by provable size class and device. Internal to the
// allocation plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plan/plan_graph.h"

namespace ephost::plan {

class ReusePool {
 public:
  // `g` must outlive the pool.
  explicit ReusePool(const PlanGraph& g);

  // Whether the value's byte size is provable before running (static_bytes or shape_key).
  bool has_provable_size(int value) const;
  // The value died: its buffer becomes available to values of the same size class and device.
  void release(int value);
  // Takes the most recently released buffer that `value` can use and returns the dead value that
  // held it, or -1 when none fits. A buffer is taken at most once.
  int take(int value);

 private:
  struct SizeClass {
    int32_t device;
    bool symbolic;    // payload is an interned shape_key, else a byte count
    int64_t payload;
    bool operator==(const SizeClass& o) const {
      return device == o.device && symbolic == o.symbolic && payload == o.payload;
    }
  };
  struct SizeClassHash {
    size_t operator()(const SizeClass& c) const;
  };
  struct Entry {
    int value;
    uint64_t released_at;  // global release counter: larger = more recent
  };
  using Stack = std::vector<Entry>;

  // The stacks `value` can draw from: by static_bytes and by shape_key (either may be absent).
  int classes_of(int value, Stack* out[2]);
  // Drops entries already taken through the value's other size class; returns the top or nullptr.
  const Entry* live_top(Stack& stack) const;

  const PlanGraph& g_;
  std::unordered_map<std::string_view, int64_t> shape_key_ids_;
  std::unordered_map<SizeClass, Stack, SizeClassHash> free_;
  std::vector<bool> taken_;
  uint64_t release_counter_ = 0;
};

}  // namespace ephost::plan
