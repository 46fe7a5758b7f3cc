// Function expansion: a node whose operator is defined as a function (an ONNX schema with a function
// body, context-dependent or not, or a model-local FunctionProto) can run as the nodes of that body.
// The session uses it for the nodes no provider claims (host/session/unclaimed_functions.h); the bodies
// are spliced into the IR, not into the ModelProto.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "graph/graph.h"

namespace ephost {

// True when `node` (of `model`, at the model's opset for its domain) has a function body: a
// model-local function of that domain and name, or a schema that defines one.
bool has_function_body(const Model& model, const onnx::NodeProto& node);

namespace expansion_detail {
class NameAllocator;
}  // namespace expansion_detail

// The function bodies of IR nodes, instantiated for the nodes that call them. Names the bodies define are
// unique in the model across every instantiation of one FunctionBodies (a body's node may itself be
// expanded in a later round).
class FunctionBodies {
 public:
  // `model` is the model the IR was built from; a body needing a domain the model does not import adds
  // the import (to model.opsets and model.proto).
  explicit FunctionBodies(Model& model);
  ~FunctionBodies();
  FunctionBodies(const FunctionBodies&) = delete;
  FunctionBodies& operator=(const FunctionBodies&) = delete;

  // The nodes of `node`'s function body (`node` must satisfy has_function_body), bound to the node:
  //   - formal inputs become the node's inputs ("" where the node omits an optional one), formal
  //     outputs its outputs (an output the node omits gets a fresh name); every other name the body
  //     defines, in its subgraphs too, gets a name unique in the model, "<node name>/<name>";
  //   - attributes that refer to the node's (ref_attr_name) take the node's value, else the schema's
  //     default, else are left out;
  //   - body nodes are named "<node name>/<body node name or op_type_k>".
  // The body is written for its own opsets. Where the model's opset differs from the body's, every op
  // the body uses must have the same signature (inputs, outputs, attributes and their defaults) at both
  // versions. A body that cannot be used (no body can be built from the node's input types,
  // incompatible opsets, a body reading names it does not define) is INVALID_GRAPH naming the node and
  // why.
  std::vector<onnx::NodeProto> instantiate(const Node& node);

 private:
  Model& model_;
  std::unique_ptr<expansion_detail::NameAllocator> names_;
};

// Replaces each of `nodes` (nodes of the IR `main`, in any of its graphs) by its function body in
// place (graph/graph_editor.h: the body takes the node's place and its values are typed from what they
// read; the model is not inferred again, the IR not rebuilt), and commits the edit. Returns how many
// nodes were expanded.
size_t expand_function_nodes(FunctionBodies& bodies, Graph& main, const std::vector<Node*>& nodes);

}  // namespace ephost
