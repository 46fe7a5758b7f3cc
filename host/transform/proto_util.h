// Helpers the graph passes share for working on GraphProtos (internal to host/transform).
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"

namespace ephost {
namespace transform_detail {

inline bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

inline bool has_subgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
        a.graphs_size() > 0)
      return true;
  return false;
}

// Names that `g` (and its subgraphs) reads but does not define itself: its outer-scope reads.
void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string>* out);

// Names the subgraphs of g's nodes read from outside themselves (names of g or of graphs around g).
std::unordered_set<std::string> names_read_by_subgraphs(const onnx::GraphProto& g);

// Static types known for a graph's names: value_info, inputs, outputs, initializers; names not found
// are looked up in the enclosing graph's table. Types are converted on first lookup. Keys point into
// the graph's value infos and initializers: the table must not outlive changes to those.
class TypeTable {
 public:
  TypeTable(const onnx::GraphProto& g, const TypeTable* parent);
  const TypeInfo* find(const std::string& name) const;

 private:
  struct Source {
    const onnx::TypeProto* type = nullptr;         // declared or inferred
    const onnx::TensorProto* initializer = nullptr;
    bool is_input = false;  // `type` is a graph input's declared type
  };
  const TypeInfo* local(std::string_view name) const;

  const TypeTable* parent_;
  std::unordered_map<std::string_view, Source> sources_;
  mutable std::unordered_map<std::string_view, std::unique_ptr<TypeInfo>> cache_;
};

// True when `t` has a known rank and every dim is known.
inline bool is_static(const TypeInfo* t) {
  if (!t || !t->has_shape) return false;
  for (int64_t d : t->dims)
    if (d < 0) return false;
  return true;
}

// Removes the nodes marked in `removed` (same length as g.node), keeping the order of the others.
void remove_nodes(onnx::GraphProto& g, const std::vector<bool>& removed);

// Removes the value_info entries whose names are in `names`.
void remove_value_info(onnx::GraphProto& g, const std::unordered_set<std::string>& names);

}  // namespace transform_detail
}  // namespace ephost
