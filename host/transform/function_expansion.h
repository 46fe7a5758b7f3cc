// Function expansion: a node whose operator is defined as a function (an ONNX schema with a function
// body, context-dependent or not, or a model-local FunctionProto) can run as the nodes of that body.
// The session uses it for the nodes no provider claims (host/session/unclaimed_functions.h); this file
// only rewrites the ModelProto.
#pragma once

#include <cstddef>
#include <unordered_set>

#include "graph/graph.h"

namespace ephost {

// True when `node` (of `model`, at the model's opset for its domain) has a function body: a
// model-local function of that domain and name, or a schema that defines one.
bool has_function_body(const Model& model, const onnx::NodeProto& node);

// Replaces each node of `nodes` (NodeProtos of model.proto, in any of its graphs; each must satisfy
// has_function_body) by the nodes of its function body, in place, so the graph stays topologically
// sorted:
//   - formal inputs become the node's inputs ("" where the node omits an optional one), formal
//     outputs its outputs (an output the node omits gets a fresh name); every other name the body
//     defines, in its subgraphs too, gets a name unique in the model, "<node name>/<name>";
//   - attributes that refer to the node's (ref_attr_name) take the node's value, else the schema's
//     default, else are left out;
//   - body nodes are named "<node name>/<body node name or op_type_k>".
// The body is written for its own opsets; a domain the model does not import is imported (also in
// model.opsets). Where the model's opset differs from the body's, every op the body uses must have
// the same signature (inputs, outputs, attributes and their defaults) at both versions.
// A body that cannot be used (no body can be built from the node's types, incompatible opsets, a
// body reading names it does not define) is INVALID_GRAPH naming the node and why.
// The values the body nodes define are typed in the graph's value_info from the types of what they
// read (model/node_types.h: the model is not inferred again). Node pointers into model.proto are
// invalid afterwards; the IR must be rebuilt. Returns how many nodes were expanded.
size_t expand_function_nodes(Model& model, const std::unordered_set<const onnx::NodeProto*>& nodes);

}  // namespace ephost
