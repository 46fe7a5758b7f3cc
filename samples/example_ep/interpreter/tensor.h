// Tensors as the interpreter sees them: borrowed float data with a shape, and the error for a run
// whose inputs an op cannot take.
#pragma once

#include <cstdint>
#include <string>

#include "ephost/sdk/plugin.hpp"
#include "program.h"

namespace example_ep {

struct ConstTensor {
  const float* data = nullptr;
  Shape shape;
};

inline int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// A run whose tensors `op` cannot take (shapes are only known per run): EPHOST_INVALID_ARGUMENT
// naming the op and its node.
[[noreturn]] inline void bad_input(const Op& op, const std::string& what) {
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT,
                    std::string("example EP: ") + op_kind_name(op.kind) + " '" + op.name + "': " + what);
}

}  // namespace example_ep
