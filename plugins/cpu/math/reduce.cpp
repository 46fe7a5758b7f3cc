#include "reduce.h"

namespace ephost::cpu::math {

ReducePlan plan_reduce(const Shape& x, const std::vector<int64_t>& axes) {
  const size_t r = x.size();
  std::vector<bool> red(r, false);
  for (int64_t a : axes) red[a] = true;
  const Shape st = strides_of(x);
  std::vector<ReducePlan::Group> groups;
  ReducePlan p;
  for (size_t i = 0; i < r; ++i) {
    if (red[i]) p.count *= x[i];
    else p.outputs *= x[i];
    if (x[i] == 1) continue;
    if (!groups.empty() && groups.back().reduced == red[i] && groups.back().stride == st[i] * x[i]) {
      groups.back().size *= x[i];
      groups.back().stride = st[i];
    } else {
      groups.push_back({x[i], st[i], red[i]});
    }
  }
  if (!groups.empty() && !groups.back().reduced) {
    p.lanes = groups.back().size;
    groups.pop_back();
  }
  for (const auto& g : groups) (g.reduced ? p.reduced : p.kept).push_back(g);
  return p;
}

Shape reduce_shape(const Shape& x, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<bool> red(x.size(), false);
  for (int64_t a : axes) red[a] = true;
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!red[i]) out.push_back(x[i]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

}  // namespace ephost::cpu::math
