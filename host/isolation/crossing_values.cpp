#include "isolation/crossing_values.h"

#include <algorithm>

#include <fmt/format.h>

#include "graph/graph.h"

namespace ephost::isolation {
namespace {

// "a sequence", "a string tensor", or "" for a tensor of numbers (or a value of unknown type: runs
// check those, and the executor reports what it finds).
std::string non_crossing_kind(const Value& v) {
  if (v.type.kind == EPHOST_VALUE_SEQUENCE) return "a tensor sequence";
  if (v.type.kind == EPHOST_VALUE_OPTIONAL) return "an optional value";
  if (v.type.elem_type == EPHOST_ELEMENT_STRING || v.type.tensor_elem_type == EPHOST_ELEMENT_STRING)
    return "a string tensor";
  return "";
}

}  // namespace

std::string why_claim_cannot_cross(const std::vector<const Node*>& nodes, const std::string& provider) {
  auto in_claim = [&](const Node* n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
  auto refused = [&](const Node& node, const std::string& what) {
    return fmt::format("{}node '{}' ({}) {}, which does not cross to a provider host process (only tensors of "
                       "numbers do); the node is left to the next provider (ep.{}.isolation=in_process lets '{}' "
                       "take it)",
                       nodes.size() > 1 ? "fused group refused: " : "", node.name, node.op_type, what, provider,
                       provider);
  };
  for (const Node* node : nodes) {
    if (!node->subgraphs.empty())
      return refused(*node, fmt::format("runs subgraph '{}'", node->subgraphs.front().first));
    for (const Value* v : node->inputs) {
      if (!v || (v->producer && in_claim(v->producer))) continue;  // made inside the group: does not cross
      const std::string kind = non_crossing_kind(*v);
      if (!kind.empty()) return refused(*node, fmt::format("reads '{}', {}", v->name, kind));
    }
    for (const Value* v : node->outputs) {
      if (!v) continue;
      const bool read_outside =
          v->is_graph_output || std::any_of(v->consumers.begin(), v->consumers.end(), [&](const Node* c) {
            return !in_claim(c);
          });
      const std::string kind = read_outside ? non_crossing_kind(*v) : "";
      if (!kind.empty()) return refused(*node, fmt::format("writes '{}', {}", v->name, kind));
    }
  }
  return "";
}

}  // namespace ephost::isolation
