#include "dense.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gemm.h"

namespace example_ep {
namespace {

// ONNX's negative axes count from the end; `rank_plus` is 1 where axis == rank is allowed (Flatten).
int64_t normalized_axis(const Op& op, int64_t axis, size_t rank, int64_t rank_plus) {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r + rank_plus) bad_input(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return a;
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

}  // namespace

Shape matmul_output_shape(const Op& op, const Shape& a, const Shape& b) {
  if (a.empty() || a.back() != b[0])
    bad_input(op, "cannot multiply " + shape_text(a) + " by " + shape_text(b));
  Shape y = a;
  if (y.size() == 1) y.clear();  // a vector times a matrix is a vector
  else y.pop_back();
  y.push_back(b[1]);
  return y;
}

void matmul(const ConstTensor& a, const ConstTensor& b, float* y) {
  const int64_t K = b.shape[0], N = b.shape[1];
  const int64_t M = K == 0 ? 0 : numel(a.shape) / K;
  gemm(M, N, K, a.data, K, b.data, N, y, N, false);
}

Shape softmax_output_shape(const Op& op, const Shape& x) {
  if (x.empty()) bad_input(op, "input is a scalar");
  normalized_axis(op, op.ints[0], x.size(), 0);
  return x;
}

void softmax(const Op& op, const ConstTensor& x, float* y) {
  const size_t axis = static_cast<size_t>(normalized_axis(op, op.ints[0], x.shape.size(), 0));
  // Opset < 13 (legacy) normalizes over all dims from `axis` on; later opsets over `axis` alone.
  const bool legacy = op.ints[1] != 0;
  const int64_t outer = product(x.shape, 0, axis);
  const int64_t length = legacy ? product(x.shape, axis, x.shape.size()) : x.shape[axis];
  const int64_t inner = legacy ? 1 : product(x.shape, axis + 1, x.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* xp = x.data + o * length * inner + i;
      float* yp = y + o * length * inner + i;
      float top = -INFINITY;
      for (int64_t k = 0; k < length; ++k) top = std::max(top, xp[k * inner]);
      float sum = 0.0f;
      for (int64_t k = 0; k < length; ++k) sum += (yp[k * inner] = std::exp(xp[k * inner] - top));
      const float scale = 1.0f / sum;
      for (int64_t k = 0; k < length; ++k) yp[k * inner] *= scale;
    }
}

Shape reshape_output_shape(const Op& op, const Shape& x) {
  Shape y(op.ints.begin(), op.ints.end());
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] == 0) {
      if (i >= x.size()) bad_input(op, "target dim " + std::to_string(i) + " copies a dim the input " + shape_text(x) + " lacks");
      y[i] = x[i];
    }
    if (y[i] == -1) {
      inferred = static_cast<int>(i);
    } else {
      if (y[i] != 0 && known > std::numeric_limits<int64_t>::max() / y[i])
        bad_input(op, "target shape " + shape_text(Shape(op.ints.begin(), op.ints.end())) + " is too large");
      known *= y[i];
    }
  }
  const int64_t total = numel(x);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      bad_input(op, "cannot reshape " + shape_text(x) + " to " + shape_text(Shape(op.ints.begin(), op.ints.end())));
    y[static_cast<size_t>(inferred)] = total / known;
  } else if (known != total) {
    bad_input(op, "cannot reshape " + shape_text(x) + " to " + shape_text(y));
  }
  return y;
}

Shape flatten_output_shape(const Op& op, const Shape& x) {
  const size_t axis = static_cast<size_t>(normalized_axis(op, op.ints[0], x.size(), 1));
  return {product(x, 0, axis), product(x, axis, x.size())};
}

}  // namespace example_ep
