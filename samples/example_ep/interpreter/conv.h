// 2-D convolution (NCHW), grouped or not: im2col + gemm in general, a direct loop for depthwise.
#pragma once

#include "tensor.h"

namespace example_ep {

Shape conv_output_shape(const Op& op, const Shape& x, const Shape& w);

// y = conv(x, w) + bias (bias may be null); y has conv_output_shape's shape.
void conv(const Op& op, const ConstTensor& x, const ConstTensor& w, const float* bias, float* y, const Shape& y_shape);

}  // namespace example_ep
