// Pooling over NCHW images: MaxPool (2-D window) and GlobalAveragePool (any spatial rank).
#pragma once

#include "tensor.h"

namespace example_ep {

Shape max_pool_output_shape(const Op& op, const Shape& x);
void max_pool(const Op& op, const ConstTensor& x, float* y, const Shape& y_shape);

Shape global_average_pool_output_shape(const Op& op, const Shape& x);
void global_average_pool(const ConstTensor& x, float* y);

}  // namespace example_ep
