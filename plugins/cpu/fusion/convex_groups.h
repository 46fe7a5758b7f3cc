// Growing fused groups by merging neighbours while each stays convex (no path leaves the group and
// comes back, so the host accepts it as one group): shared by the float convolutional regions
// (cnn_region_select.cpp) and the int8 trunks (qdq_conv_trunk.cpp).
#pragma once

#include <vector>

#include "kernel_base.h"

namespace ephost::cpu::fusion {

// `nodes` in topological order; group[i] is node i's group (-1: none). Merges two groups joined by an
// edge (one's node reads the other's output) whenever their union stays convex, until no more merge;
// the reader's group takes the number of the group it reads from.
void merge_convex_neighbours(const std::vector<sdk::Node>& nodes, std::vector<int>& group);

}  // namespace ephost::cpu::fusion
