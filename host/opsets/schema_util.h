// Helpers for the schemas written in opsetNN.cpp: construction, type lists, constant inputs, and the
// inference pieces several operators share.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ephost::opsets {

// A schema of ai.onnx operator `name`, version `since`, naming this file and line in onnx's messages.
#define EPHOST_OPSET_SCHEMA(name, since) \
  ::onnx::OpSchema((name), __FILE__, __LINE__).SetDomain(::onnx::ONNX_DOMAIN).SinceVersion(since)

using TypeList = std::vector<std::string>;

inline TypeList tensor_types(std::initializer_list<const char*> elems) {
  TypeList out;
  for (const char* e : elems) out.push_back(std::string("tensor(") + e + ")");
  return out;
}
inline TypeList concat(TypeList a, const TypeList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
inline const TypeList& float_types() {
  static const TypeList t = tensor_types({"float16", "float", "double"});
  return t;
}
inline const TypeList& float_types_with_bfloat() {
  static const TypeList t = tensor_types({"float16", "float", "double", "bfloat16"});
  return t;
}
inline const TypeList& float_types_with_bfloat_no_double() {
  static const TypeList t = tensor_types({"float", "float16", "bfloat16"});
  return t;
}
inline const TypeList& integer_types() {
  static const TypeList t = tensor_types({"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"});
  return t;
}
// Every element type onnx 1.12 can name.
inline const TypeList& all_tensor_types() {
  static const TypeList t = tensor_types({"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                                          "bfloat16", "float16", "float", "double", "string", "bool", "complex64",
                                          "complex128"});
  return t;
}
inline const TypeList& index_types() {
  static const TypeList t = tensor_types({"int32", "int64"});
  return t;
}

// Input i is given (present in the node) and its type known.
bool has_input(onnx::InferenceContext& ctx, size_t i);
// The integers of constant input i (int32 or int64), or nothing when it is absent or not constant.
std::optional<std::vector<int64_t>> constant_ints(onnx::InferenceContext& ctx, size_t i);
// The floats of constant input i (float, double or float16), or nothing.
std::optional<std::vector<double>> constant_floats(onnx::InferenceContext& ctx, size_t i);
// Normalizes `axis` against `rank`, failing inference (naming `what`) when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);

// For a version that changes only the element types an operator accepts (opsets 19 to 25 mostly add
// float8, int4 and the like): what onnx 1.12's own schema of the operator's previous version says.
// The schema of `op` at `version` in onnx's registry (registered by onnx itself); throws when absent.
const onnx::OpSchema& onnx_schema(const char* op, int version);
// Its type constraint `param`'s allowed types, plus `extra`.
TypeList onnx_types(const char* op, int version, const char* param, const TypeList& extra = {});
// Its shape and type inference, and its data propagation (for Shape, Size, Cast and the like).
onnx::InferenceFunction onnx_inference(const char* op, int version);
onnx::DataPropagationFunction onnx_data_propagation(const char* op, int version);

// A version of `op` at `since` that accepts more element types and otherwise keeps the meaning of the
// operator's previous version (the newest registered below `since`, onnx's or ours): its inputs,
// outputs, attributes, inference and function body, with each type constraint widened by
// `widen(param, allowed)` (types already allowed are not repeated) and the attributes `extra_attrs`
// added. Throws when `op` has no earlier version.
using TypeWidener = std::function<TypeList(const std::string& param, const TypeList& allowed)>;
onnx::OpSchema types_only_version(const char* op, int since, const TypeWidener& widen = nullptr,
                                  const std::vector<onnx::OpSchema::Attribute>& extra_attrs = {});

// Output 0 takes input 0's element type and the broadcast of inputs 0 and 1 (when both are known).
void broadcast_binary_inference(onnx::InferenceContext& ctx);

}  // namespace ephost::opsets
