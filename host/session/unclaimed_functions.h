// Function fallback: before partitioning, a node that no provider claims but whose operator is defined
// as a function (host/transform/function_expansion.h) is replaced by its function body, and the body's
// nodes are offered to the providers instead, recursively (a body may use function ops nobody claims).
//
// Why here: which nodes need it is only known by asking the providers, which needs the IR; bodies are
// spliced into the IR in place (graph/graph_editor.h) and typed where they are spliced in: the model is
// neither inferred again nor the IR rebuilt. The partitioner then sees a graph whose nodes providers claim, and its error for
// unclaimed nodes stays the one error for nodes that have no kernel and no body.
#pragma once

#include <cstddef>

#include "graph/graph.h"
#include "partition/partition.h"

namespace ephost {

// `graph` is the IR of `model` (what get_capability reads). Asks providers 0..provider_count-1 for
// their claims on every graph (main and subgraphs) that has function-op nodes; expands the nodes none
// of them claims in `graph`; repeats until every function-op node is claimed. A provider whose
// get_capability fails claims nothing here (the partitioner reports it). model.proto keeps the graph
// as loaded (plus any opset import a body needs); graph/graph_writer.h writes the expanded one. Returns
// how many nodes were expanded, in all rounds (0: `graph` is untouched).
size_t expand_unclaimed_functions(Model& model, std::unique_ptr<Graph>& graph, const CapabilityQuery& query,
                                  size_t provider_count);

}  // namespace ephost
