#include "constant_lookup.h"

#include <exception>
#include <string>
#include <vector>

namespace ephost::cpu {

namespace {

// The enclosing graph's value that an outer-scope value `name` of `graph` refers to.
sdk::Value outer_value(const sdk::Graph& graph, const std::string& name) {
  const sdk::Node parent = graph.parent_node();
  if (!parent.valid()) return sdk::Value();
  const EphostHostApi& h = sdk::host();
  const size_t n = h.node_num_implicit_inputs(parent.get());
  for (size_t i = 0; i < n; ++i) {
    const sdk::Value v(h.node_implicit_input(parent.get(), i));
    if (v.valid() && v.name() == name) return v;
  }
  for (size_t i = 0; i < parent.num_inputs(); ++i)
    if (parent.has_input(i) && parent.input(i).name() == name) return parent.input(i);
  return sdk::Value();
}

// Nesting deeper than this is not followed (a malformed graph must not loop).
constexpr int kMaxDepth = 16;

// The value that holds v's constant: v itself, or the enclosing graph's value an outer-scope v refers
// to; an invalid value when v is not constant.
sdk::Value defining_constant(const sdk::Value& v, const sdk::Graph& graph, int depth) {
  if (!v.valid() || depth > kMaxDepth) return sdk::Value();
  if (v.is_constant()) return v;
  if (sdk::host().value_is_outer_scope(v.get()) == 0 || !graph.valid()) return sdk::Value();
  const sdk::Value outer = outer_value(graph, v.name());
  if (!outer.valid()) return sdk::Value();
  return defining_constant(outer, graph.parent_node().graph(), depth + 1);
}

sdk::Value defining_constant(const sdk::Value& v) {
  if (!v.valid()) return sdk::Value();
  if (v.is_constant()) return v;
  if (sdk::host().value_is_outer_scope(v.get()) == 0) return sdk::Value();
  // The value's graph: the graph of a node that reads it.
  const std::vector<sdk::Node> readers = v.consumers();
  if (readers.empty()) return sdk::Value();
  const sdk::Graph graph = readers.front().graph();
  const sdk::Value outer = outer_value(graph, v.name());
  if (!outer.valid()) return sdk::Value();
  return defining_constant(outer, graph.parent_node().graph(), 1);
}

}  // namespace

sdk::Tensor constant_of(const sdk::Value& v) {
  const sdk::Value c = defining_constant(v);
  if (!c.valid()) return sdk::Tensor();
  try {
    return c.constant();
  } catch (const std::exception& e) {
    // The host could not compute a precomputed value: the node that makes it runs instead.
    sdk::log(EPHOST_LOG_VERBOSE, "cpu: constant '" + v.name() + "' unavailable: " + e.what());
    return sdk::Tensor();
  }
}

bool is_constant(const sdk::Value& v) { return defining_constant(v).valid(); }

}  // namespace ephost::cpu
