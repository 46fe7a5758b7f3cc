// Einsum equations: parsing into per-axis label ids (ellipsis expanded), which the Einsum kernel
// turns into diagonals, sums, transposes and batched matrix products.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ephost::cpu::math {

struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // the label id of each axis of each input
  std::vector<int> output;               // the label id of each output axis
  int labels = 0;                        // ids are 0 .. labels - 1
};

// Parses `equation` (spaces ignored) for inputs of the given ranks. Letters are labels; "..." stands
// for the broadcast axes, right-aligned across the inputs as numpy aligns them. Without "->" the
// output is numpy's implicit one: the broadcast axes, then the letters used once, alphabetically.
// Labels missing from the output (the ellipsis axes included) are summed over.
// Throws std::invalid_argument on malformed equations or rank mismatches.
EinsumSpec parse_einsum(const std::string& equation, const std::vector<int64_t>& ranks);

}  // namespace ephost::cpu::math
