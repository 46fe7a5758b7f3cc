// N-d transpose of elements of 1, 2, 4 or 8 bytes: y[i_perm[0], i_perm[1], ...] = x[i_0, i_1, ...].
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape.h"

namespace ephost::cpu::math {

// Output shape for `perm` (empty: reversed); throws when perm is not a permutation of the axes.
Shape transpose_shape(const Shape& in, std::vector<int64_t>* perm);
void transpose(const void* x, const Shape& in, const std::vector<int64_t>& perm, void* y, size_t elem_size,
               int threads);

}  // namespace ephost::cpu::math
