// After partitioning, before the IR freezes: the steps that would only compute precomputed values go.
//
// Constant folding precomputes a QDQ model's DequantizeLinear of a quantized weight, and what reads it,
// instead of folding them (transform/constant_folding.cpp): the node stays so that a provider can fuse
// it into an int8 group, while every provider already sees its output as a constant. Where a provider
// claimed such a node on its own (no fused group wants it), running it would compute on every run what
// is already known: its step is dropped and its outputs become initializers of its graph
// (GraphEditor::keep_precomputed_as_initializers), read by the plan and the executors as any other.
// This is what the CPU plugin's own constant folding used to do for the nodes it did not fuse.
#pragma once

#include <cstddef>
#include <vector>

#include "partition/partition.h"

namespace ephost {

class Graph;

// `partitions` are those of `main` and its subgraphs (partition_graphs). Drops every single-node,
// non-preloaded step whose node's outputs are all precomputed or unread; returns how many it dropped.
size_t drop_precomputed_steps(Graph& main, std::vector<GraphPartition>& partitions);

}  // namespace ephost
