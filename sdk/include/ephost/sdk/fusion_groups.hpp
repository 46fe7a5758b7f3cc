// ephost plugin SDK — splitting the nodes a provider wants to fuse into groups it can claim with
// Capability::add_fused_group: each group connected, and none forming a cycle once fused.
//
// Fusing a group contracts it into one node. When a path leaves the group through a node outside it
// and comes back (a -> outside -> b, a and b in the group), the fused node would feed itself, and the
// host refuses the group. acyclic_groups keeps every group where no such path exists whole, and cuts
// the others into stages that have none.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

// The data dependencies among the nodes of one graph, by position in its topological order (the order
// Graph::nodes() lists them in). producers(v) are the positions of the nodes whose results node v
// reads, reads inside its subgraphs (implicit inputs) included; a value from outside the graph (graph
// input, initializer, outer scope) is no edge.
class NodeDependencies {
 public:
  // Reads the nodes of `graph` and their inputs (through the host: call it inside get_capability).
  explicit NodeDependencies(const Graph& graph) : nodes_(graph.nodes()), producers_(nodes_.size()) {
    std::unordered_map<size_t, size_t> position;  // node id -> position
    for (size_t v = 0; v < nodes_.size(); ++v) position[nodes_[v].id()] = v;
    for (size_t v = 0; v < nodes_.size(); ++v) {
      const Node& node = nodes_[v];
      auto add_producer_of = [&](const Value& value) {
        const Node producer = value.producer();
        if (!producer.valid()) return;
        auto it = position.find(producer.id());
        if (it != position.end()) producers_[v].push_back(it->second);
      };
      for (size_t i = 0; i < node.num_inputs(); ++i)
        if (node.has_input(i)) add_producer_of(node.input(i));
      for (size_t i = 0; i < node.num_implicit_inputs(); ++i) add_producer_of(node.implicit_input(i));
    }
    check_topological_order();
  }

  // From edges already known: `producers[v]` lists the positions of the nodes v reads, each smaller than
  // v (a topological order). For plugins with a graph of their own, and for tests. nodes() is empty.
  // Throws Error (EPHOST_INVALID_ARGUMENT) when a producer does not come before its consumer.
  explicit NodeDependencies(std::vector<std::vector<size_t>> producers) : producers_(std::move(producers)) {
    check_topological_order();
  }

  size_t size() const { return producers_.size(); }
  const std::vector<size_t>& producers(size_t position) const { return producers_[position]; }
  // The graph's nodes by position; empty when built from edges.
  const std::vector<Node>& nodes() const { return nodes_; }
  // The nodes at `positions`, in that order (for Capability::add_fused_group).
  std::vector<Node> nodes_at(const std::vector<size_t>& positions) const {
    std::vector<Node> out;
    out.reserve(positions.size());
    for (size_t p : positions) out.push_back(nodes_.at(p));
    return out;
  }

 private:
  void check_topological_order() const {
    for (size_t v = 0; v < producers_.size(); ++v)
      for (size_t u : producers_[v])
        if (u >= v)
          fail(EPHOST_INVALID_ARGUMENT, "node dependencies: node " + std::to_string(v) + " reads node " +
                                            std::to_string(u) + ", which does not come before it");
  }

  std::vector<Node> nodes_;
  std::vector<std::vector<size_t>> producers_;
};

namespace detail {

// Disjoint sets of positions 0..n-1 (union-find).
class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

// The sets `members` (increasing positions, each shifted by `offset` in `sets`) fall into: each in
// increasing order, the sets in the order of their first member.
inline std::vector<std::vector<size_t>> sets_of(DisjointSets& sets, const std::vector<size_t>& members,
                                                size_t offset) {
  std::vector<std::vector<size_t>> groups;
  std::unordered_map<size_t, size_t> group_of_root;
  for (size_t m : members) {
    auto [it, added] = group_of_root.emplace(sets.find(m - offset), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(m);
  }
  return groups;
}

// `group` (connected, increasing positions) cut into parts that form no cycle once fused. A node's
// stage is the most nodes outside the group on a path from the group to it. Along a path the stage
// never decreases and it grows past every outside node, so members of one stage are never joined by a
// path through an outside node: joining the group's edges within each stage gives parts without
// cycles. When no path leaves the group and comes back, every member is at stage 0 and the group stays
// whole. Only the nodes between the group's first and last member can lie on such a path.
inline std::vector<std::vector<size_t>> split_into_stages(const NodeDependencies& deps,
                                                          const std::vector<size_t>& group) {
  const size_t first = group.front(), width = group.back() - first + 1;
  std::vector<char> member(width, 0), reached(width, 0);
  std::vector<size_t> stage(width, 0);
  for (size_t m : group) member[m - first] = 1;
  bool staged = false;
  for (size_t v = first; v <= group.back(); ++v) {
    const size_t i = v - first;
    reached[i] = member[i];
    for (size_t u : deps.producers(v)) {
      if (u < first || !reached[u - first]) continue;
      reached[i] = 1;
      stage[i] = std::max(stage[i], stage[u - first] + (member[u - first] ? 0 : 1));
    }
    staged = staged || (member[i] && stage[i] > 0);
  }
  if (!staged) return {group};
  DisjointSets sets(width);
  for (size_t v : group)
    for (size_t u : deps.producers(v))
      if (u >= first && member[u - first] && stage[u - first] == stage[v - first])
        sets.join(u - first, v - first);
  return sets_of(sets, group, first);
}

}  // namespace detail

// The positions `wanted` marks (one flag per position of `deps`), joined along the edges between them
// into connected groups. Each group lists its positions in increasing (topological) order; groups come
// in the order of their first position. Fusing a connected group may form a cycle: claim
// acyclic_groups instead, unless the plugin rules cycles out itself. Throws Error
// (EPHOST_INVALID_ARGUMENT) when `wanted` has not one flag per node.
inline std::vector<std::vector<size_t>> connected_groups(const NodeDependencies& deps,
                                                         const std::vector<bool>& wanted) {
  if (wanted.size() != deps.size())
    fail(EPHOST_INVALID_ARGUMENT, "connected_groups: " + std::to_string(wanted.size()) + " flags for " +
                                      std::to_string(deps.size()) + " nodes");
  detail::DisjointSets sets(deps.size());
  std::vector<size_t> members;
  for (size_t v = 0; v < deps.size(); ++v) {
    if (!wanted[v]) continue;
    members.push_back(v);
    for (size_t u : deps.producers(v))
      if (wanted[u]) sets.join(u, v);
  }
  return detail::sets_of(sets, members, 0);
}

// connected_groups, each cut where fusing it would form a cycle: in every group returned, no path
// leaves the group and comes back into it, so each can be claimed with Capability::add_fused_group
// and the host accepts all of them together. A connected group without such a path is returned whole;
// one with such paths is cut into stages (see detail::split_into_stages). Same order as
// connected_groups: positions increasing within a group, groups by first position.
inline std::vector<std::vector<size_t>> acyclic_groups(const NodeDependencies& deps,
                                                       const std::vector<bool>& wanted) {
  std::vector<std::vector<size_t>> groups;
  for (const auto& connected : connected_groups(deps, wanted))
    for (auto& part : detail::split_into_stages(deps, connected)) groups.push_back(std::move(part));
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return groups;
}

}  // namespace ephost::sdk
