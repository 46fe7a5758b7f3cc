// The structure every graph of a model must have before anything reads it as a graph: SSA (each name
// defined once), every input defined (in the graph, or in an enclosing one for a subgraph), no cycle.
// Part of loading (model/loader.cpp), after external data and sparse initializers.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace ephost {

// Checks `graph` and its subgraphs, nested at most 64 deep; `where` names it in errors ("main graph").
// An unsorted acyclic graph is sorted in place (stable: ties keep their order). Throws INVALID_GRAPH
// naming the graph, the node and the value at fault.
void check_graph_structure(onnx::GraphProto& graph, const std::string& where);

}  // namespace ephost
