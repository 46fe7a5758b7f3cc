// MaxPool / AveragePool / global pooling over NC[D]HW float tensors (1 to 3 spatial dims).
#pragma once

#include <cstdint>
#include <string>

#include "shape.h"

namespace ephost::cpu::math {

struct PoolParams {
  std::string auto_pad = "NOTSET";
  Shape kernel_shape, strides, pads, dilations;  // empty strides/pads/dilations: ONNX defaults
  bool ceil_mode = false;
};

struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  Shape in_spatial, kernel, strides, dilations, pad_begin, pad_end, out_spatial;
  Shape output_shape() const;
};

PoolGeometry pool_geometry(const PoolParams& params, const Shape& x);

// indices (may be null): flat index into x of each maximum, row-major (storage_order 0) or with the
// spatial dims column-major (storage_order 1), as ONNX MaxPool's second output.
// Instantiated for float, int8_t and uint8_t.
template <typename T>
void max_pool(const T* x, const PoolGeometry& g, T* y, int64_t* indices, bool column_major, int threads);
// max_pool of 2-D pools on channels-last x ([N, H, W, C]) into channels-last y ([N, OH, OW, C]): each
// output pixel is the byte-wise maximum of its window's pixel rows, in vector registers of the active
// ISA tier (pool_nhwc.cpp). Padding takes no part; every window must hold at least one input pixel.
// For int8_t and uint8_t.
template <typename T>
void max_pool_nhwc(const T* x, const PoolGeometry& g, T* y, int threads);
void average_pool(const float* x, const PoolGeometry& g, float* y, bool count_include_pad, int threads);

// x viewed as [planes, size]; y[p] = mean or max of plane p.
void global_average_pool(const float* x, int64_t planes, int64_t size, float* y, int threads);
void global_max_pool(const float* x, int64_t planes, int64_t size, float* y, int threads);

}  // namespace ephost::cpu::math
