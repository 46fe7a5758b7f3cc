// The IR builder's steps that the graph editor (graph_editor.h) reuses on a built IR. Internal to
// host/graph/: other rooms build an IR with build_graph_ir and change it with GraphEditor.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"

namespace ephost::graph_detail {

// How messages name `graph`: "main graph", or "subgraph 'x' (attribute 'then_branch' of node 'y')".
std::string graph_label(const Graph& graph);

// Adds to `graph` the nodes built from `protos` (which must outlive the IR), in order: their output
// values, inputs resolved in `graph` or the graphs around it (outer-scope entries made on demand), TENSOR
// attributes, subgraphs built whole, attribute handles. An output name `graph` already defines is an
// error unless its value is in `adoptable` and has no producer: the new node then produces that value.
// Leaves graph.topological_order and graph.view stale (the editor re-sorts when it commits); the
// subgraphs' outer-scope reads are the new nodes' implicit inputs, but the node holding `graph`, when
// `graph` is a subgraph, is not told of new outer-scope reads (link_implicit_inputs).
// Throws INVALID_GRAPH naming the node when an input is defined nowhere or an output twice.
std::vector<Node*> add_nodes(Graph& graph, const std::vector<const onnx::NodeProto*>& protos,
                             const std::unordered_set<const Value*>& adoptable);

// Makes every outer-scope entry of `node`'s subgraphs an implicit input of `node` (and `node` a consumer
// of it), adding only those it does not list yet.
void link_implicit_inputs(Node& node);

// Sets graph.topological_order (Kahn's order, ties by node index: a sorted graph keeps its order).
// Throws INVALID_GRAPH naming the nodes of a cycle.
void sort_topologically(Graph& graph);

}  // namespace ephost::graph_detail
