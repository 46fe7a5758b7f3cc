// Fallback for a cached context that cannot be used: the EPContext node is replaced in the IR
// (graph/graph_editor.h) by the original nodes of its partition, cut out of the source model between
// the node's inputs and outputs (the ctx model keeps the source's value names at partition
// boundaries), with the initializers they read. The spliced nodes are typed where they go in (the
// editor's commit), so neither model is inferred again and the IR is not rebuilt.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/graph_editor.h"
#include "model/model.h"

namespace onnx {
class ModelProto;
class NodeProto;
class TensorProto;
}  // namespace onnx

namespace ephost {

// The nodes of a source model that compute an EPContext node's outputs from its inputs.
struct SourcePartition {
  std::vector<onnx::NodeProto> nodes;  // in the source's (topological) order; anonymous ones named
                                       // "<EPContext node>/<op_type>_<index in the source>"
  std::vector<const onnx::TensorProto*> initializers;  // the source's initializers they read (into `source`)
};

// Cuts the partition of EPContext node `context` out of `source` (loaded from `source_path`, named in
// errors). Throws INVALID_GRAPH naming the value when the source model does not contain that partition
// (e.g. a different model).
SourcePartition cut_source_partition(const Node& context, const onnx::ModelProto& source,
                                     const std::string& source_path);

// Replaces `context` (a node of the IR `editor` edits, built from `ctx`) by `partition`: the
// initializers the main graph lacks are added, the nodes put where `context` was, and `ctx` imports the
// source's domains it lacked. Returns the names of the inserted nodes. The caller commits the editor.
std::vector<std::string> splice_source_partition(GraphEditor& editor, Model& ctx, Node& context,
                                                 SourcePartition partition, const onnx::ModelProto& source);

}  // namespace ephost
