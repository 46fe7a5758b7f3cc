#include "epcontext/source_fallback.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "model/node_types.h"
#include "transform/proto_util.h"

namespace ephost {

std::vector<std::string> replace_with_source_nodes(onnx::ModelProto& ctx, const std::string& node_name,
                                                   const onnx::ModelProto& source, const std::string& source_path) {
  onnx::GraphProto& g = *ctx.mutable_graph();
  int at = -1;
  for (int i = 0; i < g.node_size(); ++i)
    if (g.node(i).name() == node_name) at = i;
  if (at < 0) fail(EPHOST_INVALID_GRAPH, "EPContext node '{}' is not in the model", node_name);
  const onnx::NodeProto context = g.node(at);

  const onnx::GraphProto& sg = source.graph();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < sg.node_size(); ++i)
    for (const auto& o : sg.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : sg.initializer()) initializers[t.name()] = &t;
  std::unordered_set<std::string> graph_inputs;
  for (const auto& in : sg.input()) graph_inputs.insert(in.name());
  std::unordered_set<std::string> boundary(context.input().begin(), context.input().end());

  // Walk back from the partition's outputs to its inputs.
  std::vector<char> take(static_cast<size_t>(sg.node_size()), 0);
  std::unordered_set<std::string> needed_initializers, seen;
  std::vector<std::string> stack(context.output().begin(), context.output().end());
  while (!stack.empty()) {
    std::string name = stack.back();
    stack.pop_back();
    if (name.empty() || !seen.insert(name).second || boundary.count(name)) continue;
    auto p = producer.find(name);
    if (p != producer.end()) {
      if (take[static_cast<size_t>(p->second)]) continue;
      take[static_cast<size_t>(p->second)] = 1;
      const onnx::NodeProto& n = sg.node(p->second);
      for (const auto& in : n.input()) stack.push_back(in);
      for (const auto& a : n.attribute()) {
        std::unordered_set<std::string> outer;
        if (a.has_g()) transform_detail::collect_outer_reads(a.g(), &outer);
        for (const auto& sub : a.graphs()) transform_detail::collect_outer_reads(sub, &outer);
        stack.insert(stack.end(), outer.begin(), outer.end());
      }
      continue;
    }
    if (initializers.count(name)) {
      needed_initializers.insert(name);
      continue;
    }
    fail(EPHOST_INVALID_GRAPH,
         "the source model '{}' does not hold the partition of EPContext node '{}': value '{}' is {} there, but the "
         "node does not take it as an input (is it the model this ctx model was generated from?)",
         source_path, node_name, name, graph_inputs.count(name) ? "a graph input" : "never defined");
  }

  // Nodes in the source's (topological) order, in place of the EPContext node.
  onnx::GraphProto rebuilt;
  std::vector<std::string> inserted;
  for (int i = 0; i < g.node_size(); ++i) {
    if (i != at) {
      *rebuilt.add_node() = g.node(i);
      continue;
    }
    for (int k = 0; k < sg.node_size(); ++k)
      if (take[static_cast<size_t>(k)]) {
        onnx::NodeProto& n = *rebuilt.add_node();
        n = sg.node(k);
        if (n.name().empty()) n.set_name(node_name + "/" + n.op_type() + "_" + std::to_string(k));
        inserted.push_back(n.name());
      }
  }
  g.mutable_node()->Swap(rebuilt.mutable_node());

  std::unordered_set<std::string> present;
  for (const auto& t : g.initializer()) present.insert(t.name());
  for (const auto& t : sg.initializer())
    if (needed_initializers.count(t.name()) && !present.count(t.name())) *g.add_initializer() = t;
  // What the source knew about the partition's inner values helps shape inference.
  std::unordered_set<std::string> typed;
  for (const auto& vi : g.value_info()) typed.insert(vi.name());
  for (const auto& vi : sg.value_info())
    if (seen.count(vi.name()) && !typed.count(vi.name())) *g.add_value_info() = vi;
  // Domains the source's nodes use.
  for (const auto& op : source.opset_import()) {
    bool have = false;
    for (const auto& mine : ctx.opset_import()) have |= mine.domain() == op.domain();
    if (!have) *ctx.add_opset_import() = op;
  }
  return inserted;
}

void type_source_nodes(Model& ctx, const std::vector<std::string>& inserted) {
  if (inserted.empty()) return;
  onnx::GraphProto& g = *ctx.proto->mutable_graph();
  const std::unordered_set<std::string> names(inserted.begin(), inserted.end());
  std::vector<onnx::NodeProto*> nodes;
  for (auto& n : *g.mutable_node())
    if (names.count(n.name())) nodes.push_back(&n);
  std::vector<onnx::ValueInfoProto> typed;
  {
    const GraphTypes types(g, nullptr);
    typed = infer_node_types(ctx, nodes, [&types](const std::string& name) { return types.find(name); });
    typed.erase(std::remove_if(typed.begin(), typed.end(),
                               [&types](const onnx::ValueInfoProto& vi) { return types.find(vi.name()) != nullptr; }),
                typed.end());
  }
  for (onnx::ValueInfoProto& vi : typed) *g.add_value_info() = std::move(vi);
}

}  // namespace ephost
