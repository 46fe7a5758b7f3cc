#include <unordered_set>

#include "partition/partition.h"

namespace ephost {

std::unique_ptr<GraphView> make_group_view(const Graph& graph, const std::vector<const Node*>& nodes,
                                           const std::string& name) {
  auto view = std::make_unique<GraphView>();
  view->name = name;
  view->graph = &graph;
  view->parent_node = graph.parent_node;
  view->nodes = nodes;

  std::unordered_set<const Node*> members(nodes.begin(), nodes.end());
  std::unordered_set<const Value*> seen_inputs;
  auto add_input = [&](const Value* v) {
    if (!v || (v->producer && members.count(v->producer))) return;
    if (seen_inputs.insert(v).second) {
      view->inputs.push_back(v);
      if (v->is_constant_initializer()) view->initializers.push_back(v);
    }
  };
  for (const Node* n : nodes) {
    for (const Value* v : n->inputs) add_input(v);
    for (const Value* v : n->implicit_inputs) add_input(v);
  }
  for (const Node* n : nodes) {
    for (const Value* v : n->outputs) {
      if (!v) continue;
      bool used_outside = v->is_graph_output;
      for (const Node* c : v->consumers) used_outside = used_outside || !members.count(c);
      if (used_outside) view->outputs.push_back(v);
    }
  }
  return view;
}

}  // namespace ephost
