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
  sources_.reserve(static_cast<size_t>(g.value_info_size() + g.input_size() + g.output_size() + g.initializer_size()));
  auto known = [](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || vi.type().value_case() != onnx::TypeProto::kTensorType) return vi.has_type();
    const auto& tt = vi.type().tensor_type();
    return tt.elem_type() != 0 || tt.has_shape();
  };
  for (const auto& vi : g.value_info())
    if (vi.has_type()) sources_[vi.name()].type = &vi.type();
  // Declared outputs only where nothing was inferred; declared inputs always win.
  for (const auto& out : g.output())
    if (known(out)) {
      auto& src = sources_[out.name()];
      if (!src.type) src.type = &out.type();
    }
  for (const auto& in : g.input())
    if (known(in)) {
      auto& src = sources_[in.name()];
      src.type = &in.type();
      src.is_input = true;
    }
  for (const auto& init : g.initializer()) sources_[init.name()].initializer = &init;
}

const TypeInfo* TypeTable::local(std::string_view name) const {
  auto it = sources_.find(name);
  if (it == sources_.end()) return nullptr;
  auto cached = cache_.find(name);
  if (cached != cache_.end()) return cached->second.get();
  auto info = std::make_unique<TypeInfo>();
  const Source& src = it->second;
  // An initializer's own type and shape win, except over a graph input's declared type.
  if (src.type && (!src.initializer || src.is_input)) *info = type_info_from_proto(*src.type);
  if (src.initializer && (!src.is_input || info->elem_type == 0)) {
    info->elem_type = src.initializer->data_type();
    info->has_shape = true;
    info->dims.clear();
    for (int64_t d : src.initializer->dims()) info->dims.push_back(d < 0 ? -1 : d);
    info->dim_params.assign(info->dims.size(), std::string());
  }
  return cache_.emplace(name, std::move(info)).first->second.get();
}

const TypeInfo* TypeTable::find(const std::string& name) const {
  for (const TypeTable* t = this; t; t = t->parent_)
    if (const TypeInfo* info = t->local(name)) return info;
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
