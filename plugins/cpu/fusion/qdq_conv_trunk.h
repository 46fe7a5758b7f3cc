// int8 trunks: the int8 convolution chains of a quantized convnet (qdq_conv.cpp: a ResNet block's
// convolutions with its residual Add, a projection convolution, the stem's convolution with its
// MaxPool) that read each other's values, claimed together as one group whose values stay int8 NHWC
// inside, as a float convolutional region keeps its values NHWC (cnn_region.h).
//
// One chain alone writes its output in NCHW, the graph's layout; where the next chain reads it, that
// chain transposes it back into NHWC (ResNet-50 u8s7: a block's output has two readers, the next block
// and its residual Add, so every block paid both transposes). Inside a trunk a value one of its chains
// makes is kept as NHWC bytes for the chains that read it, and only a value read outside the trunk (or
// a graph output) is written in NCHW, at the trunk's boundary. The float output of a DequantizeLinear
// one chain holds and others read (a projection block's input) is never made inside: its readers take
// the bytes it dequantizes (QuantizeLinear of it with the same parameters gives those bytes back
// exactly, and the residual Add dequantizes them as the op does), so the outputs are the chains' own,
// bit for bit.
#pragma once

#include <memory>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu::fusion {

// The trunks among `chains` (the groups the qdq_conv pattern claimed in `graph`, each in topological
// order): unions of two chains or more, joined where one reads a value of another and kept convex.
// Each trunk is given as the indices of its chains in `chains`.
std::vector<std::vector<size_t>> find_int8_trunks(const sdk::Graph& graph,
                                                  const std::vector<std::vector<sdk::Node>>& chains);

// Compiles a group made of the nodes of chains find_int8_trunks joined.
std::unique_ptr<sdk::CompiledGroup> compile_int8_trunk(const sdk::Graph& group, const KernelConfig& config);

}  // namespace ephost::cpu::fusion
