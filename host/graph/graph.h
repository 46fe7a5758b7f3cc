// The host's in-memory graph: what the loader builds from an onnx::ModelProto and everything after it
// (partitioner, planner, executor, the plugin-facing graph view) reads.
//
// Ownership: the main Graph owns its Nodes and Values; nested subgraphs (If/Loop/Scan graph
// attributes) are Graphs owned by their Node. Raw pointers between them are valid for the main
// graph's lifetime. The IR points into the Model's ModelProto (model/model.h), which must outlive it,
// and into the NodeProtos of the nodes an edit added (owned by the main graph).
// Before partitioning the IR may be edited (graph/graph_editor.h); freeze() then makes it read-only for
// the session's lifetime, which is what lets concurrent Runs read it without locks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/handle_tag.h"
#include "core/tensor.h"
#include "graph/precomputed_value.h"
#include "model/model.h"

namespace onnx {
class ModelProto;
class GraphProto;
class NodeProto;
class AttributeProto;
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace ephost {

class Graph;
class Node;
struct GraphView;

// Static type of a value: its kind (tensor, sequence of tensors, optional), and for a tensor its
// element type and shape (dims -1 where symbolic or unknown). Only tensors have elem_type and a shape
// here; sequences and optionals say which tensors they hold through tensor_elem_type.
struct TypeInfo {
  int32_t kind = 0;                    // EphostValueKind: TENSOR, SEQUENCE, OPTIONAL; 0 when not declared
  int32_t optional_kind = 0;           // OPTIONAL only: the kind it may hold (TENSOR or SEQUENCE), 0 unknown
  int32_t tensor_elem_type = 0;        // element type of the tensor(s) the value is or holds; 0 unknown
  int32_t elem_type = 0;               // EphostElementType; 0 when unknown or not a tensor
  bool has_shape = false;              // false: rank unknown (always false for non-tensors)
  std::vector<int64_t> dims;           // -1 for symbolic/unknown
  std::vector<std::string> dim_params; // symbolic names ("" where none), same length as dims

  bool is_tensor() const { return kind == EPHOST_VALUE_TENSOR; }
  // A sequence, or an optional: values the planner never places (no memory pattern, no reuse).
  bool is_non_tensor() const { return kind == EPHOST_VALUE_SEQUENCE || kind == EPHOST_VALUE_OPTIONAL; }
};

class Value {
 public:
  HandleTag<HandleKind::kValueInfo> handle_tag;  // plugins see a Value as an EphostValueInfo
  std::string name;
  TypeInfo type;
  Graph* owner = nullptr;     // the graph in which this entry lives
  size_t index = 0;           // dense index in owner->values: executors index frames with it
  Node* producer = nullptr;   // null for graph inputs, initializers (but see `precomputed`) and outer-scope values
  size_t producer_output = 0; // which output of producer
  // Nodes of `owner` that read this value: explicitly (inputs) or implicitly (their subgraphs do).
  std::vector<Node*> consumers;
  bool is_graph_input = false;
  bool is_graph_output = false;
  // Set for initializers: the data, materialized (external data already read and confined).
  std::shared_ptr<Tensor> initializer;
  // Set for outer-scope entries of a subgraph: the value of the enclosing graph it refers to.
  Value* outer = nullptr;
  // Set for a node output the host computes from constants while its producer stays in the graph
  // (constant folding keeps a QDQ model's DequantizeLinear of a quantized weight so that providers can
  // fuse it, transform/constant_folding.cpp): providers see the value as a constant and its producer as
  // what made it. Its data is made on first request (graph/precomputed_value.h), so a weight an int8
  // group fuses never gets a float copy. After partitioning, where no fused group computes it, it
  // becomes an initializer whose producer runs in no step (partition/precomputed_steps.h).
  std::shared_ptr<PrecomputedValue> precomputed;

  bool is_initializer() const { return initializer != nullptr; }
  // An initializer that is not also a graph input: its value never changes between runs.
  bool is_constant_initializer() const { return initializer != nullptr && !is_graph_input; }
  bool is_outer_scope() const { return outer != nullptr; }
  // A constant: a constant initializer or a precomputed value (whose data may not be made yet).
  bool is_constant() const { return is_constant_initializer() || precomputed != nullptr; }
  // Its data when it is a constant, null otherwise. A precomputed value is computed by the first call
  // (which throws when that fails); the data then lives as long as the value.
  // A constant initializer whose bytes were freed (model/initializer_release.h) reads them back first.
  const Tensor* constant_data() const {
    if (is_constant_initializer()) {
      initializer->ensure_data();
      return initializer.get();
    }
    return precomputed ? precomputed->data().get() : nullptr;
  }
};

class Node {
 public:
  HandleTag<HandleKind::kNode> handle_tag;  // plugins see a Node as an EphostNode
  size_t index = 0;  // position in owner->nodes; stable for the Model's lifetime
  std::string name;  // never empty: the loader names anonymous nodes "<op_type>_<index>"
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  std::vector<Value*> inputs;           // nullptr for an omitted optional input
  std::vector<Value*> outputs;          // nullptr for an omitted optional output
  std::vector<Value*> implicit_inputs;  // values of `owner` (possibly outer-scope entries) read by subgraphs
  const onnx::NodeProto* proto = nullptr;
  Graph* owner = nullptr;
  // Graph attributes, in attribute order: (attribute name, subgraph). GRAPHS attributes are not
  // supported by any ONNX operator and are rejected at load.
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> subgraphs;
  // TENSOR attributes materialized at load: attribute name -> tensor.
  std::map<std::string, std::shared_ptr<Tensor>> tensor_attributes;
  // Every attribute in NodeProto order: what plugins receive as EphostAttribute handles.
  struct AttributeRef {
    HandleTag<HandleKind::kAttribute> handle_tag;  // plugins see it as an EphostAttribute
    const onnx::AttributeProto* proto = nullptr;
    const Tensor* tensor = nullptr;  // TENSOR attributes only
  };
  std::vector<AttributeRef> attributes;

  // The attribute proto, or nullptr.
  const onnx::AttributeProto* attribute(const std::string& name) const;
  Graph* subgraph(const std::string& attribute_name) const;
};

class Graph {
 public:
  std::string name;
  const Model* model = nullptr;  // the model the graph was built from (outlives the graph)
  Graph* parent_graph = nullptr;  // null for the main graph
  Node* parent_node = nullptr;    // the node holding this graph as an attribute
  const onnx::GraphProto* proto = nullptr;

  std::vector<std::unique_ptr<Node>> nodes;    // index == Node::index
  std::vector<std::unique_ptr<Value>> values;  // index == Value::index
  std::unordered_map<std::string, Value*> by_name;
  std::vector<Value*> inputs;          // formal inputs, in declaration order (may include initializers)
  std::vector<Value*> outputs;         // in declaration order
  std::vector<Value*> initializers;    // in declaration order
  std::vector<Value*> outer_scope;     // outer-scope entries this graph (or its subgraphs) reads
  std::vector<Node*> topological_order;  // computed at build; the loader rejects cycles

  // The read-only view handed to plugins for this whole graph.
  std::unique_ptr<GraphView> view;

  // Main graph only: set by freeze(); a GraphEditor refuses a frozen IR.
  bool frozen = false;
  // Main graph only: the NodeProtos of the nodes edits added (in any graph of the IR), which their
  // Node::proto, attribute handles and subgraphs point into.
  std::vector<std::shared_ptr<const onnx::NodeProto>> edited_protos;

  Value* find(const std::string& value_name) const {
    auto it = by_name.find(value_name);
    return it == by_name.end() ? nullptr : it->second;
  }
  // Graph inputs that are not initializers: what a caller must feed.
  std::vector<Value*> required_inputs() const;
};

// What a plugin sees as an EphostGraph: a whole graph, or the nodes of one fused group. For a group,
// inputs are the values consumed from outside the group (in first-use order; constant initializers
// included, as ONNX Runtime does by default, and also listed in initializers), outputs are the values
// produced inside and used outside it (or graph outputs), initializers the constant initializers used.
struct GraphView {
  HandleTag<HandleKind::kGraph> handle_tag;  // plugins see a GraphView as an EphostGraph
  std::string name;
  const Graph* graph = nullptr;  // the graph the nodes belong to
  std::vector<const Node*> nodes;  // topological order
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
  std::vector<const Value*> initializers;
  const Node* parent_node = nullptr;
};

// The record of the initializers of v's model that may be freed once their readers are done
// (model/initializer_release.h), or null when the session keeps every byte.
InitializerRelease* initializer_release_of(const Value& v);

// Main-graph initializer tensors by name: what a rebuilt IR of the same model may share.
using InitializerTensors = std::unordered_map<std::string, std::shared_ptr<Tensor>>;

// Builds the IR for `model.proto` (already checked): values, producers/consumers, outer-scope links,
// implicit inputs, initializer data, node attributes, topological order, views; recursively for
// subgraphs. Returns the main graph; it points into `model`, which must outlive it.
// A main-graph initializer found in `reuse` with the proto's type and shape shares that tensor instead
// of being materialized again (a rebuild after an edit that left the initializers alone: pass
// main_initializer_tensors of the IR it replaces).
// Throws INVALID_GRAPH (cycle, value defined twice, input never defined) with the node and value named.
std::unique_ptr<Graph> build_graph_ir(const Model& model, const InitializerTensors& reuse = {});

// The initializer tensors of `main` (a main graph), for build_graph_ir's `reuse`.
InitializerTensors main_initializer_tensors(const Graph& main);

// Builds the view of a whole graph (also used by build_graph_ir).
std::unique_ptr<GraphView> make_full_view(const Graph& graph);

// The static type of an ONNX TypeProto: tensors with element type and shape (dims -1 where symbolic,
// missing or negative; unknown element types give 0); sequences of tensors and optionals of a tensor
// or a sequence with their kind and their tensors' element type; other kinds (maps, sparse tensors,
// sequences of sequences) give kind 0.
TypeInfo type_info_from_proto(const onnx::TypeProto& type);

}  // namespace ephost
