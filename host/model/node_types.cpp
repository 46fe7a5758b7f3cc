#include "model/node_types.h"

#include <onnx/onnx_pb.h>

#include <unordered_set>

#include "model/loader.h"

namespace ephost {
namespace {

// Every name `graph`'s nodes read, in its subgraphs too (a subgraph may read names of the graph
// around it).
void collect_reads(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, std::vector<std::string>& out) {
  for (const auto& n : nodes) {
    for (const auto& in : n.input())
      if (!in.empty()) out.push_back(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_reads(a.g().node(), out);
      for (const auto& g : a.graphs()) collect_reads(g.node(), out);
    }
  }
}

}  // namespace

GraphTypes::GraphTypes(const onnx::GraphProto& g, const GraphTypes* parent) : parent_(parent) {
  for (const auto& t : g.initializer()) {
    auto type = std::make_unique<onnx::TypeProto>();
    auto* tt = type->mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    types_[t.name()] = type.get();
    owned_.push_back(std::move(type));
  }
  // Declared types win over initializers' own (an input with a default) and inferred ones.
  for (const auto& v : g.value_info())
    if (v.has_type()) types_[v.name()] = &v.type();
  for (const auto& v : g.output())
    if (v.has_type()) types_[v.name()] = &v.type();
  for (const auto& v : g.input())
    if (v.has_type()) types_[v.name()] = &v.type();
}

GraphTypes::~GraphTypes() = default;

const onnx::TypeProto* GraphTypes::find(const std::string& name) const {
  for (const GraphTypes* s = this; s; s = s->parent_) {
    auto it = s->types_.find(name);
    if (it != s->types_.end()) return it->second;
  }
  return nullptr;
}

std::vector<onnx::ValueInfoProto> infer_node_types(const Model& model, const std::vector<onnx::NodeProto*>& nodes,
                                                   const TypeLookup& type_of) {
  if (nodes.empty() || !model.proto) return {};
  onnx::ModelProto local;
  local.set_ir_version(model.proto->ir_version());
  *local.mutable_opset_import() = model.proto->opset_import();
  *local.mutable_functions() = model.proto->functions();
  onnx::GraphProto& g = *local.mutable_graph();
  g.set_name("node-local typing");
  std::unordered_set<std::string> defined;
  for (const onnx::NodeProto* n : nodes) {
    *g.add_node() = *n;
    for (const auto& out : n->output())
      if (!out.empty()) defined.insert(out);
  }
  std::vector<std::string> reads;
  collect_reads(g.node(), reads);
  std::unordered_set<std::string> declared;
  for (const std::string& name : reads) {
    if (defined.count(name) || !declared.insert(name).second) continue;
    const onnx::TypeProto* type = type_of(name);
    if (!type) continue;  // a name a subgraph defines for itself, or one nobody typed
    onnx::ValueInfoProto& in = *g.add_input();
    in.set_name(name);
    *in.mutable_type() = *type;
  }
  if (!infer_shapes_guarded(local)) return {};
  // The subgraphs' own values, typed in the copies, go back to the nodes' subgraphs.
  for (size_t k = 0; k < nodes.size(); ++k) {
    auto& typed_attributes = *g.mutable_node(static_cast<int>(k))->mutable_attribute();
    auto& attributes = *nodes[k]->mutable_attribute();
    for (int a = 0; a < attributes.size() && a < typed_attributes.size(); ++a) {
      if (attributes[a].has_g()) attributes[a].mutable_g()->mutable_value_info()->Swap(
          typed_attributes[a].mutable_g()->mutable_value_info());
      for (int i = 0; i < attributes[a].graphs_size() && i < typed_attributes[a].graphs_size(); ++i)
        attributes[a].mutable_graphs(i)->mutable_value_info()->Swap(
            typed_attributes[a].mutable_graphs(i)->mutable_value_info());
    }
  }
  std::vector<onnx::ValueInfoProto> typed;
  for (auto& vi : *g.mutable_value_info())
    if (defined.count(vi.name()) && vi.has_type()) typed.push_back(std::move(vi));
  return typed;
}

}  // namespace ephost
