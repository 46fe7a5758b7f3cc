#include "plan/reuse_pool.h"

#include <functional>

namespace ephost::plan {

size_t ReusePool::SizeClassHash::operator()(const SizeClass& c) const {
  const uint64_t mixed = static_cast<uint64_t>(c.payload) * 0x9E3779B97F4A7C15ull ^
                         (static_cast<uint64_t>(static_cast<uint32_t>(c.device)) << 1) ^ (c.symbolic ? 1u : 0u);
  return std::hash<uint64_t>{}(mixed);
}

ReusePool::ReusePool(const PlanGraph& g) : g_(g), taken_(g.values.size(), false) {}

bool ReusePool::has_provable_size(int value) const {
  const PlanValue& v = g_.values[static_cast<size_t>(value)];
  return v.static_bytes >= 0 || !v.shape_key.empty();
}

int ReusePool::classes_of(int value, Stack* out[2]) {
  const PlanValue& v = g_.values[static_cast<size_t>(value)];
  int n = 0;
  if (v.static_bytes >= 0) out[n++] = &free_[SizeClass{v.device, false, v.static_bytes}];
  if (!v.shape_key.empty()) {
    const auto id = shape_key_ids_.emplace(v.shape_key, static_cast<int64_t>(shape_key_ids_.size())).first->second;
    out[n++] = &free_[SizeClass{v.device, true, id}];
  }
  return n;
}

void ReusePool::release(int value) {
  Stack* stacks[2];
  const int n = classes_of(value, stacks);
  ++release_counter_;
  for (int i = 0; i < n; ++i) stacks[i]->push_back(Entry{value, release_counter_});
}

const ReusePool::Entry* ReusePool::live_top(Stack& stack) const {
  while (!stack.empty() && taken_[static_cast<size_t>(stack.back().value)]) stack.pop_back();
  return stack.empty() ? nullptr : &stack.back();
}

int ReusePool::take(int value) {
  Stack* stacks[2];
  const int n = classes_of(value, stacks);
  Stack* best = nullptr;
  for (int i = 0; i < n; ++i) {
    const Entry* top = live_top(*stacks[i]);
    if (top != nullptr && (best == nullptr || top->released_at > best->back().released_at)) best = stacks[i];
  }
  if (best == nullptr) return -1;
  const int dead = best->back().value;
  best->pop_back();
  taken_[static_cast<size_t>(dead)] = true;
  return dead;
}

}  // namespace ephost::plan
