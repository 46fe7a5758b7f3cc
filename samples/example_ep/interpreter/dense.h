// MatMul against a weight matrix, Softmax, and the shape-only ops (Reshape, Flatten).
#pragma once

#include "tensor.h"

namespace example_ep {

Shape matmul_output_shape(const Op& op, const Shape& a, const Shape& b);
void matmul(const ConstTensor& a, const ConstTensor& b, float* y);

Shape softmax_output_shape(const Op& op, const Shape& x);
void softmax(const Op& op, const ConstTensor& x, float* y);

Shape reshape_output_shape(const Op& op, const Shape& x);
Shape flatten_output_shape(const Op& op, const Shape& x);

}  // namespace example_ep
