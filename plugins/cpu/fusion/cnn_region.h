// Convolutional regions: a convex set of 4-D float nodes (Conv, ConvTranspose, pools, Concat on
// channels, nearest Resize, BatchNormalization, activations, elementwise arithmetic) claimed as one
// fused group and run in NHWC (channels-last), the layout oneDNN's fastest convolution kernels use,
// converting only at the region's edges. Inside, a convolution takes what follows it as post-ops:
// per-channel affines (BatchNormalization, Mul/Add by per-channel constants) fold into its weights,
// activations (including decomposed SiLU and HardSwish) and a residual Add become oneDNN post-ops.
// Primitives are created once per input shape, at compile time when the shapes are static.
//
// In three parts: cnn_region_select.cpp chooses the regions (which nodes, kept convex),
// cnn_region_program.{h,cpp} turns a group into steps over numbered values (fusing post-ops), and
// cnn_region_run.cpp plans the steps per set of input shapes (primitives, arena offsets) and runs them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu::fusion {

// The regions of `graph` worth claiming (each with at least one convolution), in topological order
// each; nodes for which `skip` is true take no part. Every region is convex (no path leaves it and
// comes back), so the host accepts it as one group.
std::vector<std::vector<sdk::Node>> find_cnn_regions(const sdk::Graph& graph,
                                                     const std::function<bool(const sdk::Node&)>& skip);

// Compiles a group made of nodes find_cnn_regions can return (any convex subset of them).
std::unique_ptr<sdk::CompiledGroup> compile_cnn_region(const sdk::Graph& group, const KernelConfig& config);

}  // namespace ephost::cpu::fusion
