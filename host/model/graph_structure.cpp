#include "model/graph_structure.h"

#include <functional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/log.h"

namespace ephost {
namespace {

// The names one graph defines, and the graphs around it.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string_view, int> defs;  // name -> producing node index, -1 input/initializer

  bool visible(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->defs.count(name)) return true;
    return false;
  }
};

std::string node_label(const onnx::GraphProto& g, int i) {
  const auto& node = g.node(i);
  return node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
}

// One graph's check: its definitions, then its edges (recursing into subgraphs), then its order.
class GraphStructure {
 public:
  GraphStructure(onnx::GraphProto& g, const Scope* parent, const std::string& where, int depth)
      : g_(g), where_(where), depth_(depth), n_(g.node_size()) {
    if (depth > 64) fail(EPHOST_INVALID_GRAPH, "subgraphs nested deeper than 64 levels");
    scope_.parent = parent;
    consumers_.resize(static_cast<size_t>(n_));
    indegree_.assign(static_cast<size_t>(n_), 0);
  }

  // Returns the names the graph (or its subgraphs) reads from enclosing graphs.
  std::vector<std::string> check() {
    define_values();
    link_node_inputs();
    check_outputs();
    sort_nodes();
    return std::move(outer_reads_);
  }

 private:
  // Graph inputs, initializers and node outputs, each defined once.
  void define_values() {
    scope_.defs.reserve(static_cast<size_t>(g_.input_size() + g_.initializer_size() + g_.node_size() * 2));
    for (const auto& in : g_.input()) {
      if (in.name().empty()) fail(EPHOST_INVALID_GRAPH, "{} has an input with an empty name", where_);
      if (!scope_.defs.emplace(in.name(), -1).second)
        fail(EPHOST_INVALID_GRAPH, "{} declares input '{}' more than once", where_, in.name());
    }
    for (const auto& init : g_.initializer()) {
      if (init.name().empty()) fail(EPHOST_INVALID_GRAPH, "{} has an initializer with an empty name", where_);
      if (!initializer_names_.insert(init.name()).second)
        fail(EPHOST_INVALID_GRAPH, "{} defines initializer '{}' more than once", where_, init.name());
      scope_.defs.emplace(init.name(), -1);  // also an input: an overridable default
    }
    for (int i = 0; i < n_; ++i) {
      const auto& node = g_.node(i);
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        auto [it, inserted] = scope_.defs.emplace(out, i);
        if (!inserted) {
          std::string prev = it->second < 0
                                 ? std::string(initializer_names_.count(out) ? "an initializer" : "a graph input")
                                 : fmt::format("node '{}' ({})", node_label(g_, it->second),
                                               g_.node(it->second).op_type());
          fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) output '{}' is already defined by {}", where_,
               node_label(g_, i), node.op_type(), out, prev);
        }
      }
    }
  }

  // Node i reads `name`: an edge producer -> consumer (with multiplicity), or a read of an enclosing
  // graph (recorded once).
  void use(int i, const std::string& name, bool implicit) {
    auto it = scope_.defs.find(name);
    if (it != scope_.defs.end()) {
      if (it->second >= 0) {
        consumers_[static_cast<size_t>(it->second)].push_back(i);
        ++indegree_[static_cast<size_t>(i)];
      }
      return;
    }
    if (scope_.parent && scope_.parent->visible(name)) {
      if (outer_seen_.insert(name).second) outer_reads_.push_back(name);
      return;
    }
    const auto& node = g_.node(i);
    fail(EPHOST_INVALID_GRAPH,
         "{}: node '{}' ({}) {} '{}' is not a graph input, an initializer, or the output of any node{}", where_,
         node_label(g_, i), node.op_type(), implicit ? "reads (in a subgraph) value" : "input", name,
         scope_.parent ? " (in this graph or an enclosing one)" : "");
  }

  // Every node's inputs, and what its subgraphs read from this graph or above.
  void link_node_inputs() {
    for (int i = 0; i < n_; ++i) {
      auto& node = *g_.mutable_node(i);
      for (const auto& in : node.input())
        if (!in.empty()) use(i, in, false);
      for (auto& a : *node.mutable_attribute()) {
        if (a.type() == onnx::AttributeProto::GRAPHS || a.graphs_size() > 0)
          fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) has GRAPHS attribute '{}', which no operator supports",
               where_, node_label(g_, i), node.op_type(), a.name());
        if (a.type() != onnx::AttributeProto::GRAPH) continue;
        if (!a.has_g())
          fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) graph attribute '{}' has no graph", where_,
               node_label(g_, i), node.op_type(), a.name());
        const std::string sub_where =
            fmt::format("subgraph '{}' (attribute '{}' of node '{}')", a.g().name(), a.name(), node_label(g_, i));
        const std::vector<std::string> sub_reads =
            GraphStructure(*a.mutable_g(), &scope_, sub_where, depth_ + 1).check();
        for (const auto& name : sub_reads) use(i, name, true);
      }
    }
  }

  void check_outputs() {
    for (const auto& out : g_.output()) {
      if (!out.name().empty() && scope_.defs.count(out.name())) continue;
      if (!out.name().empty() && scope_.parent && scope_.parent->visible(out.name())) {
        if (outer_seen_.insert(out.name()).second) outer_reads_.push_back(out.name());
        continue;
      }
      fail(EPHOST_INVALID_GRAPH,
           "{}: graph output '{}' is not a graph input, an initializer, or the output of any node", where_,
           out.name());
    }
  }

  // Kahn, ties by original index; a cycle is an error naming its nodes, an unsorted graph is sorted.
  void sort_nodes() {
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n_; ++i)
      if (indegree_[static_cast<size_t>(i)] == 0) ready.push(i);
    std::vector<int> order;
    order.reserve(static_cast<size_t>(n_));
    bool sorted = true;
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      if (i != static_cast<int>(order.size())) sorted = false;
      order.push_back(i);
      for (int c : consumers_[static_cast<size_t>(i)])
        if (--indegree_[static_cast<size_t>(c)] == 0) ready.push(c);
    }
    if (static_cast<int>(order.size()) != n_) fail_on_cycle();
    if (!sorted) {
      // Reorder without moving the NodeProto objects (string_views into them stay valid).
      log_verbose(fmt::format("{}: nodes are not topologically sorted; sorting them", where_));
      std::vector<onnx::NodeProto*> nodes(static_cast<size_t>(n_));
      g_.mutable_node()->ExtractSubrange(0, n_, nodes.data());
      for (int i : order) g_.mutable_node()->AddAllocated(nodes[static_cast<size_t>(i)]);
    }
  }

  // The nodes Kahn left (the first 10), and one edge of the cycle.
  [[noreturn]] void fail_on_cycle() const {
    std::string left;
    int count = 0, first = -1;
    for (int i = 0; i < n_; ++i) {
      if (indegree_[static_cast<size_t>(i)] == 0) continue;
      if (first < 0) first = i;
      if (count < 10) left += fmt::format("{}'{}' ({})", count ? ", " : "", node_label(g_, i), g_.node(i).op_type());
      ++count;
    }
    if (count > 10) left += fmt::format(" and {} more", count - 10);
    std::string edge;
    for (const auto& in : g_.node(first).input()) {
      auto it = scope_.defs.find(in);
      if (it != scope_.defs.end() && it->second >= 0 && indegree_[static_cast<size_t>(it->second)] != 0) {
        edge = fmt::format("; node '{}' reads '{}', produced by node '{}' which depends on it",
                           node_label(g_, first), in, node_label(g_, it->second));
        break;
      }
    }
    fail(EPHOST_INVALID_GRAPH, "{} has a cycle: {} node(s) left unsorted: {}{}", where_, count, left, edge);
  }

  onnx::GraphProto& g_;
  const std::string& where_;
  const int depth_;
  const int n_;
  Scope scope_;
  std::unordered_set<std::string_view> initializer_names_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> indegree_;
  std::unordered_set<std::string> outer_seen_;
  std::vector<std::string> outer_reads_;
};

}  // namespace

void check_graph_structure(onnx::GraphProto& graph, const std::string& where) {
  GraphStructure(graph, nullptr, where, 0).check();
}

}  // namespace ephost
