#include "isolation/graph_snapshot.h"

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "graph/graph_writer.h"
#include "model/model.h"

namespace ephost::isolation {

const Graph& main_graph_of(const Graph& graph) {
  const Graph* g = &graph;
  while (g->parent_graph) g = g->parent_graph;
  return *g;
}

std::string snapshot_model(const Graph& main) {
  if (!main.model || !main.model->proto) fail(EPHOST_EP_FAIL, "isolated provider: graph '{}' has no model", main.name);
  // Written from the IR: edits before partitioning (function bodies spliced in) live only there, and the
  // provider host finds nodes by their index in it.
  onnx::ModelProto copy;
  write_model_proto(main, &copy);
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
