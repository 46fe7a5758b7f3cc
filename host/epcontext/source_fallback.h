// Fallback for a cached context that cannot be used: the EPContext node is replaced by the original
// nodes of its partition, cut out of the source model between the node's inputs and outputs (the ctx
// model keeps the source's value names at partition boundaries), with the initializers they read.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"

namespace onnx {
class ModelProto;
class GraphProto;
}  // namespace onnx

namespace ephost {

// Replaces node `node_name` (an EPContext node of ctx.graph()) with the nodes of `source` that compute
// its outputs from its inputs. Returns the names of the inserted nodes. Throws INVALID_GRAPH naming the
// value when the source model does not contain that partition (e.g. a different model).
std::vector<std::string> replace_with_source_nodes(onnx::ModelProto& ctx, const std::string& node_name,
                                                   const onnx::ModelProto& source, const std::string& source_path);

// Types what the inserted nodes (named `inserted`, in ctx.proto's main graph) define and their source
// did not type, from the types around them (model/node_types.h): the rest of the ctx model keeps its
// types, so it is not inferred again.
void type_source_nodes(Model& ctx, const std::vector<std::string>& inserted);

}  // namespace ephost
