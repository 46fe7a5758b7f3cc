// Node-local typing: the types of the values some nodes define, inferred from the types of what they
// read, without re-inferring the whole model. An edit that adds nodes (a function body spliced in for
// its call) types just those nodes, instead of running shape inference over the model again.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TypeProto;
class ValueInfoProto;
}  // namespace onnx

namespace ephost {

// The types a graph declares (inputs, outputs, value_info) and its initializers' own, by name, with the
// enclosing graphs' behind them (nearest first). Points into `graph`, which must outlive it; value_info
// added to the graph later is not seen.
class GraphTypes {
 public:
  GraphTypes(const onnx::GraphProto& graph, const GraphTypes* parent);
  ~GraphTypes();
  GraphTypes(const GraphTypes&) = delete;
  GraphTypes& operator=(const GraphTypes&) = delete;
  // Null when neither this graph nor an enclosing one types `name`.
  const onnx::TypeProto* find(const std::string& name) const;

 private:
  const GraphTypes* parent_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::vector<std::unique_ptr<onnx::TypeProto>> owned_;  // initializers' types
};

// The type of a value by name (the graph's and its enclosing graphs'), or null when unknown.
using TypeLookup = std::function<const onnx::TypeProto*(const std::string& name)>;

// Runs onnx shape inference (guarded, as infer_model_shapes is) over a model of only `nodes` (in
// topological order; they may read each other's outputs and, from their subgraphs, names of the graph
// around them), whose inputs are the values the nodes read and do not define, typed by `type_of`. The
// model keeps `model`'s IR version, opset imports and local functions (a node may call one). Returns a
// ValueInfoProto for each value the nodes define that inference could type, and fills the value_info
// of the nodes' subgraphs (If/Loop/Scan bodies) as whole-model inference does; nothing else changes.
// Not counted as a whole-model shape inference.
std::vector<onnx::ValueInfoProto> infer_node_types(const Model& model, const std::vector<onnx::NodeProto*>& nodes,
                                                   const TypeLookup& type_of);

}  // namespace ephost
