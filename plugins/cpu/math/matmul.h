// MatMul (numpy semantics, batched with broadcasting) and Gemm, computed by oneDNN's matmul.
// Runners cache one primitive per (shapes, thread count) and, for constant B, one copy of B in the
// layout oneDNN prefers. Every method is thread-safe.
#pragma once

#include <memory>

#include "shape.h"

namespace ephost::cpu::math {

// numpy.matmul's result shape; throws std::invalid_argument on mismatch.
Shape matmul_output_shape(const Shape& a, const Shape& b);

class MatMulRunner {
 public:
  // `constant_b` (may be null) must outlive the runner; when given, run() ignores its `b` pointer.
  explicit MatMulRunner(const float* constant_b = nullptr);
  ~MatMulRunner();
  MatMulRunner(const MatMulRunner&) = delete;
  MatMulRunner& operator=(const MatMulRunner&) = delete;
  // y holds numel(matmul_output_shape(a_shape, b_shape)) floats.
  void run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* y, int threads);
  // Builds what run() needs for these shapes now (session creation, when shapes are static).
  void prepare(const Shape& a_shape, const Shape& b_shape, int threads);
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

struct GemmParams {
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
};

// Gemm's [M, N] result shape; throws on mismatch (also when C does not broadcast to [M, N]).
Shape gemm_output_shape(const GemmParams& p, const Shape& a, const Shape& b);

class GemmRunner {
 public:
  GemmRunner(const GemmParams& params, const float* constant_b = nullptr);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;
  // y = alpha * op(A) op(B) + beta * C, with C (may be null) broadcast unidirectionally to [M, N].
  void run(const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, const float* c,
           const Shape& c_shape, float* y, int threads);
  // Builds what run() needs for these shapes now (session creation, when shapes are static).
  void prepare(const Shape& a_shape, const Shape& b_shape, bool with_c, int threads);
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ephost::cpu::math
