// The IR written back as ONNX: what a stage that still speaks ModelProto reads once the IR was edited
// (graph/graph_editor.h) and the Model's ModelProto no longer describes it (the provider host's snapshot
// of a graph, tests that run an edited model).
#pragma once

#include "graph/graph.h"

namespace onnx {
class ModelProto;
class GraphProto;
}  // namespace onnx

namespace ephost {

// `graph` (and its subgraphs) as a GraphProto, replacing what `out` held: the formal inputs and outputs
// as declared, every initializer from the IR's tensor (also the ones whose bytes left the ModelProto),
// the nodes in node-index order under their IR names (so an IR built from it has the same node indices
// and names), and the IR's types of the values the nodes define as value_info.
void write_graph_proto(const Graph& graph, onnx::GraphProto* out);

// The model of `main` (a main graph built from a Model) with its graph written from the IR: the header,
// opset imports, functions and metadata as the Model's ModelProto has them now.
void write_model_proto(const Graph& main, onnx::ModelProto* out);

}  // namespace ephost
