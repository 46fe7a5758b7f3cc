// Element-wise ops: Add/Sub/Mul/Div with numpy broadcasting, the activations, and the per-channel
// affine map that BatchNormalization becomes.
#pragma once

#include "tensor.h"

namespace example_ep {

// numpy's rule: align trailing dimensions; each pair must be equal or contain a 1.
Shape broadcast_output_shape(const Op& op, const Shape& a, const Shape& b);

// y = a (op) b for kAdd, kSub, kMul, kDiv; y has broadcast_output_shape's shape.
void binary(const Op& op, const ConstTensor& a, const ConstTensor& b, float* y, const Shape& y_shape);

// y = f(x) for kRelu, kSigmoid, kClip, kHardSigmoid.
void unary(const Op& op, const ConstTensor& x, float* y);

// y = x * scale[c] + shift[c], c the index along dim 1.
void channel_affine(const Op& op, const ConstTensor& x, const ConstTensor& scale, const ConstTensor& shift, float* y);

}  // namespace example_ep
