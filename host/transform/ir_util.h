// Helpers the graph passes share for reading the IR (internal to host/transform).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "transform/proto_util.h"

namespace ephost {
namespace transform_detail {

// True when `t` is a tensor type with a known rank and every dim known.
inline bool is_static(const TypeInfo& t) {
  if (!t.has_shape) return false;
  for (int64_t d : t.dims)
    if (d < 0) return false;
  return true;
}

// The value an outer-scope entry refers to, through every enclosing graph; `v` itself otherwise.
inline const Value* defining_value(const Value* v) {
  while (v && v->outer) v = v->outer;
  return v;
}

// The tensor of a constant initializer (not an overridable graph input), read through outer-scope
// entries; null when `v` is not one.
inline const Tensor* constant_tensor(const Value* v) {
  v = defining_value(v);
  return v && v->is_constant_initializer() ? v->initializer.get() : nullptr;
}

// Whether a subgraph of one of its consumers reads `v` (the consumer lists it as an implicit input).
bool read_by_subgraph(const Value& v);

// The INT attribute `name` of `node`, or `fallback`.
int64_t attr_int(const Node& node, const std::string& name, int64_t fallback);
// The FLOAT attribute `name` of `node`, or `fallback`.
float attr_float(const Node& node, const std::string& name, float fallback);

// `graph` and every subgraph inside it, outer graphs first.
std::vector<Graph*> graphs_of(Graph& graph);

}  // namespace transform_detail
}  // namespace ephost
