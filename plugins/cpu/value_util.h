// What the kernels over sequences, optionals and subgraphs (sequence_ops, optional_ops,
// control_flow, loop, scan, sequence_map) share: scalars to feed subgraphs, copying a tensor into a
// sequence element, and stacking per-iteration results into one output.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu {

// Host values holding a copy of a scalar: an iteration number or a loop condition for a subgraph.
sdk::OwnedValue int64_scalar_value(int64_t v);
sdk::OwnedValue bool_scalar_value(bool v);

// A one-element bool tensor's value; throws std::invalid_argument naming `what` otherwise.
bool bool_of(const sdk::Tensor& t, const char* what);

// Writes a copy of `t` (strings included) as element `k` of sequence output `out`.
void write_sequence_element(sdk::KernelContext& ctx, size_t out, size_t k, const sdk::Tensor& t);

// Output `out` := the tensors `parts` stacked along a new axis `axis` (in [-(r+1), r] for parts of
// rank r), part i at position i, or at n-1-i when `reverse`. Every part must have the type and shape
// of the first. With no parts the output has shape `empty_shape` (whose dim `axis` is 0) and element
// type `empty_elem_type`. Strings included. Throws std::invalid_argument on mismatches.
void write_stacked_output(sdk::KernelContext& ctx, size_t out, const std::vector<sdk::Tensor>& parts, int64_t axis,
                          bool reverse, int32_t empty_elem_type, const Shape& empty_shape, int threads);

// The shape a stacked output has when the loop ran no iteration: the declared per-iteration shape
// of `body_output` (a value of the subgraph) with a 0 inserted at `axis`; just [0] when that shape
// is not fully known.
Shape empty_stacked_shape(const sdk::Value& body_output, int64_t axis);

}  // namespace ephost::cpu
