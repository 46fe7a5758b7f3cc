// Convolution and transposed convolution over NC[D]HW float tensors, computed by oneDNN.
//
// ConvRunner caches one oneDNN primitive per (input shape, weight shape, thread count): oneDNN picks
// its kernel and thread partitioning when a primitive is created, so a primitive built for one
// thread count is not reused for another. Constant weights are reordered once per weight layout the
// primitives ask for. Every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shape.h"

namespace ephost::cpu::math {

// Conv / ConvTranspose attributes as the node gives them; empty vectors mean "the ONNX default".
struct ConvParams {
  std::string auto_pad = "NOTSET";  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  int64_t group = 1;
  Shape kernel_shape, strides, dilations, pads;
  Shape output_padding, output_shape;  // ConvTranspose only
};

// Fully resolved sizes of one convolution.
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Shape in_spatial, kernel, strides, dilations, pad_begin, pad_end, out_spatial;
  Shape output_padding;  // ConvTranspose only
  Shape output_shape() const;
};

// Resolve defaults and auto_pad against the actual shapes; throw std::invalid_argument on mismatch.
// Conv: x [N, C, d...], w [M, C/group, k...]. ConvTranspose: x [N, C, d...], w [C, M/group, k...].
ConvGeometry conv_geometry(const ConvParams& params, const Shape& x, const Shape& w);
ConvGeometry conv_transpose_geometry(const ConvParams& params, const Shape& x, const Shape& w);

// How src/dst are laid out around the primitive: kPlain runs on NCHW directly; kBlocked lets oneDNN
// choose (usually nChw16c/8c) and reorders in and out; kAuto uses kBlocked where oneDNN has no
// direct (JIT) kernel for the plain layout, except for pointwise convolutions and deconvolutions,
// where its GEMM-based plain kernel measured faster.
enum class ConvLayout { kPlain, kBlocked, kAuto };

class ConvRunner {
 public:
  // `constant_weights` (may be null) must stay valid for the runner's lifetime; when given, `run`
  // ignores its `w` argument and uses reordered copies of these weights.
  ConvRunner(bool transposed, ConvLayout layout, const float* constant_weights = nullptr);
  ~ConvRunner();
  ConvRunner(const ConvRunner&) = delete;
  ConvRunner& operator=(const ConvRunner&) = delete;

  // y must hold numel(g.output_shape()) floats; bias may be null.
  void run(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y, int threads);

  // Name of the oneDNN implementation chosen for this geometry (benchmarks, logs).
  std::string implementation(const ConvGeometry& g, bool has_bias, int threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ephost::cpu::math
