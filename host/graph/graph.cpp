// Node / Graph members and the whole-graph view. The IR builder is in build_graph_ir.cpp.
#include "graph/graph.h"

#include <onnx/onnx_pb.h>

namespace ephost {

const onnx::AttributeProto* Node::attribute(const std::string& attribute_name) const {
  if (!proto) return nullptr;
  for (const auto& a : proto->attribute())
    if (a.name() == attribute_name) return &a;
  return nullptr;
}

Graph* Node::subgraph(const std::string& attribute_name) const {
  for (const auto& entry : subgraphs)
    if (entry.first == attribute_name) return entry.second.get();
  return nullptr;
}

std::vector<Value*> Graph::required_inputs() const {
  std::vector<Value*> result;
  for (Value* v : inputs)
    if (!v->initializer) result.push_back(v);
  return result;
}

std::unique_ptr<GraphView> make_full_view(const Graph& graph) {
  auto view = std::make_unique<GraphView>();
  view->name = graph.name;
  view->graph = &graph;
  view->parent_node = graph.parent_node;
  view->nodes.assign(graph.topological_order.begin(), graph.topological_order.end());
  view->inputs.assign(graph.inputs.begin(), graph.inputs.end());
  view->outputs.assign(graph.outputs.begin(), graph.outputs.end());
  // For the whole graph: the constant initializers it uses (overridable ones are inputs), in
  // declaration order.
  for (const Value* v : graph.initializers)
    if (v->is_constant_initializer() && (!v->consumers.empty() || v->is_graph_output))
      view->initializers.push_back(v);
  return view;
}

InitializerRelease* initializer_release_of(const Value& v) {
  return v.owner && v.owner->model ? v.owner->model->initializer_release.get() : nullptr;
}

}  // namespace ephost
