// The element types ONNX added after onnx 1.12 (float8, int4, uint4, float4e2m1, float8e8m0, int2,
// uint2): their type strings ("tensor(float8e4m3fn)"...) made known to onnx 1.12's type parser, and the
// lists of them each opset added, for the schemas that accept them.
#pragma once

#include <string>
#include <vector>

namespace ephost::opsets {

// Teaches onnx 1.12's type-string tables the names of element types 17 to 26, so that schemas may list
// "tensor(int4)" and that inference and checking name such values. Once per process; register_schemas
// calls it before any schema is built. Throws std::runtime_error when onnx's tables cannot be reached.
void register_new_type_names();

// The element types opset `opset` added that onnx 1.12 cannot name, as "tensor(...)" strings: float8
// (19), int4 and uint4 (21), float4e2m1 (23), float8e8m0 (24), int2 and uint2 (25); empty otherwise.
std::vector<std::string> new_types_of_opset(int opset);
// Every one added at or below `opset`.
std::vector<std::string> new_types_through(int opset);

}  // namespace ephost::opsets
