#include "epcontext/source_fallback.h"

#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "model/tensor_proto.h"
#include "transform/proto_util.h"

namespace ephost {

SourcePartition cut_source_partition(const Node& context, const onnx::ModelProto& source,
                                     const std::string& source_path) {
  const onnx::GraphProto& sg = source.graph();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < sg.node_size(); ++i)
    for (const auto& o : sg.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : sg.initializer()) initializers[t.name()] = &t;
  std::unordered_set<std::string> graph_inputs;
  for (const auto& in : sg.input()) graph_inputs.insert(in.name());
  std::unordered_set<std::string> boundary;
  for (const Value* in : context.inputs)
    if (in) boundary.insert(in->name);

  // Walk back from the partition's outputs to its inputs.
  std::vector<char> take(static_cast<size_t>(sg.node_size()), 0);
  std::unordered_set<std::string> needed_initializers, seen;
  std::vector<std::string> stack;
  for (const Value* out : context.outputs)
    if (out) stack.push_back(out->name);
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
         source_path, context.name, name, graph_inputs.count(name) ? "a graph input" : "never defined");
  }

  SourcePartition partition;
  for (int k = 0; k < sg.node_size(); ++k)
    if (take[static_cast<size_t>(k)]) {
      partition.nodes.push_back(sg.node(k));
      onnx::NodeProto& n = partition.nodes.back();
      if (n.name().empty()) n.set_name(context.name + "/" + n.op_type() + "_" + std::to_string(k));
    }
  for (const auto& t : sg.initializer())
    if (needed_initializers.count(t.name())) partition.initializers.push_back(&t);
  return partition;
}

std::vector<std::string> splice_source_partition(GraphEditor& editor, Model& ctx, Node& context,
                                                 SourcePartition partition, const onnx::ModelProto& source) {
  Graph& main = *context.owner;
  // An initializer the ctx model kept (a value at the partition's boundary, or shared with another
  // partition) is the same tensor: only the missing ones are added.
  for (const onnx::TensorProto* t : partition.initializers) {
    const Value* present = main.find(t->name());
    if (present && present->is_initializer()) continue;
    editor.add_initializer(main, t->name(), std::make_shared<Tensor>(tensor_from_proto(*t)));
  }
  // Domains the source's nodes use, so that they are typed and run at the source's opsets.
  for (const auto& import : source.opset_import()) {
    if (ctx.opsets.count(import.domain())) continue;
    ctx.opsets[import.domain()] = import.version();
    *ctx.proto->add_opset_import() = import;
  }
  std::vector<std::string> inserted;
  for (const onnx::NodeProto& n : partition.nodes) inserted.push_back(n.name());
  editor.replace(context, std::move(partition.nodes));
  return inserted;
}

}  // namespace ephost
