#include "plan/memory_pattern.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "plan/offset_assignment.h"

namespace ephost::plan {

namespace {

int64_t align_up(int64_t bytes) { return (bytes + kPatternAlignment - 1) / kPatternAlignment * kPatternAlignment; }

bool in_pattern(const ValuePlan& vp, int64_t observed) {
  return (vp.kind == AllocKind::kAllocate || vp.kind == AllocKind::kReuse) && observed >= 0 && vp.def_step >= 0;
}

// The values of one device in the pattern, grouped by buffer: a value written in place of its
// step's input (ValuePlan::in_place) shares that input's buffer, so the chain is one lifetime, from
// the first value's definition to the last one's last use, as large as its largest value.
struct DeviceValues {
  std::vector<std::vector<int>> buffers;  // the values of each buffer
  std::vector<Lifetime> lifetimes;        // per buffer
};

// The value whose buffer `v` lives in: itself, or the first of its chain of in-place owners.
int buffer_owner(const AllocationPlan& plan, const std::vector<int64_t>& observed, int v) {
  while (true) {
    const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
    if (!vp.in_place || vp.reuse_of < 0) return v;
    const int owner = vp.reuse_of;
    if (!in_pattern(plan.values[static_cast<size_t>(owner)], observed[static_cast<size_t>(owner)])) return v;
    v = owner;
  }
}

}  // namespace

const MemoryBlock* MemoryPattern::block(int32_t device) const {
  for (const MemoryBlock& b : blocks)
    if (b.device == device) return &b;
  return nullptr;
}

MemoryPattern make_memory_pattern(const PlanGraph& g, const AllocationPlan& plan,
                                  const std::vector<int64_t>& observed_bytes) {
  if (observed_bytes.size() != g.values.size() || plan.values.size() != g.values.size()) {
    fail(EPHOST_INVALID_ARGUMENT, "memory pattern: {} observed sizes and {} planned values for a graph of {} values",
         observed_bytes.size(), plan.values.size(), g.values.size());
  }
  std::map<int32_t, DeviceValues> by_device;
  std::map<int, size_t> buffer_of_owner;  // owner value -> index into its device's buffers
  for (int v = 0; v < static_cast<int>(g.values.size()); ++v) {
    const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
    const int64_t observed = observed_bytes[static_cast<size_t>(v)];
    if (!in_pattern(vp, observed)) continue;
    DeviceValues& d = by_device[g.values[static_cast<size_t>(v)].device];
    const int owner = buffer_owner(plan, observed_bytes, v);
    auto [it, fresh] = buffer_of_owner.emplace(owner, d.buffers.size());
    if (fresh) {
      d.buffers.emplace_back();
      d.lifetimes.push_back(Lifetime{vp.def_step, vp.last_use_step, 0});
    }
    d.buffers[it->second].push_back(v);
    Lifetime& life = d.lifetimes[it->second];
    life.first = std::min(life.first, vp.def_step);
    life.last = std::max(life.last, vp.last_use_step);
    life.bytes = std::max(life.bytes, align_up(observed));
  }

  MemoryPattern pattern;
  pattern.offsets.assign(g.values.size(), -1);
  pattern.sizes.assign(g.values.size(), -1);
  const int steps = static_cast<int>(plan.release_after.size());
  for (const auto& [device, d] : by_device) {
    const Placement placement = assign_offsets(d.lifetimes, steps);
    for (size_t k = 0; k < d.buffers.size(); ++k) {
      for (int v : d.buffers[k]) {
        pattern.offsets[static_cast<size_t>(v)] = placement.offsets[k];
        pattern.sizes[static_cast<size_t>(v)] = observed_bytes[static_cast<size_t>(v)];
      }
    }
    pattern.blocks.push_back(MemoryBlock{device, placement.peak, max_live_bytes(d.lifetimes, steps)});
    pattern.peak_bytes += placement.peak;
  }
  return pattern;
}

}  // namespace ephost::plan
