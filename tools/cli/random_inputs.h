// Deterministic random inputs: the same seed, name and shape give the same values on every machine
// (own generator, no std:: distributions, whose output is implementation-defined).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor_io.h"

namespace ephost_cli {

// Floating types: uniform in [-1, 1). Integers: uniform in [0, 10) (valid as small indices or
// counts). bool: 0/1. Strings: "s<k>". `stream` distinguishes the inputs of one run (input index).
HostTensor random_tensor(const std::string& name, int32_t elem_type, const std::vector<int64_t>& shape,
                         uint64_t seed, uint64_t stream);

}  // namespace ephost_cli
