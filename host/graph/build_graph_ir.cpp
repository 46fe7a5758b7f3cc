// build_graph_ir: ModelProto -> Graph/Node/Value IR.
//
// Per graph, in linear time (hash lookups only, no scans over the graph per node):
//   1. values for formal inputs and initializers (an initializer that is also an input is an overridable
//      default: one Value, is_graph_input && initializer);
//   2. nodes and their output values (a name defined twice in one graph is an error);
//   3. static types from value_info, then inputs/outputs (declared types win), initializers' own type;
//   4. node inputs resolved: local names, else names of enclosing graphs (nearest first) through an
//      outer-scope entry of this graph; subgraphs are built recursively once every local name exists,
//      and each outer-scope entry of a subgraph becomes an implicit input of the node holding it;
//   5. graph outputs flagged; topological order (Kahn, ties by original order); the full view.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <unordered_set>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/graph_building.h"
#include "model/creation_counts.h"
#include "model/tensor_proto.h"

namespace ephost {

namespace {

using graph_detail::graph_label;
using graph_detail::link_implicit_inputs;
using graph_detail::sort_topologically;

class Builder {
 public:
  Builder(const Model& model, const InitializerTensors& reuse) : model_(model), reuse_(reuse) {}

  void build(Graph& g, const onnx::GraphProto& gp, int depth) {
    if (depth > kMaxDepth) fail(EPHOST_INVALID_GRAPH, "subgraphs nested deeper than {} levels", kMaxDepth);
    g.proto = &gp;
    g.name = gp.name();
    g.model = &model_;
    const std::string where = graph_label(g);

    if (gp.sparse_initializer_size() > 0)
      fail(EPHOST_INVALID_GRAPH,
           "{} has sparse initializers; the model loader converts them to dense ones before the IR is built",
           where);

    const size_t reserve = static_cast<size_t>(gp.input_size() + gp.initializer_size()) +
                           static_cast<size_t>(gp.node_size()) * 2;
    g.by_name.reserve(reserve);
    g.values.reserve(reserve);

    // 1. Formal inputs and initializers.
    for (const auto& in : gp.input()) {
      if (in.name().empty()) fail(EPHOST_INVALID_GRAPH, "{} has an input with an empty name", where);
      if (g.find(in.name()))
        fail(EPHOST_INVALID_GRAPH, "{} declares input '{}' more than once", where, in.name());
      Value* v = new_value(g, in.name());
      v->is_graph_input = true;
      if (in.has_type()) v->type = type_info_from_proto(in.type());
      g.inputs.push_back(v);
    }
    for (const auto& init : gp.initializer()) {
      if (init.name().empty()) fail(EPHOST_INVALID_GRAPH, "{} has an initializer with an empty name", where);
      Value* v = g.find(init.name());
      if (v && v->initializer)
        fail(EPHOST_INVALID_GRAPH, "{} defines initializer '{}' more than once", where, init.name());
      if (!v) v = new_value(g, init.name());
      v->initializer = depth == 0 ? reusable(init) : nullptr;
      if (!v->initializer) v->initializer = std::make_shared<Tensor>(tensor_from_proto(init));
      if (!v->is_graph_input || v->type.elem_type == 0) {
        v->type = TypeInfo{};
        v->type.kind = EPHOST_VALUE_TENSOR;
        v->type.elem_type = init.data_type();
        v->type.tensor_elem_type = init.data_type();
        v->type.has_shape = true;
        v->type.dims = v->initializer->shape();
        v->type.dim_params.assign(v->type.dims.size(), std::string());
      }
      g.initializers.push_back(v);
    }

    // 2. Nodes and their outputs.
    g.nodes.reserve(static_cast<size_t>(gp.node_size()));
    for (int i = 0; i < gp.node_size(); ++i) add_node(g, gp.node(i), where, nullptr);

    // 3. Types of node outputs: value_info, then declared graph outputs (shape inference refines them in
    // place). Graph inputs keep their declared type, initializers their own.
    for (const auto& vi : gp.value_info()) {
      Value* v = g.find(vi.name());
      if (v && v->producer && vi.has_type()) v->type = type_info_from_proto(vi.type());
    }
    for (const auto& out : gp.output()) {
      Value* v = g.find(out.name());
      if (v && v->producer && out.has_type()) {
        TypeInfo t = type_info_from_proto(out.type());
        if (t.elem_type != 0 || t.has_shape || t.is_non_tensor()) v->type = std::move(t);
      }
    }

    // 4. Inputs, attributes and subgraphs.
    for (int i = 0; i < gp.node_size(); ++i) link_node(g, *g.nodes[static_cast<size_t>(i)], depth, where);

    // 5. Outputs.
    for (const auto& out : gp.output()) {
      Value* v = out.name().empty() ? nullptr : resolve(g, out.name());
      if (!v)
        fail(EPHOST_INVALID_GRAPH, "{}: graph output '{}' is not a graph input, an initializer, or the output of any node",
             where, out.name());
      v->is_graph_output = true;
      g.outputs.push_back(v);
    }

    sort_topologically(g);
    g.view = make_full_view(g);
  }

  // A node of `g` from `np` (which must outlive the IR) and its output values, appended to g.nodes. An
  // output name `g` already defines is an error, unless its value is in `adoptable` (a value left
  // without its producer by an edit): the node then produces that value.
  Node* add_node(Graph& g, const onnx::NodeProto& np, const std::string& where,
                 const std::unordered_set<const Value*>* adoptable) {
    auto node = std::make_unique<Node>();
    Node* n = node.get();
    n->index = g.nodes.size();
    n->op_type = np.op_type();
    n->name = np.name().empty() ? np.op_type() + "_" + std::to_string(n->index) : np.name();
    n->domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
    n->proto = &np;
    n->owner = &g;
    g.nodes.push_back(std::move(node));
    n->outputs.reserve(static_cast<size_t>(np.output_size()));
    for (int o = 0; o < np.output_size(); ++o) {
      const std::string& out = np.output(o);
      if (out.empty()) {
        n->outputs.push_back(nullptr);
        continue;
      }
      Value* v = g.find(out);
      if (v && !(adoptable && adoptable->count(v) && !v->producer)) {
        fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) output '{}' is already defined by {}", where, n->name,
             n->op_type, out, describe_definition(*v));
      }
      if (!v) v = new_value(g, out);
      v->producer = n;
      v->producer_output = static_cast<size_t>(o);
      n->outputs.push_back(v);
    }
    return n;
  }

  // Resolves n's inputs (in its graph, else enclosing ones), materializes its TENSOR attributes, builds
  // its subgraphs (`depth`: its graph's) and their outer-scope reads as implicit inputs of n.
  void link_node(Graph& g, Node& node, int depth, const std::string& where) {
    Node* n = &node;
    const onnx::NodeProto& np = *n->proto;
    n->inputs.reserve(static_cast<size_t>(np.input_size()));
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        n->inputs.push_back(nullptr);
        continue;
      }
      Value* v = resolve(g, in);
      if (!v) {
        fail(EPHOST_INVALID_GRAPH,
             "{}: node '{}' ({}) input '{}' is not a graph input, an initializer, or the output of any node{}",
             where, n->name, n->op_type, in, g.parent_graph ? " (in this graph or an enclosing one)" : "");
      }
      n->inputs.push_back(v);
      add_consumer(v, n);
    }
    for (const auto& attr : np.attribute()) {
      switch (attr.type()) {
        case onnx::AttributeProto::TENSOR:
          try {
            n->tensor_attributes[attr.name()] = std::make_shared<Tensor>(tensor_from_proto(attr.t()));
          } catch (const Error& e) {
            fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) attribute '{}': {}", where, n->name, n->op_type,
                 attr.name(), e.what());
          }
          break;
        case onnx::AttributeProto::GRAPH: {
          auto sub = std::make_unique<Graph>();
          Graph* s = sub.get();
          s->parent_graph = &g;
          s->parent_node = n;
          n->subgraphs.emplace_back(attr.name(), std::move(sub));
          build(*s, attr.g(), depth + 1);
          break;
        }
        case onnx::AttributeProto::GRAPHS:
          fail(EPHOST_INVALID_GRAPH, "{}: node '{}' ({}) has GRAPHS attribute '{}', which no operator supports",
               where, n->name, n->op_type, attr.name());
        default:
          break;
      }
    }
    link_implicit_inputs(*n);
  }

 private:
  static constexpr int kMaxDepth = 64;

  Value* new_value(Graph& g, const std::string& name) {
    auto value = std::make_unique<Value>();
    Value* v = value.get();
    v->name = name;
    v->owner = &g;
    v->index = g.values.size();
    g.values.push_back(std::move(value));
    g.by_name.emplace(name, v);
    return v;
  }

  static void add_consumer(Value* v, Node* n) {
    // A node's reads are registered consecutively, so checking the last entry dedupes.
    if (v->consumers.empty() || v->consumers.back() != n) v->consumers.push_back(n);
  }

  // The entry of `g` for `name`: local, or an outer-scope entry created on demand that chains to the
  // nearest enclosing graph defining it. nullptr when no graph on the way defines it.
  Value* resolve(Graph& g, const std::string& name) {
    if (Value* v = g.find(name)) return v;
    if (!g.parent_graph) return nullptr;
    Value* up = resolve(*g.parent_graph, name);
    if (!up) return nullptr;
    Value* v = new_value(g, name);
    v->outer = up;
    v->type = up->type;
    g.outer_scope.push_back(v);
    return v;
  }

  static std::string describe_definition(const Value& v) {
    if (v.producer) return fmt::format("node '{}' ({})", v.producer->name, v.producer->op_type);
    if (v.initializer) return "an initializer";
    if (v.is_graph_input) return "a graph input";
    return "an outer-scope value";
  }

  // The tensor of a main-graph initializer an earlier IR of the same model materialized, when it
  // still has the proto's type and shape; else null.
  std::shared_ptr<Tensor> reusable(const onnx::TensorProto& init) const {
    auto it = reuse_.find(init.name());
    if (it == reuse_.end() || !it->second || it->second->elem_type() != init.data_type()) return nullptr;
    const std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
    return it->second->shape() == dims ? it->second : nullptr;
  }

  const Model& model_;
  const InitializerTensors& reuse_;
};

}  // namespace

namespace graph_detail {

std::string graph_label(const Graph& g) {
  if (!g.parent_node) return g.name.empty() ? std::string("main graph") : fmt::format("graph '{}'", g.name);
  std::string attribute;
  for (const auto& entry : g.parent_node->subgraphs)
    if (entry.second.get() == &g) attribute = entry.first;
  return fmt::format("subgraph '{}' (attribute '{}' of node '{}')", g.name, attribute, g.parent_node->name);
}

void link_implicit_inputs(Node& node) {
  // Every outer-scope entry of a subgraph refers to a value of this graph (possibly an outer-scope
  // entry of this graph, created while resolving): an implicit input of n. Entries of one subgraph
  // are distinct; only several subgraphs (If's branches) can repeat a value.
  Node* n = &node;
  std::unordered_set<const Value*> seen(n->implicit_inputs.begin(), n->implicit_inputs.end());
  for (const auto& entry : n->subgraphs) {
    for (Value* o : entry.second->outer_scope) {
      Value* mine = o->outer;
      if (!seen.insert(mine).second) continue;
      n->implicit_inputs.push_back(mine);
      if (std::find(mine->consumers.begin(), mine->consumers.end(), n) == mine->consumers.end())
        mine->consumers.push_back(n);
    }
  }
}

void sort_topologically(Graph& g) {
    const std::string where = graph_label(g);
    const size_t n = g.nodes.size();
    std::vector<size_t> indegree(n, 0);
    for (const auto& v : g.values)
      if (v->producer)
        for (Node* c : v->consumers) ++indegree[c->index];
    // Min-heap on the original index: an already sorted graph keeps its order exactly.
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.push(i);
    g.topological_order.clear();
    g.topological_order.reserve(n);
    while (!ready.empty()) {
      size_t i = ready.top();
      ready.pop();
      Node* node = g.nodes[i].get();
      g.topological_order.push_back(node);
      for (Value* out : node->outputs) {
        if (!out) continue;
        for (Node* c : out->consumers)
          if (--indegree[c->index] == 0) ready.push(c->index);
      }
    }
    if (g.topological_order.size() == n) return;

    // A cycle. Name the nodes left, and one edge between two of them.
    std::string left;
    size_t count = 0;
    const Node* first = nullptr;
    for (size_t i = 0; i < n; ++i) {
      if (indegree[i] == 0) continue;
      const Node* node = g.nodes[i].get();
      if (!first) first = node;
      if (count < 10) left += fmt::format("{}'{}' ({})", count ? ", " : "", node->name, node->op_type);
      ++count;
    }
    if (count > 10) left += fmt::format(" and {} more", count - 10);
    std::string edge;
    auto reads = [&](const Node* node, const std::vector<Value*>& values) {
      for (const Value* v : values)
        if (v && v->producer && indegree[v->producer->index] != 0) {
          edge = fmt::format("; node '{}' reads '{}', produced by node '{}' which depends on it", node->name,
                             v->name, v->producer->name);
          return true;
        }
      return false;
    };
    if (first && !reads(first, first->inputs)) reads(first, first->implicit_inputs);
    fail(EPHOST_INVALID_GRAPH, "{} has a cycle: {} node(s) left unsorted: {}{}", where, count, left, edge);
}

}  // namespace graph_detail


namespace {

int32_t known_elem_type(int32_t et) { return et != EPHOST_ELEMENT_UNDEFINED && EphostElementBits(et) != 0 ? et : 0; }

// The element type of a sequence's tensors, or -1 when the sequence holds something else.
int32_t sequence_tensor_type(const onnx::TypeProto_Sequence& seq) {
  if (!seq.has_elem_type()) return 0;  // declared without its element type: unknown
  const onnx::TypeProto& elem = seq.elem_type();
  if (elem.value_case() == onnx::TypeProto::kTensorType) return known_elem_type(elem.tensor_type().elem_type());
  return elem.value_case() == onnx::TypeProto::VALUE_NOT_SET ? 0 : -1;
}

}  // namespace

TypeInfo type_info_from_proto(const onnx::TypeProto& type) {
  TypeInfo info;
  if (type.value_case() == onnx::TypeProto::kSequenceType) {
    const int32_t et = sequence_tensor_type(type.sequence_type());
    if (et < 0) return info;  // sequences of sequences or maps: not supported
    info.kind = EPHOST_VALUE_SEQUENCE;
    info.tensor_elem_type = et;
    return info;
  }
  if (type.value_case() == onnx::TypeProto::kOptionalType) {
    info.kind = EPHOST_VALUE_OPTIONAL;
    if (!type.optional_type().has_elem_type()) return info;
    const onnx::TypeProto& held = type.optional_type().elem_type();
    if (held.value_case() == onnx::TypeProto::kTensorType) {
      info.optional_kind = EPHOST_VALUE_TENSOR;
      info.tensor_elem_type = known_elem_type(held.tensor_type().elem_type());
    } else if (held.value_case() == onnx::TypeProto::kSequenceType) {
      const int32_t et = sequence_tensor_type(held.sequence_type());
      if (et < 0) return TypeInfo{};
      info.optional_kind = EPHOST_VALUE_SEQUENCE;
      info.tensor_elem_type = et;
    } else if (held.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      return TypeInfo{};  // optional map or sparse tensor: not supported
    }
    return info;
  }
  if (type.value_case() != onnx::TypeProto::kTensorType) return info;
  const auto& tt = type.tensor_type();
  info.kind = EPHOST_VALUE_TENSOR;
  info.elem_type = known_elem_type(tt.elem_type());
  info.tensor_elem_type = info.elem_type;
  if (tt.has_shape()) {
    info.has_shape = true;
    const auto& shape = tt.shape();
    info.dims.reserve(static_cast<size_t>(shape.dim_size()));
    info.dim_params.reserve(static_cast<size_t>(shape.dim_size()));
    for (const auto& d : shape.dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        info.dims.push_back(d.dim_value());
        info.dim_params.emplace_back();
      } else {
        info.dims.push_back(-1);
        info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : std::string());
      }
    }
  }
  return info;
}

namespace {

// Node::attributes: every attribute in NodeProto order, TENSOR ones with their materialized tensor; in
// the node's subgraphs too.
void index_node_attributes(Node& node) {
  node.attributes.clear();
  if (node.proto) {
    for (const auto& a : node.proto->attribute()) {
      Node::AttributeRef ref;
      ref.proto = &a;
      auto it = node.tensor_attributes.find(a.name());
      if (it != node.tensor_attributes.end()) ref.tensor = it->second.get();
      node.attributes.push_back(ref);
    }
  }
  for (auto& sub : node.subgraphs)
    for (auto& inner : sub.second->nodes) index_node_attributes(*inner);
}

int depth_of(const Graph& graph) {
  int depth = 0;
  for (const Graph* g = graph.parent_graph; g; g = g->parent_graph) ++depth;
  return depth;
}

}  // namespace

InitializerTensors main_initializer_tensors(const Graph& main) {
  InitializerTensors tensors;
  for (const Value* v : main.initializers) tensors[v->name] = v->initializer;
  return tensors;
}

std::unique_ptr<Graph> build_graph_ir(const Model& model, const InitializerTensors& reuse) {
  if (!model.proto) fail(EPHOST_INVALID_ARGUMENT, "build_graph_ir: the model has no ModelProto");
  count_ir_build();
  auto main = std::make_unique<Graph>();
  Builder(model, reuse).build(*main, model.proto->graph(), 0);
  for (auto& node : main->nodes) index_node_attributes(*node);
  return main;
}

namespace graph_detail {

std::vector<Node*> add_nodes(Graph& graph, const std::vector<const onnx::NodeProto*>& protos,
                             const std::unordered_set<const Value*>& adoptable) {
  if (!graph.model) fail(EPHOST_INVALID_ARGUMENT, "add_nodes: {} was not built from a model", graph_label(graph));
  const InitializerTensors none;
  Builder builder(*graph.model, none);
  const std::string where = graph_label(graph);
  std::vector<Node*> added;
  added.reserve(protos.size());
  for (const onnx::NodeProto* np : protos) added.push_back(builder.add_node(graph, *np, where, &adoptable));
  const int depth = depth_of(graph);
  for (Node* n : added) {
    builder.link_node(graph, *n, depth, where);
    index_node_attributes(*n);
  }
  return added;
}

}  // namespace graph_detail

}  // namespace ephost
