// Which nodes the OpenCL plugin claims, and in which groups: each node is lowered on its own (lowering.h)
// and claimed when that succeeds; claimed nodes are joined into groups the host accepts (acyclic_groups);
// a group without any device work (only shape arithmetic or constants) is left to the other providers.
#pragma once

#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {

std::vector<std::vector<ephost::sdk::Node>> find_groups(const ephost::sdk::Graph& graph);

}  // namespace ephost_opencl
