// What the provider host needs to see the graphs the host sees: the model the graph was built from
// (sent once per graph), and a path from its main graph to any subgraph, so that a view, a node or a
// fused group is named by indices that mean the same thing on both sides (the provider host builds
// the same IR from the same proto: node and value indices agree).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "isolation/wire.h"

namespace ephost::isolation {

// The main graph `graph` belongs to (itself when it is one).
const Graph& main_graph_of(const Graph& graph);

// The serialized model of `main`, written from the IR (graph/graph_writer.h: edits included, the
// initializers' bytes the IR took from the proto put back), for the provider host to rebuild the graph
// with the same node indices.
std::string snapshot_model(const Graph& main);

// Writes the way from the main graph down to `graph`: (node index, attribute name) per level.
void write_graph_path(MessageWriter& out, const Graph& graph);
// Follows a path written by write_graph_path from `main`. Throws EP_FAIL when it leads nowhere.
const Graph& read_graph_path(MessageReader& in, const Graph& main);

}  // namespace ephost::isolation
