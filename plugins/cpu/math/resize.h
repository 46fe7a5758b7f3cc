// Resize (ONNX opset 10/11/13/18/19 semantics): nearest, (multi)linear and cubic sampling with the ONNX
// coordinate transformation modes, and opset 18's antialiased linear and cubic downscaling. Sampling is separable, so each axis gets its own table of input
// taps; tf_crop_and_resize marks the positions that fall outside the input, whose outputs then take
// the extrapolation value (float data only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape.h"

namespace ephost::cpu::math {

enum class ResizeMode { kNearest, kLinear, kCubic };
// kHalfPixelSymmetric (opset 19) is half_pixel shifted so that the resized image stays centred when
// floor(in * scale) cuts it short.
enum class CoordMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNN,
  kTfCropAndResize,
  kHalfPixelSymmetric
};
// kSimple is opset 10's rule: ceil when downsampling, truncate otherwise.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  // Opset 18's antialias: on an axis that shrinks (scale < 1), linear and cubic stretch their filter by
  // 1 / scale so that it covers every input position of an output one, with weights summing to 1.
  // Nearest ignores it, as does an axis that keeps or grows its size.
  bool antialias = false;
  // tf_crop_and_resize: the crop as [start_0, .., start_{r-1}, end_0, .., end_{r-1}] in normalised
  // input coordinates, and the value of outputs that sample outside the input.
  std::vector<float> roi;
  float extrapolation_value = 0.f;
};

// The sampling of one axis: for output position o, taps (index[o*taps+t], weight[o*taps+t]).
struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  bool identity = false;  // out == in and every position samples itself
  std::vector<uint8_t> outside;  // tf_crop_and_resize: 1 where position o lies outside the input; else empty
};

// Input coordinate of output position `o` (before clamping); roi_* only matter for tf_crop_and_resize.
float resize_source_coordinate(CoordMode mode, int64_t o, int64_t in, int64_t out, float scale,
                               float roi_start = 0.f, float roi_end = 1.f);
AxisTaps resize_axis_taps(const ResizeParams& p, int64_t in, int64_t out, float scale, float roi_start = 0.f,
                          float roi_end = 1.f);

// The output size for a scale: floor(in * scale).
int64_t resize_output_size(int64_t in, float scale);

// Float resize; `scales` has one entry per axis (out/in when the node gave sizes).
void resize(const float* x, const Shape& in, float* y, const Shape& out, const std::vector<float>& scales,
            const ResizeParams& p, int threads);
// Nearest resize on any element type (elements of elem_size bytes, copied); throws when a
// tf_crop_and_resize position falls outside the input (extrapolation needs resize()).
void resize_nearest(const void* x, const Shape& in, void* y, const Shape& out, const std::vector<float>& scales,
                    const ResizeParams& p, size_t elem_size, int threads);

}  // namespace ephost::cpu::math
