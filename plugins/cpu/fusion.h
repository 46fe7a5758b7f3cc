// Elementwise chain fusion: a connected run of float32 pointwise nodes (Relu, Clip, HardSigmoid,
// HardSwish, Sigmoid, and Add/Sub/Mul/Div of a chain value with a scalar constant or with another
// chain value) that all derive from one tensor is claimed as one fused group and run block by block,
// so the chain reads and writes memory once instead of once per node. PP-OCRv4's detector follows
// every Conv by eight of these (affine, HardSwish as x*Clip(x+3,0,6)/6, affine). Each step computes
// exactly what its node's kernel computes, in the same order, so results are bit-identical.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu {

// The chains of `graph` worth fusing (two nodes or more), each in topological order; nodes for which
// `skip` is true (claimed by another fused group) take no part.
std::vector<std::vector<sdk::Node>> find_elementwise_chains(
    const sdk::Graph& graph, const std::function<bool(const sdk::Node&)>& skip = nullptr);

// Compiles a group found by find_elementwise_chains; fails (EPHOST_NOT_IMPLEMENTED) on anything else.
std::unique_ptr<sdk::CompiledGroup> compile_elementwise_chain(const sdk::Graph& group, const std::string& name,
                                                              const KernelConfig& config);

}  // namespace ephost::cpu
