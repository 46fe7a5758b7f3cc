#include "graph/graph_editor.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <string>

#include "core/error.h"
#include "graph/graph_building.h"
#include "model/node_types.h"

namespace ephost {

namespace {

const Graph& root_of(const Graph& graph) {
  const Graph* g = &graph;
  while (g->parent_graph) g = g->parent_graph;
  return *g;
}

// The value `name` names in `graph` or the nearest graph around it; null when none defines it.
const Value* visible(const Graph& graph, const std::string& name) {
  for (const Graph* g = &graph; g; g = g->parent_graph)
    if (const Value* v = g->find(name)) return v;
  return nullptr;
}

void erase_consumer(Value* value, const Node* node) {
  if (!value) return;
  auto& c = value->consumers;
  c.erase(std::remove(c.begin(), c.end(), node), c.end());
}

std::string describe(const Node& node) { return fmt::format("node '{}' ({})", node.name, node.op_type); }

TypeInfo type_of_tensor(const Tensor& t) {
  TypeInfo type;
  type.kind = EPHOST_VALUE_TENSOR;
  type.elem_type = t.elem_type();
  type.tensor_elem_type = t.elem_type();
  type.has_shape = true;
  type.dims = t.shape();
  type.dim_params.assign(type.dims.size(), std::string());
  return type;
}

}  // namespace

GraphEditor::GraphEditor(Graph& main) : main_(main) {
  if (main.parent_graph)
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor: {} is a subgraph; edit it through its main graph",
         graph_detail::graph_label(main));
  if (main.frozen)
    fail(EPHOST_INVALID_ARGUMENT,
         "GraphEditor: the IR is frozen (it was partitioned); a session's graph cannot change after partitioning");
}

Graph& GraphEditor::checked_graph(Graph& graph, const char* edit) const {
  if (main_.frozen)
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: the IR is frozen (it was partitioned)", edit);
  if (&root_of(graph) != &main_)
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} does not belong to the IR this editor edits", edit,
         graph_detail::graph_label(graph));
  return graph;
}

Node& GraphEditor::checked_node(Node& node, const char* edit) const {
  if (!node.owner) fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} belongs to no graph", edit, describe(node));
  checked_graph(*node.owner, edit);
  if (removed_.count(&node))
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} was already removed by an earlier edit", edit, describe(node));
  return node;
}

std::vector<Node*> GraphEditor::splice(Graph& graph, std::vector<onnx::NodeProto> nodes) {
  return add(checked_graph(graph, "splice"), std::move(nodes), nullptr);
}

std::vector<Node*> GraphEditor::replace(Node& node, std::vector<onnx::NodeProto> nodes) {
  checked_node(node, "replace");
  return add(*node.owner, std::move(nodes), &node);
}

std::vector<Node*> GraphEditor::add(Graph& graph, std::vector<onnx::NodeProto> nodes, const Node* replaced) {
  const std::string where = replaced ? fmt::format("replacing {}", describe(*replaced))
                                     : fmt::format("splicing into {}", graph_detail::graph_label(graph));
  // Checks first, so that a refused edit changes nothing.
  std::unordered_set<std::string> defined;
  for (const onnx::NodeProto& n : nodes) {
    for (const std::string& in : n.input()) {
      if (in.empty() || defined.count(in)) continue;
      const Value* v = visible(graph, in);
      if (replaced && v && v->producer == replaced)
        fail(EPHOST_INVALID_ARGUMENT, "{}: node '{}' ({}) reads '{}', an output of the node it replaces", where,
             n.name(), n.op_type(), in);
      if (!v || dropped_.count(v))
        fail(EPHOST_INVALID_ARGUMENT, "{}: node '{}' ({}) reads '{}', which neither the graph nor an earlier new node defines",
             where, n.name(), n.op_type(), in);
    }
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      const Value* v = graph.find(out);
      if (!defined.insert(out).second || (v && !(replaced && v->producer == replaced)))
        fail(EPHOST_INVALID_ARGUMENT, "{}: node '{}' ({}) defines '{}', which is already defined", where, n.name(),
             n.op_type(), out);
    }
  }
  std::unordered_set<const Value*> adoptable;
  if (replaced) {
    for (const Value* out : replaced->outputs) {
      if (!out) continue;
      if (!defined.count(out->name))
        fail(EPHOST_INVALID_ARGUMENT, "{}: no new node defines its output '{}'", where, out->name);
      adoptable.insert(out);
    }
  }

  std::vector<std::shared_ptr<onnx::NodeProto>> owned;
  std::vector<const onnx::NodeProto*> protos;
  for (onnx::NodeProto& n : nodes) {
    owned.push_back(std::make_shared<onnx::NodeProto>(std::move(n)));
    protos.push_back(owned.back().get());
  }

  if (replaced) {
    Node& old = *const_cast<Node*>(replaced);
    detach_inputs(old);
    for (Value* out : old.outputs)
      if (out) out->producer = nullptr;
    removed_.insert(replaced);
  }
  std::vector<Node*> added = graph_detail::add_nodes(graph, protos, adoptable);
  for (size_t i = 0; i < added.size(); ++i) untyped_[added[i]] = owned[i].get();
  for (auto& p : owned) main_.edited_protos.push_back(std::move(p));
  if (replaced) {
    placed_[replaced] = added;
    placed_nodes_.insert(added.begin(), added.end());
  }
  touch(graph);
  return added;
}

namespace {

// The checks fold and precompute share: one value per output, every read output given one, element
// types kept.
void check_output_values(const Node& node, const std::vector<std::shared_ptr<Tensor>>& values, const char* edit) {
  if (values.size() != node.outputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} has {} outputs but {} values were given", edit, describe(node),
         node.outputs.size(), values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    const Value* out = node.outputs[k];
    if (!out) continue;
    const bool read = !out->consumers.empty() || out->is_graph_output;
    if (read && !values[k])
      fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} output '{}' is read but no value was given for it",
           edit, describe(node), out->name);
    if (values[k] && out->type.elem_type != 0 && values[k]->elem_type() != out->type.elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::{}: {} output '{}' has element type {}, the value given {}",
           edit, describe(node), out->name, out->type.elem_type, values[k]->elem_type());
  }
}

}  // namespace

void GraphEditor::fold(Node& node, const std::vector<std::shared_ptr<Tensor>>& values) {
  checked_node(node, "fold");
  check_output_values(node, values, "fold");
  detach_inputs(node);
  Graph& graph = *node.owner;
  for (size_t k = 0; k < values.size(); ++k) {
    Value* out = node.outputs[k];
    if (!out) continue;
    out->producer = nullptr;
    out->precomputed = nullptr;
    if (!values[k] || (out->consumers.empty() && !out->is_graph_output)) {
      drop_value(*out);
      continue;
    }
    out->initializer = values[k];
    out->type = type_of_tensor(*values[k]);
    graph.initializers.push_back(out);
  }
  removed_.insert(&node);
  touch(graph);
}

void GraphEditor::precompute(Node& node, const std::shared_ptr<PrecomputedNode>& computation) {
  checked_node(node, "precompute");
  if (!computation) fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::precompute: {}: no computation given", describe(node));
  if (computation->computed()) {
    std::vector<std::shared_ptr<Tensor>> values(node.outputs.size());
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const Value* out = node.outputs[k];
      if (out && (!out->consumers.empty() || out->is_graph_output)) values[k] = computation->output(k);
    }
    check_output_values(node, values, "precompute");
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    Value* out = node.outputs[k];
    if (!out || (out->consumers.empty() && !out->is_graph_output)) continue;
    out->precomputed = std::make_shared<PrecomputedValue>(computation, k);
  }
}

void GraphEditor::keep_precomputed_as_initializers(Node& node) {
  checked_node(node, "keep_precomputed_as_initializers");
  for (const Value* out : node.outputs)
    if (out && !out->precomputed && (!out->consumers.empty() || out->is_graph_output))
      fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::keep_precomputed_as_initializers: {} output '{}' is read but was "
           "not precomputed", describe(node), out->name);
  std::vector<std::shared_ptr<Tensor>> data(node.outputs.size());  // computed before anything changes
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (node.outputs[k] && node.outputs[k]->precomputed) data[k] = node.outputs[k]->precomputed->data();
  Graph& graph = *node.owner;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    Value* out = node.outputs[k];
    if (!out || !data[k] || out->initializer) continue;
    out->initializer = std::move(data[k]);
    graph.initializers.push_back(out);
  }
  touch(graph);
}

void GraphEditor::remove(Node& node) {
  checked_node(node, "remove");
  for (const Value* out : node.outputs)
    if (out && (!out->consumers.empty() || out->is_graph_output))
      fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::remove: {} output '{}' is still {}", describe(node), out->name,
           out->is_graph_output ? "a graph output" : fmt::format("read by node '{}'", out->consumers.front()->name));
  detach_inputs(node);
  for (Value* out : node.outputs)
    if (out) drop_value(*out);
  removed_.insert(&node);
  touch(*node.owner);
}

Value* GraphEditor::add_initializer(Graph& graph, const std::string& name, std::shared_ptr<Tensor> value) {
  checked_graph(graph, "add_initializer");
  if (name.empty()) fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::add_initializer: the initializer has no name");
  if (!value)
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::add_initializer: no value was given for initializer '{}'", name);
  if (const Value* v = visible(graph, name); v && !dropped_.count(v))
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::add_initializer: '{}' is already defined in {}", name,
         graph_detail::graph_label(*v->owner));
  auto owned = std::make_unique<Value>();
  Value* v = owned.get();
  v->name = name;
  v->owner = &graph;
  v->index = graph.values.size();
  v->type = type_of_tensor(*value);
  v->initializer = std::move(value);
  graph.values.push_back(std::move(owned));
  graph.by_name[name] = v;
  graph.initializers.push_back(v);
  touch(graph);
  return v;
}

void GraphEditor::remove_initializer(Value& value) {
  if (!value.owner) fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::remove_initializer: '{}' belongs to no graph", value.name);
  checked_graph(*value.owner, "remove_initializer");
  if (!value.is_constant_initializer() || dropped_.count(&value))
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::remove_initializer: '{}' is not a constant initializer of {}",
         value.name, graph_detail::graph_label(*value.owner));
  if (!value.consumers.empty() || value.is_graph_output)
    fail(EPHOST_INVALID_ARGUMENT, "GraphEditor::remove_initializer: '{}' is still {}", value.name,
         value.is_graph_output ? "a graph output"
                               : fmt::format("read by node '{}'", value.consumers.front()->name));
  drop_value(value);
  touch(*value.owner);
}

void GraphEditor::detach_inputs(Node& node) {
  for (Value* in : node.inputs) erase_consumer(in, &node);
  for (Value* in : node.implicit_inputs) erase_consumer(in, &node);
}

void GraphEditor::drop_value(Value& value) {
  Graph& graph = *value.owner;
  auto it = graph.by_name.find(value.name);
  if (it != graph.by_name.end() && it->second == &value) graph.by_name.erase(it);
  value.producer = nullptr;
  dropped_.insert(&value);
}

void GraphEditor::touch(Graph& graph) {
  for (Graph* g = &graph; g; g = g->parent_graph) touched_.insert(g);
}

void GraphEditor::commit() {
  checked_graph(main_, "commit");
  // Innermost graphs first: a subgraph's new outer-scope reads become implicit inputs of the node
  // holding it before that node's graph is sorted.
  std::vector<Graph*> graphs;
  for (Graph* g : touched_) {
    bool live = true;
    for (const Graph* s = g; s->parent_node && live; s = s->parent_graph) live = !removed_.count(s->parent_node);
    if (live) graphs.push_back(g);
  }
  auto depth = [](const Graph* g) {
    int d = 0;
    for (; g->parent_graph; g = g->parent_graph) ++d;
    return d;
  };
  std::stable_sort(graphs.begin(), graphs.end(), [&](const Graph* a, const Graph* b) { return depth(a) > depth(b); });
  for (Graph* g : graphs) {
    if (g->parent_node) graph_detail::link_implicit_inputs(*g->parent_node);
  }
  for (Graph* g : graphs) commit_graph(*g);
  // Outermost first: a new node of a subgraph may read what a new node of the graph around it defines.
  for (auto it = graphs.rbegin(); it != graphs.rend(); ++it) {
    type_added_nodes(**it);
    (*it)->view = make_full_view(**it);
  }
  removed_.clear();
  untyped_.clear();
  dropped_.clear();
  placed_.clear();
  placed_nodes_.clear();
  touched_.clear();
}

void GraphEditor::commit_graph(Graph& graph) {
  std::unordered_map<const Node*, std::unique_ptr<Node>*> slot;
  for (auto& n : graph.nodes) slot[n.get()] = &n;
  std::vector<std::unique_ptr<Node>> order;
  order.reserve(graph.nodes.size());
  std::vector<std::unique_ptr<Node>> gone;
  std::function<void(Node*)> emit = [&](Node* n) {
    std::unique_ptr<Node>& owner = *slot.at(n);
    if (!removed_.count(n)) {
      order.push_back(std::move(owner));
      return;
    }
    auto placed = placed_.find(n);
    if (placed != placed_.end())
      for (Node* b : placed->second) emit(b);
    gone.push_back(std::move(owner));
  };
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node* n = graph.nodes[i].get();
    if (n && !placed_nodes_.count(n)) emit(n);
  }
  graph.nodes = std::move(order);
  for (size_t i = 0; i < graph.nodes.size(); ++i) graph.nodes[i]->index = i;

  auto is_dropped = [&](const Value* v) { return dropped_.count(v) > 0; };
  graph.initializers.erase(std::remove_if(graph.initializers.begin(), graph.initializers.end(), is_dropped),
                           graph.initializers.end());
  graph.values.erase(std::remove_if(graph.values.begin(), graph.values.end(),
                                    [&](const std::unique_ptr<Value>& v) { return is_dropped(v.get()); }),
                     graph.values.end());
  for (size_t i = 0; i < graph.values.size(); ++i) graph.values[i]->index = i;

  graph_detail::sort_topologically(graph);
}

namespace {

// The types inference found for the values of `graph`'s own proto's value_info (a subgraph of a new
// node: infer_node_types fills it), onto the subgraph's values that have none, in nested subgraphs too.
void take_subgraph_types(Graph& graph) {
  if (graph.proto)
    for (const auto& vi : graph.proto->value_info()) {
      Value* v = graph.find(vi.name());
      if (v && v->producer && v->type.kind == 0 && vi.has_type()) v->type = type_info_from_proto(vi.type());
    }
  for (auto& node : graph.nodes)
    for (auto& sub : node->subgraphs) take_subgraph_types(*sub.second);
}

}  // namespace

void GraphEditor::type_added_nodes(Graph& graph) {
  // One inference over every node added to the graph (in topological order), typed from what they
  // read: one call per graph and commit, not one per edit.
  std::vector<Node*> added;
  std::vector<onnx::NodeProto*> protos;
  std::unordered_set<std::string> defined;
  for (Node* n : graph.topological_order) {
    auto it = untyped_.find(n);
    if (it == untyped_.end()) continue;
    added.push_back(n);
    protos.push_back(it->second);
    for (const Value* out : n->outputs)
      if (out) defined.insert(out->name);
  }
  if (added.empty()) return;
  std::vector<std::unique_ptr<onnx::TypeProto>> read_types;
  auto type_of = [&](const std::string& name) -> const onnx::TypeProto* {
    if (defined.count(name)) return nullptr;
    const Value* v = visible(graph, name);
    if (!v) return nullptr;
    auto type = std::make_unique<onnx::TypeProto>();
    if (!type_proto_from_info(v->type, type.get())) return nullptr;
    read_types.push_back(std::move(type));
    return read_types.back().get();
  };
  std::unordered_map<std::string, TypeInfo> inferred;
  for (const onnx::ValueInfoProto& vi : infer_node_types(*graph.model, protos, type_of))
    inferred[vi.name()] = type_info_from_proto(vi.type());
  for (Node* n : added) {
    for (Value* out : n->outputs) {
      if (!out) continue;
      auto it = inferred.find(out->name);
      // A replaced node's output keeps the type it had (the model's inference saw the whole model).
      if (it != inferred.end() && out->type.kind == 0) out->type = it->second;
    }
    for (auto& sub : n->subgraphs) take_subgraph_types(*sub.second);
  }
}

void freeze(Graph& main) {
  if (main.parent_graph)
    fail(EPHOST_INVALID_ARGUMENT, "freeze: {} is a subgraph; freeze its main graph", graph_detail::graph_label(main));
  main.frozen = true;
}

}  // namespace ephost
