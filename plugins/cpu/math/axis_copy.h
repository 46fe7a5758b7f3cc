// Block copies along one axis, for ops that cut a tensor into parts or assemble one from parts
// (SplitToSequence, ConcatFromSequence, Scan's slices, Loop's and Scan's stacked outputs).
//
// A tensor is viewed as [outer][extent][inner]: `outer` is the product of the dims before the axis,
// `extent` the axis' size, `inner_bytes` the bytes of one step along the axis (product of the dims
// after it, times the element size). A part covering [start, start + length) of the axis is a
// tensor [outer][length][inner]. Element types do not matter (bytes are copied); strings are not
// handled here (their elements are pointers the caller must copy one by one).
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

// Copies `part` ([outer][length][inner]) into `whole` ([outer][extent][inner]) at axis offset `start`.
void copy_into_axis_range(const void* part, void* whole, int64_t outer, int64_t extent, int64_t start,
                          int64_t length, int64_t inner_bytes, int threads);

// Copies axis range [start, start + length) of `whole` ([outer][extent][inner]) into `part`.
void copy_from_axis_range(const void* whole, void* part, int64_t outer, int64_t extent, int64_t start,
                          int64_t length, int64_t inner_bytes, int threads);

}  // namespace ephost::cpu::math
