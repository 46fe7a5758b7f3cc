// Reading a HostTensor's elements as numbers or text: printing values and summary statistics (run)
// and comparing with a tolerance (test).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tensor_io.h"

namespace ephost_cli {

bool is_floating(int32_t elem_type);  // float, double, float16, bfloat16 (complex counts its parts)
bool is_complex(int32_t elem_type);
// Scalars per element: 2 for complex types, else 1.
size_t components(int32_t elem_type);
// Scalar `i` (< element_count() * components()) as a double (integers exactly up to 2^53).
double scalar_as_double(const HostTensor& t, size_t i);
// Element `i` as text: "1.5", "-3", "true", "\"abc\"", "(1+2i)".
std::string element_to_string(const HostTensor& t, size_t i);
// A double as short text (%.6g, "nan", "inf").
std::string number_to_string(double v);
// Milliseconds with three decimals ("12.345").
std::string ms_to_string(double ms);

struct TensorStats {
  size_t count = 0;      // scalars considered (finite ones for min/max/mean/sum)
  double min = 0, max = 0, mean = 0, sum = 0, abs_sum = 0;
  size_t nan = 0, inf = 0;
};
// Numeric tensors only (nullopt for strings).
std::optional<TensorStats> compute_stats(const HostTensor& t);

// ONNX backend test comparison: same type and shape; floating values within atol + rtol * |expected|
// (NaN equals NaN, infinities must match); integers, bools and strings exactly. nullopt when equal,
// else why not, e.g. "max abs diff 0.3 at index 12 (expected 1, got 1.3); 4 of 100 elements out of
// tolerance".
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};
std::optional<std::string> compare_tensors(const HostTensor& expected, const HostTensor& got, const Tolerance& tol);
// The first half of compare_tensors: element type and shape only (values that cannot be reproduced,
// e.g. those of random ops).
std::optional<std::string> compare_type_and_shape(const HostTensor& expected, const HostTensor& got);

}  // namespace ephost_cli
