// Contiguous float loops for the hot elementwise ops, compiled for the baseline ISA, for AVX2 and (the
// transcendental loops and row reductions) for AVX-512, and picked at run time by math/isa.h's active
// tier (EPHOST_CPU_ISA caps it). The plugin is built for the baseline x86-64 ISA (SSE2), where these
// loops run 4 lanes wide; AVX2 doubles that. The exact loops never use FMA, so their results are
// bit-identical to the scalar expression on every tier; the approximating ones stay within the bounds
// tests/unit/cpu_vec_test.cpp checks on every tier.
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

enum class BinOp { kAdd, kSub, kMul, kDiv };

// o[i] = a[i or 0] op b[i or 0] for i < n: a_vec / b_vec say whether a / b advance (one of them must).
void binary_f32(BinOp op, const float* a, bool a_vec, const float* b, bool b_vec, float* o, int64_t n);
// y[i] = min(max(x[i], lo), hi), in Clip's order (lo first).
void clip_f32(const float* x, float lo, float hi, float* y, int64_t n);
// HardSigmoid: clamp(alpha * x + beta, 0, 1).
void hard_sigmoid_f32(const float* x, float alpha, float beta, float* y, int64_t n);
// HardSwish: x * clamp(x / 6 + 0.5, 0, 1) (x * (1/6), as the scalar kernel).
void hard_swish_f32(const float* x, float* y, int64_t n);
void relu_f32(const float* x, float* y, int64_t n);
// math::fast_sigmoid over a range.
void sigmoid_f32(const float* x, float* y, int64_t n);
// math::fast_tanh over a range.
void tanh_f32(const float* x, float* y, int64_t n);
// y = x * a + b (two roundings, as Mul then Add).
void linear_f32(const float* x, float a, float b, float* y, int64_t n);
// SiLU: x * fast_sigmoid(x).
void swish_f32(const float* x, float* y, int64_t n);
// math::fast_erf and math::fast_gelu_erf over a range.
void erf_f32(const float* x, float* y, int64_t n);
void gelu_erf_f32(const float* x, float* y, int64_t n);
// One row of layer normalisation: y = (x - mean) / sqrt(var + eps) * gamma + beta over n elements
// (gamma, beta may be null), mean and variance in two passes.
void layer_norm_f32(const float* x, float* y, int64_t n, const float* gamma, const float* beta, float eps);
// One softmax row: y = softmax(x * scale + mask) over n elements (mask may be null; y may be x).
// Returns false (y untouched) for n == 0.
void softmax_row_f32(const float* x, float scale, const float* mask, float* y, int64_t n);
// Sum of x[0, n) as math::sum_of (float lanes per block of 4096, blocks added in double).
double sum_f32(const float* x, int64_t n);

}  // namespace ephost::cpu::math
