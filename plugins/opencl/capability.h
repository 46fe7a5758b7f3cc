// Which nodes the OpenCL plugin claims, and in which groups.
//
// Nodes are lowered (lowering.h) in topological order into one scratch program, so that a node whose
// input's rank the graph does not record (a Reshape's output, say) still lowers when that input comes from
// a node lowered before it; a node is claimed when it lowers. Claimed nodes are joined into groups the host
// accepts (acyclic_groups), and each group is then lowered exactly as compile will lower it (its inputs
// taken from the graph's types): a node that fails there is dropped and the groups are formed again, so a
// claim never turns into a failed compile. A group without any device work (only shape arithmetic or
// constants) is left to the other providers.
#pragma once

#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

std::vector<std::vector<ephost::sdk::Node>> find_groups(const ephost::sdk::Graph& graph);

}  // namespace ephost_opencl
