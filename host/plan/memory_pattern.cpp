#include "plan/memory_pattern.h"

#include <map>

#include "core/error.h"
#include "plan/offset_assignment.h"

namespace ephost::plan {

namespace {

int64_t align_up(int64_t bytes) { return (bytes + kPatternAlignment - 1) / kPatternAlignment * kPatternAlignment; }

bool in_pattern(const ValuePlan& vp, int64_t observed) {
  return (vp.kind == AllocKind::kAllocate || vp.kind == AllocKind::kReuse) && observed >= 0 && vp.def_step >= 0;
}

// The values of one device in the pattern, and their lifetimes in the same order.
struct DeviceValues {
  std::vector<int> values;
  std::vector<Lifetime> lifetimes;
};

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
  for (int v = 0; v < static_cast<int>(g.values.size()); ++v) {
    const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
    const int64_t observed = observed_bytes[static_cast<size_t>(v)];
    if (!in_pattern(vp, observed)) continue;
    DeviceValues& d = by_device[g.values[static_cast<size_t>(v)].device];
    d.values.push_back(v);
    d.lifetimes.push_back(Lifetime{vp.def_step, vp.last_use_step, align_up(observed)});
  }

  MemoryPattern pattern;
  pattern.offsets.assign(g.values.size(), -1);
  pattern.sizes.assign(g.values.size(), -1);
  const int steps = static_cast<int>(plan.release_after.size());
  for (const auto& [device, d] : by_device) {
    const Placement placement = assign_offsets(d.lifetimes, steps);
    for (size_t k = 0; k < d.values.size(); ++k) {
      pattern.offsets[static_cast<size_t>(d.values[k])] = placement.offsets[k];
      pattern.sizes[static_cast<size_t>(d.values[k])] = observed_bytes[static_cast<size_t>(d.values[k])];
    }
    pattern.blocks.push_back(MemoryBlock{device, placement.peak, max_live_bytes(d.lifetimes, steps)});
    pattern.peak_bytes += placement.peak;
  }
  return pattern;
}

}  // namespace ephost::plan
