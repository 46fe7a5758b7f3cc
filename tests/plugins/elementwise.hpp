// Float32 element-wise arithmetic with numpy broadcasting, shared by the test plugins.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost_test {

enum class BinaryOp { kAdd, kMul };
enum class UnaryOp { kRelu };

inline float apply(BinaryOp op, float a, float b) { return op == BinaryOp::kAdd ? a + b : a * b; }
inline float apply(UnaryOp, float x) { return x > 0.0f ? x : 0.0f; }

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// numpy's rule: align trailing dimensions; each pair must be equal or contain a 1.
inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      ephost::sdk::fail(EPHOST_INVALID_ARGUMENT,
                        "shapes " + shape_text(a) + " and " + shape_text(b) + " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element strides of `shape` seen through `out_shape` (0 where broadcast).
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> strides(out_shape.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = shape.size() - 1 - k;
    size_t o = out_shape.size() - 1 - k;
    strides[o] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

// out = a (op) b, out having broadcast_shape(a_shape, b_shape).
inline void broadcast_binary(BinaryOp op, const float* a, const std::vector<int64_t>& a_shape, const float* b,
                             const std::vector<int64_t>& b_shape, float* out, const std::vector<int64_t>& out_shape) {
  int64_t count = ephost::sdk::element_count(out_shape);
  if (count == 0) return;
  if (a_shape == b_shape) {
    for (int64_t i = 0; i < count; ++i) out[i] = apply(op, a[i], b[i]);
    return;
  }
  std::vector<int64_t> sa = broadcast_strides(a_shape, out_shape), sb = broadcast_strides(b_shape, out_shape);
  std::vector<int64_t> index(out_shape.size(), 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = apply(op, a[ia], b[ib]);
    // Odometer increment of the output index, keeping the input offsets in step.
    for (size_t d = out_shape.size(); d-- > 0;) {
      ++index[d];
      ia += sa[d];
      ib += sb[d];
      if (index[d] < out_shape[d]) break;
      ia -= sa[d] * index[d];
      ib -= sb[d] * index[d];
      index[d] = 0;
    }
  }
}

inline void unary(UnaryOp op, const float* x, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = apply(op, x[i]);
}

// A float tensor input, checked.
inline const float* float_data(const ephost::sdk::Tensor& t, const std::string& what) {
  if (!t.present()) ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, what + " is missing");
  if (t.elem_type() != EPHOST_ELEMENT_FLOAT)
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, what + " is not float32 (element type " +
                                                   std::to_string(t.elem_type()) + ")");
  return t.data<float>();
}

// True when `value` is known to hold float32: typed so, or untyped but produced by one of the
// element-wise float ops below from float inputs (for graphs without full type inference).
inline bool is_float_value(const ephost::sdk::Value& value, int depth = 0) {
  if (!value.valid()) return false;
  int32_t type = value.elem_type();
  if (type != EPHOST_ELEMENT_UNDEFINED) return type == EPHOST_ELEMENT_FLOAT;
  ephost::sdk::Node producer = value.producer();
  if (!producer.valid() || depth > 64 || !producer.domain().empty()) return false;
  std::string op = producer.op_type();
  if (op != "Add" && op != "Mul" && op != "Relu") return false;
  for (size_t i = 0; i < producer.num_inputs(); ++i)
    if (!is_float_value(producer.input(i), depth + 1)) return false;
  return true;
}

// A node of the default domain whose inputs and outputs are all float32 and whose arity is `inputs`.
inline bool is_float_node(const ephost::sdk::Node& node, size_t inputs) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  if (node.num_inputs() != inputs || node.num_outputs() != 1 || !node.has_output(0)) return false;
  for (size_t i = 0; i < inputs; ++i)
    if (!node.has_input(i) || !is_float_value(node.input(i))) return false;
  int32_t out_type = node.output(0).elem_type();
  return out_type == EPHOST_ELEMENT_FLOAT || out_type == EPHOST_ELEMENT_UNDEFINED;
}

// The provider option `claim`: "all" (default) or "none".
inline bool claims_anything(const ephost::sdk::Options& options) {
  std::string claim = ephost::sdk::option(options, "claim", "all");
  if (claim != "all" && claim != "none")
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "option claim must be 'all' or 'none', got '" + claim + "'");
  return claim == "all";
}

}  // namespace ephost_test
