#include "convex_groups.h"

#include <unordered_map>

namespace ephost::cpu::fusion {

namespace {

// consumers[i]: the positions of the nodes that read an output of node i.
std::vector<std::vector<size_t>> consumers_of(const std::vector<sdk::Node>& nodes) {
  const size_t n = nodes.size();
  std::unordered_map<const EphostNode*, size_t> position;
  for (size_t i = 0; i < n; ++i) position[nodes[i].get()] = i;
  std::vector<std::vector<size_t>> consumers(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < nodes[i].num_inputs(); ++k) {
      if (!nodes[i].has_input(k)) continue;
      const sdk::Node p = nodes[i].input(k).producer();
      if (!p.valid()) continue;
      auto it = position.find(p.get());
      if (it != position.end()) consumers[it->second].push_back(i);
    }
  return consumers;
}

}  // namespace

void merge_convex_neighbours(const std::vector<sdk::Node>& nodes, std::vector<int>& group) {
  const size_t n = nodes.size();
  const std::vector<std::vector<size_t>> consumers = consumers_of(nodes);
  // Whether no path leaves a ∪ b and comes back into it.
  auto convex_union = [&](int a, int b) {
    std::vector<char> seen(n, 0);
    std::vector<size_t> stack;
    for (size_t i = 0; i < n; ++i)
      if (group[i] == a || group[i] == b)
        for (size_t c : consumers[i])
          if (group[c] != a && group[c] != b && !seen[c]) {
            seen[c] = 1;
            stack.push_back(c);
          }
    while (!stack.empty()) {
      const size_t u = stack.back();
      stack.pop_back();
      for (size_t c : consumers[u]) {
        if (group[c] == a || group[c] == b) return false;  // leaves the union and comes back
        if (!seen[c]) {
          seen[c] = 1;
          stack.push_back(c);
        }
      }
    }
    return true;
  };
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < n && !merged; ++i) {
      if (group[i] < 0) continue;
      for (size_t c : consumers[i]) {
        const int a = group[i], b = group[c];
        if (b < 0 || a == b || !convex_union(a, b)) continue;
        for (int& g : group)
          if (g == b) g = a;
        merged = true;
        break;
      }
    }
  }
}

}  // namespace ephost::cpu::fusion
