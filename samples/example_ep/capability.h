// What the example EP claims: connected groups of float nodes it can run, never a group whose fusion
// would form a cycle.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace example_ep {

// The ONNX op types the example EP runs (default domain).
const std::set<std::string>& supported_op_types();

// Why `node` cannot be run by the example EP, or "" when it can. Everything is checked here, from
// what the graph tells statically (element types, ranks, constant weights, attributes), so that
// compile never meets a node it cannot translate.
std::string unsupported_reason(const ephost::sdk::Node& node);

// The groups to claim in `graph`: nodes whose op type is in `claim` and that unsupported_reason
// accepts, joined along their edges into connected groups. A group never contains two nodes with a
// path between them through a node outside the claim (fusing it would form a cycle): such groups are
// cut into stages (ephost::sdk::acyclic_groups). Groups are in graph order, their nodes in topological
// order. Nodes of a claimed op type that are refused are logged with the reason (verbose).
std::vector<std::vector<ephost::sdk::Node>> find_groups(const ephost::sdk::Graph& graph,
                                                        const std::set<std::string>& claim);

}  // namespace example_ep
