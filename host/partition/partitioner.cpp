#include <algorithm>
#include <deque>
#include <unordered_set>

#include "core/error.h"
#include "core/log.h"
#include "partition/partition.h"

namespace ephost {
namespace {

constexpr int kUnassigned = -1;

std::string join_names(const std::vector<const Node*>& nodes, size_t limit = 8) {
  std::string s;
  for (size_t i = 0; i < nodes.size() && i < limit; ++i) {
    if (i) s += ", ";
    s += "'" + nodes[i]->name + "'";
  }
  if (nodes.size() > limit) s += fmt::format(" and {} more", nodes.size() - limit);
  return s;
}

std::vector<std::string> names_of(const std::vector<const Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.push_back(n->name);
  return out;
}

class Partitioner {
 public:
  Partitioner(const Graph& graph, const std::vector<std::string>& providers, const PartitionOptions& options)
      : graph_(graph), providers_(providers), options_(options), group_of_(graph.nodes.size(), -1) {
    result_.graph = &graph;
    result_.node_provider.assign(graph.nodes.size(), kUnassigned);
    topo_position_.assign(graph.nodes.size(), 0);
    for (size_t i = 0; i < graph.topological_order.size(); ++i) topo_position_[graph.topological_order[i]->index] = i;
  }

  // An EPContext node whose context `provider` loaded: a one-node group with the node's own inputs
  // and outputs, in node order (the order the loaded compute unit uses).
  void preassign(const PartitionOptions::Preassigned& p) {
    const Node* node = p.node;
    result_.node_provider[node->index] = static_cast<int>(p.provider);
    PartitionGroup g;
    g.provider = p.provider;
    g.fused = true;
    g.nodes = {node};
    g.name = node->name;
    g.preloaded = p.compute;
    g.runner = p.runner;
    auto view = std::make_unique<GraphView>();
    view->name = node->name;
    view->graph = &graph_;
    view->nodes = {node};
    for (const Value* v : node->inputs)
      if (v) view->inputs.push_back(v);
    for (const Value* v : node->outputs)
      if (v) view->outputs.push_back(v);
    g.view = std::move(view);
    result_.groups.push_back(std::move(g));
  }

  void take_claims(size_t provider, std::vector<EphostCapability::Claim> claims) {
    if (options_.excluded) drop_excluded(provider, claims);
    std::vector<const Node*> taken_singles;
    for (auto& claim : claims) {
      if (!claim.refused.empty())
        note(provider, claim.nodes, std::move(claim.refused), true);
      else if (claim.fused)
        take_fused(provider, std::move(claim.nodes));
      else
        take_single(provider, claim.nodes.front(), &taken_singles);
    }
    // One note for all single-node claims an earlier provider had already won: the CPU plugin claims
    // everything it can run, and a note per node would drown the interesting ones.
    if (!taken_singles.empty()) {
      std::string owners;
      std::unordered_set<int> seen;
      for (const Node* n : taken_singles) {
        int o = result_.node_provider[n->index];
        if (seen.insert(o).second) owners += (owners.empty() ? "'" : ", '") + providers_[o] + "'";
      }
      note(provider, taken_singles,
           fmt::format("{} single-node claim(s) refused: already assigned to {} (asked earlier)",
                       taken_singles.size(), owners),
           true);
    }
  }

  void note(size_t provider, const std::vector<const Node*>& nodes, std::string reason, bool refused) {
    result_.notes.push_back({provider, names_of(nodes), std::move(reason), refused});
  }

  std::vector<const Node*> unassigned() const {
    std::vector<const Node*> left;
    for (const Node* n : graph_.topological_order)
      if (result_.node_provider[n->index] == kUnassigned) left.push_back(n);
    return left;
  }

  GraphPartition finish() {
    // Groups in topological order of their first node, so reports read top to bottom.
    std::sort(result_.groups.begin(), result_.groups.end(), [&](const PartitionGroup& a, const PartitionGroup& b) {
      return topo_position_[a.nodes.front()->index] < topo_position_[b.nodes.front()->index];
    });
    return std::move(result_);
  }

 private:
  // Removes the nodes `provider` may not take from its claims, with one note saying why.
  void drop_excluded(size_t provider, std::vector<EphostCapability::Claim>& claims) {
    std::vector<const Node*> dropped;
    for (auto& claim : claims) {
      auto keep_end = std::stable_partition(claim.nodes.begin(), claim.nodes.end(), [&](const Node* n) {
        return !options_.excluded(provider, *n);
      });
      dropped.insert(dropped.end(), keep_end, claim.nodes.end());
      claim.nodes.erase(keep_end, claim.nodes.end());
    }
    claims.erase(std::remove_if(claims.begin(), claims.end(), [](const auto& c) { return c.nodes.empty(); }),
                 claims.end());
    if (!dropped.empty())
      note(provider, dropped,
           fmt::format("{} node(s) not given to '{}': they replace an EPContext node whose cached context that "
                       "provider refused, so they go to the providers after it",
                       dropped.size(), providers_[provider]),
           true);
  }

  void take_single(size_t provider, const Node* node, std::vector<const Node*>* taken) {
    int owner = result_.node_provider[node->index];
    if (owner != kUnassigned) {
      if (static_cast<size_t>(owner) != provider) taken->push_back(node);
      return;
    }
    result_.node_provider[node->index] = static_cast<int>(provider);
    PartitionGroup g;
    g.provider = provider;
    g.nodes = {node};
    g.name = node->name;
    result_.groups.push_back(std::move(g));
  }

  void take_fused(size_t provider, std::vector<const Node*> nodes) {
    // Remove duplicates, then nodes an earlier provider (or an earlier claim) already took.
    std::unordered_set<const Node*> unique;
    std::vector<const Node*> free_nodes, taken;
    for (const Node* n : nodes) {
      if (!unique.insert(n).second) continue;
      (result_.node_provider[n->index] == kUnassigned ? free_nodes : taken).push_back(n);
    }
    if (free_nodes.empty()) {
      note(provider, taken, "fused group refused: every node was already assigned to an earlier provider", true);
      return;
    }
    if (!taken.empty()) {
      std::string owners;
      std::unordered_set<int> seen;
      for (const Node* n : taken) {
        int o = result_.node_provider[n->index];
        if (seen.insert(o).second) owners += (owners.empty() ? "'" : ", '") + providers_[o] + "'";
      }
      note(provider, taken,
           fmt::format("fused group trimmed: {} node(s) already assigned to {}; the remaining {} node(s) were "
                       "checked and fused",
                       taken.size(), owners, free_nodes.size()),
           false);
    }
    std::sort(free_nodes.begin(), free_nodes.end(),
              [&](const Node* a, const Node* b) { return topo_position_[a->index] < topo_position_[b->index]; });
    std::string cycle_path;
    if (creates_cycle(free_nodes, &cycle_path)) {
      note(provider, free_nodes,
           fmt::format("fused group refused: fusing it would create a cycle ({}); the nodes stay available to the "
                       "next providers",
                       cycle_path),
           true);
      return;
    }
    int group_index = static_cast<int>(fused_groups_.size());
    fused_groups_.push_back(free_nodes);
    for (const Node* n : free_nodes) {
      result_.node_provider[n->index] = static_cast<int>(provider);
      group_of_[n->index] = group_index;
    }
    PartitionGroup g;
    g.provider = provider;
    g.fused = true;
    g.nodes = free_nodes;
    g.name = options_.fused_name_prefix.empty()
                 ? fmt::format("{}_fused_{}_{}", providers_[provider], graph_.name.empty() ? "graph" : graph_.name,
                               fused_count_++)
                 : fmt::format("{}{}_{}", options_.fused_name_prefix, providers_[provider], fused_count_++);
    g.view = make_group_view(graph_, g.nodes, g.name);
    result_.groups.push_back(std::move(g));
  }

  // True when some path leaves the candidate group and re-enters it, counting already accepted fused
  // groups as single nodes (contracting both must keep the graph acyclic).
  bool creates_cycle(const std::vector<const Node*>& candidate, std::string* path) {
    std::unordered_set<const Node*> in_candidate(candidate.begin(), candidate.end());
    std::vector<char> visited(graph_.nodes.size(), 0);
    std::vector<char> group_expanded(fused_groups_.size(), 0);
    std::deque<std::pair<const Node*, const Node*>> queue;  // (node, candidate node it came from)
    auto push_consumers = [&](const Node* n, const Node* origin) {
      for (const Value* v : n->outputs) {
        if (!v) continue;
        for (const Node* c : v->consumers) {
          if (in_candidate.count(n) && in_candidate.count(c)) continue;  // edge inside the candidate
          queue.emplace_back(c, origin);
        }
      }
    };
    for (const Node* n : candidate) push_consumers(n, n);
    while (!queue.empty()) {
      auto [node, origin] = queue.front();
      queue.pop_front();
      if (in_candidate.count(node)) {
        *path = fmt::format("'{}' reaches '{}' through nodes outside the group", origin->name, node->name);
        return true;
      }
      if (visited[node->index]) continue;
      visited[node->index] = 1;
      push_consumers(node, origin);
      int g = group_of_[node->index];
      if (g >= 0 && !group_expanded[g]) {
        group_expanded[g] = 1;
        for (const Node* member : fused_groups_[g]) queue.emplace_back(member, origin);
      }
    }
    return false;
  }

  const Graph& graph_;
  const std::vector<std::string>& providers_;
  const PartitionOptions& options_;
  GraphPartition result_;
  std::vector<size_t> topo_position_;
  std::vector<int> group_of_;
  std::vector<std::vector<const Node*>> fused_groups_;
  size_t fused_count_ = 0;
};

}  // namespace

GraphPartition partition_graph(const Graph& graph, const std::vector<std::string>& provider_names,
                               const CapabilityQuery& query, const PartitionOptions& options) {
  Partitioner p(graph, provider_names, options);
  for (const auto& pre : options.preassigned) p.preassign(pre);
  auto is_left_out = [&options](size_t provider) {
    return provider < options.left_out.size() && !options.left_out[provider].empty();
  };
  for (size_t i = 0; i < provider_names.size(); ++i) {
    if (p.unassigned().empty()) break;
    if (is_left_out(i)) continue;
    std::vector<EphostCapability::Claim> claims;
    try {
      claims = query(i, *graph.view);
    } catch (const std::exception& e) {
      // As ONNX Runtime does, a failing get_capability costs the provider this graph, not the session;
      // unlike ONNX Runtime, it is reported.
      log_warning(fmt::format("provider '{}': get_capability on graph '{}' failed: {}", provider_names[i],
                              graph.name, e.what()));
      p.note(i, {}, fmt::format("get_capability failed: {}", e.what()), true);
      continue;
    }
    p.take_claims(i, std::move(claims));
  }
  std::vector<const Node*> left = p.unassigned();
  if (!left.empty()) {
    std::string ops;
    for (size_t i = 0; i < left.size() && i < 8; ++i) ops += (i ? ", " : "") + left[i]->op_type;
    std::string asked, not_asked;
    for (size_t i = 0; i < provider_names.size(); ++i) {
      std::string& list = is_left_out(i) ? not_asked : asked;
      list += (list.empty() ? "" : ", ") + provider_names[i];
    }
    if (!not_asked.empty()) not_asked = " (left out: " + not_asked + ")";
    fail(EPHOST_INVALID_GRAPH, "no provider claimed {} node(s) of graph '{}': {} (ops: {}); providers asked: {}{}. {}",
         left.size(), graph.name, join_names(left), ops, asked.empty() ? "none" : asked, not_asked,
         options.unclaimed_hint);
  }
  return p.finish();
}

}  // namespace ephost
