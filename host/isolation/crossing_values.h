// What crosses to a provider host process: tensors of numbers only (in the shared arena, or as device
// buffer ids). Sequences, optionals, string tensors and subgraphs do not: a kernel context there cannot
// hold them (served_context.h). A claim of an isolated provider touching one is refused when it is
// made, with the reason in the partition report, so the node goes to the next provider (ending with the
// CPU plugin) instead of failing every run.
#pragma once

#include <string>
#include <vector>

namespace ephost {
class Node;
}

namespace ephost::isolation {

// Why the claim of `nodes` (one node, or a fused group) cannot run in provider `provider`'s host
// process: the first value that crosses the claim's edge and is not a tensor of numbers, or a node that
// runs a subgraph; "" when everything crosses. Values inside a fused group (made and read by its own
// nodes only) never cross, so they may be anything.
std::string why_claim_cannot_cross(const std::vector<const Node*>& nodes, const std::string& provider);

}  // namespace ephost::isolation
