#include "transform/proto_util.h"

namespace ephost {
namespace transform_detail {

void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string>* out) {
  std::unordered_set<std::string> defined;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& init : g.initializer()) defined.insert(init.name());
  for (const auto& node : g.node())
    for (const auto& o : node.output())
      if (!o.empty()) defined.insert(o);
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out->insert(name);
  };
  for (const auto& node : g.node()) {
    for (const auto& in : node.input()) read(in);
    for (const auto& a : node.attribute()) {
      std::unordered_set<std::string> sub;
      if (a.has_g()) collect_outer_reads(a.g(), &sub);
      for (const auto& sg : a.graphs()) collect_outer_reads(sg, &sub);
      for (const auto& name : sub) read(name);
    }
  }
  for (const auto& o : g.output()) read(o.name());
}

std::unordered_set<std::string> names_read_by_subgraphs(const onnx::GraphProto& g) {
  std::unordered_set<std::string> names;
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g()) collect_outer_reads(a.g(), &names);
      for (const auto& sg : a.graphs()) collect_outer_reads(sg, &names);
    }
  return names;
}

TypeTable::TypeTable(const onnx::GraphProto& g, const TypeTable* parent) : parent_(parent) {
  types_.reserve(static_cast<size_t>(g.value_info_size() + g.input_size() + g.output_size() + g.initializer_size()));
  for (const auto& vi : g.value_info())
    if (vi.has_type()) types_[vi.name()] = type_info_from_proto(vi.type());
  for (const auto& init : g.initializer()) {
    TypeInfo t;
    t.elem_type = init.data_type();
    t.has_shape = true;
    for (int64_t d : init.dims()) t.dims.push_back(d < 0 ? -1 : d);
    t.dim_params.assign(t.dims.size(), std::string());
    types_[init.name()] = std::move(t);
  }
  // Declared input/output types win over what was inferred (a graph input may override an initializer).
  for (const auto& in : g.input())
    if (in.has_type()) {
      TypeInfo t = type_info_from_proto(in.type());
      if (t.elem_type != 0 || t.has_shape) types_[in.name()] = std::move(t);
    }
  for (const auto& out : g.output())
    if (out.has_type()) {
      TypeInfo t = type_info_from_proto(out.type());
      if (t.elem_type != 0 || t.has_shape) types_.emplace(out.name(), std::move(t));  // value_info first
    }
}

const TypeInfo* TypeTable::find(const std::string& name) const {
  for (const TypeTable* t = this; t; t = t->parent_) {
    auto it = t->types_.find(name);
    if (it != t->types_.end()) return &it->second;
  }
  return nullptr;
}

void remove_nodes(onnx::GraphProto& g, const std::vector<bool>& removed) {
  auto* nodes = g.mutable_node();
  const int n = nodes->size();
  int w = 0;
  for (int r = 0; r < n; ++r) {
    if (removed[static_cast<size_t>(r)]) continue;
    if (w != r) nodes->SwapElements(w, r);
    ++w;
  }
  if (w < n) nodes->DeleteSubrange(w, n - w);
}

void remove_value_info(onnx::GraphProto& g, const std::unordered_set<std::string>& names) {
  if (names.empty()) return;
  auto* vis = g.mutable_value_info();
  const int n = vis->size();
  int w = 0;
  for (int r = 0; r < n; ++r) {
    if (names.count(vis->Get(r).name())) continue;
    if (w != r) vis->SwapElements(w, r);
    ++w;
  }
  if (w < n) vis->DeleteSubrange(w, n - w);
}

}  // namespace transform_detail
}  // namespace ephost
