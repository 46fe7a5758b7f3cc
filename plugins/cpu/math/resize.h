// Resize (ONNX opset 10/11/13 semantics): nearest, (multi)linear and cubic sampling with the ONNX
// coordinate transformation modes. Sampling is separable, so each axis gets its own table of input
// taps; tf_crop_and_resize (which needs roi) is not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape.h"

namespace ephost::cpu::math {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordMode { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNN };
// kSimple is opset 10's rule: ceil when downsampling, truncate otherwise.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
};

// The sampling of one axis: for output position o, taps (index[o*taps+t], weight[o*taps+t]).
struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  bool identity = false;  // out == in and every position samples itself
};

// Input coordinate of output position `o` (before clamping).
float resize_source_coordinate(CoordMode mode, int64_t o, int64_t in, int64_t out, float scale);
AxisTaps resize_axis_taps(const ResizeParams& p, int64_t in, int64_t out, float scale);

// The output size for a scale: floor(in * scale).
int64_t resize_output_size(int64_t in, float scale);

// Float resize; `scales` has one entry per axis (out/in when the node gave sizes).
void resize(const float* x, const Shape& in, float* y, const Shape& out, const std::vector<float>& scales,
            const ResizeParams& p, int threads);
// Nearest resize on any element type (elements of elem_size bytes, copied).
void resize_nearest(const void* x, const Shape& in, void* y, const Shape& out, const std::vector<float>& scales,
                    const ResizeParams& p, size_t elem_size, int threads);

}  // namespace ephost::cpu::math
