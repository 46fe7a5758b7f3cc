#include "transform/ir_util.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

namespace ephost {
namespace transform_detail {

bool read_by_subgraph(const Value& v) {
  for (const Node* c : v.consumers)
    if (std::find(c->implicit_inputs.begin(), c->implicit_inputs.end(), &v) != c->implicit_inputs.end()) return true;
  return false;
}

int64_t attr_int(const Node& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = node.attribute(name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

float attr_float(const Node& node, const std::string& name, float fallback) {
  const onnx::AttributeProto* a = node.attribute(name);
  return a && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

std::vector<Graph*> graphs_of(Graph& graph) {
  std::vector<Graph*> out{&graph};
  for (size_t i = 0; i < out.size(); ++i)
    for (auto& node : out[i]->nodes)
      for (auto& sub : node->subgraphs) out.push_back(sub.second.get());
  return out;
}

}  // namespace transform_detail
}  // namespace ephost
