// Edits of a built IR before partitioning: splice nodes in, replace a node by nodes that compute its
// outputs (its function body, or itself reading other values), fold a node into constants (or record
// its outputs' constant values and keep it), remove a node, add or remove a constant initializer. The values an edit adds are
// typed from the types of what the new nodes read (model/node_types.h), not by inferring the model
// again. After partitioning the session freezes the IR (freeze()); a frozen IR refuses every edit, so
// concurrent Runs can read it without locks.
//
// An editor batches edits: each keeps names, producers and consumers exact at once (a later edit may
// read what an earlier one added), while node and value indices, topological orders, the types of
// added values (one local inference per edited graph) and views are brought up to date by commit(),
// which must run before anything else reads the IR. An edit that fails
// its checks throws before changing anything; a failure inside commit() (a cycle the edits made) leaves
// the IR unusable, and the caller discards it (session creation fails).
//
// Ownership: the NodeProtos an edit adds are kept by the main graph (Graph::edited_protos). The
// ModelProto is not rewritten: it no longer describes an edited IR.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"
#include "graph/type_proto.h"

namespace onnx {
class NodeProto;
}  // namespace onnx

namespace ephost {

class GraphEditor {
 public:
  // `main` is a main graph (no parent); INVALID_ARGUMENT when it is frozen or is a subgraph.
  explicit GraphEditor(Graph& main);
  GraphEditor(const GraphEditor&) = delete;
  GraphEditor& operator=(const GraphEditor&) = delete;

  // Adds `nodes` (in topological order) to `graph`, the main graph or one of its subgraphs. Each input
  // is a value of `graph` or of a graph around it, or an output of an earlier node of `nodes`; each
  // output is a name `graph` does not define yet. Returns the new nodes, in order.
  std::vector<Node*> splice(Graph& graph, std::vector<onnx::NodeProto> nodes);

  // Replaces `node` by `nodes` (in topological order), placed where `node` was: every output `node`
  // defines must be an output of one of `nodes`, under the same name, so its consumers and graph outputs
  // read it unchanged (the value keeps its type); any other output is a name not defined yet. Inputs as
  // for splice, minus `node`'s outputs. Returns the new nodes, in order.
  std::vector<Node*> replace(Node& node, std::vector<onnx::NodeProto> nodes);

  // Replaces `node` by constants: its output k becomes a constant initializer holding values[k] (one
  // entry per output; null for an omitted output, or for one nobody reads, which is dropped). A value
  // whose element type is known must keep it. `node` is removed.
  void fold(Node& node, const std::vector<std::shared_ptr<Tensor>>& values);

  // Records that `node`'s read outputs are computed from constants by `computation` (Value::precomputed,
  // made on first request: graph/precomputed_value.h) and keeps `node`, so that providers see the
  // outputs as constants and `node` as what made them. Where `computation` is already computed, checks
  // its values as fold does.
  void precompute(Node& node, const std::shared_ptr<PrecomputedNode>& computation);

  // After partitioning, for a node whose outputs are all precomputed (or unread) and that no step runs:
  // its precomputed outputs become initializers of its graph (computed now if nobody asked before; throws
  // what the computation throws, before any change) (read as such by the plan and executors),
  // and the node stays as the record of how they were made (providers re-read it when they compile).
  void keep_precomputed_as_initializers(Node& node);

  // Removes `node`, whose outputs nobody reads and which are not graph outputs; its outputs go too.
  void remove(Node& node);

  // Adds a constant initializer `name` holding `value` to `graph` (the main graph or one of its
  // subgraphs); `name` must be defined neither in `graph` nor in a graph around it. Returns its value,
  // which later edits may read.
  Value* add_initializer(Graph& graph, const std::string& name, std::shared_ptr<Tensor> value);

  // Removes `value`, a constant initializer (not a graph input) that nothing reads: no node, no
  // subgraph, not a graph output.
  void remove_initializer(Value& value);

  // Brings every edited graph up to date: nodes and values renumbered in their graph's order (a spliced
  // node last, a replacing node where the node it replaced was), implicit inputs of the nodes holding
  // edited subgraphs, topological orders, the added values' types, views. Throws INVALID_GRAPH on a
  // cycle the edits made.
  void commit();

 private:
  Graph& checked_graph(Graph& graph, const char* edit) const;
  Node& checked_node(Node& node, const char* edit) const;
  std::vector<Node*> add(Graph& graph, std::vector<onnx::NodeProto> nodes, const Node* replaced);
  void detach_inputs(Node& node);
  void drop_value(Value& value);
  void touch(Graph& graph);
  void commit_graph(Graph& graph);
  void type_added_nodes(Graph& graph);

  Graph& main_;
  std::unordered_set<const Node*> removed_;
  // Nodes added since the last commit, which types what they define, and their (owned) protos.
  std::unordered_map<const Node*, onnx::NodeProto*> untyped_;
  std::unordered_set<const Value*> dropped_;
  // A replaced node -> the nodes that took its place.
  std::unordered_map<const Node*, std::vector<Node*>> placed_;
  std::unordered_set<const Node*> placed_nodes_;
  std::unordered_set<Graph*> touched_;
};

// Makes `main` (a main graph) read-only for good: every GraphEditor refuses it from now on. The session
// freezes its IR once it is partitioned.
void freeze(Graph& main);

}  // namespace ephost
