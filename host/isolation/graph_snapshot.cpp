#include "isolation/graph_snapshot.h"

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "model/model.h"
#include "model/tensor_proto.h"

namespace ephost::isolation {
namespace {

void restore_initializers(onnx::GraphProto& proto, const Graph& ir) {
  for (auto& init : *proto.mutable_initializer()) {
    const Value* v = ir.find(init.name());
    // The name is copied first: tensor_to_proto clears the proto it writes.
    const std::string name = init.name();
    if (v && v->initializer && !init.has_raw_data()) tensor_to_proto(*v->initializer, name, &init);
  }
  for (int i = 0; i < proto.node_size() && static_cast<size_t>(i) < ir.nodes.size(); ++i)
    for (auto& a : *proto.mutable_node(i)->mutable_attribute())
      if (a.has_g())
        if (const Graph* sub = ir.nodes[static_cast<size_t>(i)]->subgraph(a.name())) restore_initializers(*a.mutable_g(), *sub);
}

}  // namespace

const Graph& main_graph_of(const Graph& graph) {
  const Graph* g = &graph;
  while (g->parent_graph) g = g->parent_graph;
  return *g;
}

std::string snapshot_model(const Graph& main) {
  if (!main.model || !main.model->proto) fail(EPHOST_EP_FAIL, "isolated provider: graph '{}' has no model", main.name);
  onnx::ModelProto copy = *main.model->proto;
  restore_initializers(*copy.mutable_graph(), main);
  std::string bytes;
  if (!copy.SerializeToString(&bytes))
    fail(EPHOST_EP_FAIL, "isolated provider: the model of graph '{}' cannot be serialized (over 2 GiB?)", main.name);
  return bytes;
}

void write_graph_path(MessageWriter& out, const Graph& graph) {
  std::vector<std::pair<size_t, std::string>> steps;
  for (const Graph* g = &graph; g->parent_graph; g = g->parent_graph) {
    std::string attribute;
    for (const auto& sub : g->parent_node->subgraphs)
      if (sub.second.get() == g) attribute = sub.first;
    steps.emplace_back(g->parent_node->index, attribute);
  }
  out.u64(steps.size());
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) out.u64(it->first).bytes(it->second);
}

const Graph& read_graph_path(MessageReader& in, const Graph& main) {
  const Graph* g = &main;
  for (uint64_t n = in.u64(); n > 0; --n) {
    const uint64_t node = in.u64();
    const std::string attribute = in.str();
    if (node >= g->nodes.size()) fail(EPHOST_EP_FAIL, "provider host: node {} is not in graph '{}'", node, g->name);
    const Graph* sub = g->nodes[node]->subgraph(attribute);
    if (!sub) fail(EPHOST_EP_FAIL, "provider host: node {} of graph '{}' has no subgraph '{}'", node, g->name, attribute);
    g = sub;
  }
  return *g;
}

}  // namespace ephost::isolation
