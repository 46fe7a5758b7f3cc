// The element loops of QuantizeLinear and DequantizeLinear, shared by the per-tensor, per-axis and
// blocked forms of the ops (kernels/quantize.cpp and the opset-21 block kernel) and by the QDQ fusions.
// Each is compiled for the baseline ISA, AVX2 and AVX-512 and picked per call by math/isa.h's active
// tier (EPHOST_CPU_ISA caps it).
//
// Every tier computes exactly the ONNX expressions, bit for bit the same on every tier:
//   quantize:   y = saturate(round_half_to_even(x / scale) + zero_point)   (a true division, no reciprocal;
//               NaN saturates to the type's lowest value, as the scalar std::min/std::max clamp does)
//   dequantize: y = float(x - zero_point) * scale                          (the difference exact in 64 bits)
//
// Two shapes of parameters cover every form of the ops:
//   - one scale and zero point for a run of n elements: per-tensor, one channel row of a per-axis
//     tensor whose inner size is > 1, or one block of a blocked tensor along its last axis;
//   - one scale and zero point per element (scale[i], zero_point[i]): a per-axis tensor quantized along
//     its last axis, or the rows of a blocked tensor along an inner axis.
// zero_point may be null (zero). All pointers must be valid for n elements; x and y must not overlap.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

// One scale and zero point for all n elements.
void quantize_linear(const float* x, float scale, uint8_t zero_point, uint8_t* y, int64_t n);
void quantize_linear(const float* x, float scale, int8_t zero_point, int8_t* y, int64_t n);
void quantize_linear(const float* x, float scale, uint16_t zero_point, uint16_t* y, int64_t n);
void quantize_linear(const float* x, float scale, int16_t zero_point, int16_t* y, int64_t n);

// scale[i] and zero_point[i] (zero_point may be null) for element i.
void quantize_linear_each(const float* x, const float* scale, const uint8_t* zero_point, uint8_t* y, int64_t n);
void quantize_linear_each(const float* x, const float* scale, const int8_t* zero_point, int8_t* y, int64_t n);
void quantize_linear_each(const float* x, const float* scale, const uint16_t* zero_point, uint16_t* y, int64_t n);
void quantize_linear_each(const float* x, const float* scale, const int16_t* zero_point, int16_t* y, int64_t n);

void dequantize_linear(const uint8_t* x, float scale, uint8_t zero_point, float* y, int64_t n);
void dequantize_linear(const int8_t* x, float scale, int8_t zero_point, float* y, int64_t n);
void dequantize_linear(const uint16_t* x, float scale, uint16_t zero_point, float* y, int64_t n);
void dequantize_linear(const int16_t* x, float scale, int16_t zero_point, float* y, int64_t n);
void dequantize_linear(const int32_t* x, float scale, int32_t zero_point, float* y, int64_t n);

void dequantize_linear_each(const uint8_t* x, const float* scale, const uint8_t* zero_point, float* y, int64_t n);
void dequantize_linear_each(const int8_t* x, const float* scale, const int8_t* zero_point, float* y, int64_t n);
void dequantize_linear_each(const uint16_t* x, const float* scale, const uint16_t* zero_point, float* y, int64_t n);
void dequantize_linear_each(const int16_t* x, const float* scale, const int16_t* zero_point, float* y, int64_t n);
void dequantize_linear_each(const int32_t* x, const float* scale, const int32_t* zero_point, float* y, int64_t n);

// The residual Add of int8 graphs in one pass over the elements:
//   y = QuantizeLinear([Relu](DequantizeLinear(a, sa, za) + B), sy, zy)
// where B is DequantizeLinear(b, sb, zb) for bytes b, or b itself for floats (then sb and zb are not
// read). Bit for bit the ops evaluated one after another with the loops above, then a float add and
// Relu as x > 0 ? x : 0: the sum is never contracted with a product into an FMA. A and Y are uint8_t
// or int8_t, B uint8_t, int8_t or float. a, b and y must be valid for n elements; y must not overlap
// a or b.
template <typename A, typename B, typename Y>
void add_dequantized_then_quantize(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy,
                                   Y zy, Y* y, int64_t n);

// add_dequantized_then_quantize of two byte operands with the division by sy replaced by a product
// with r = 1 / sy and one correction step: q = x * r, e = fma(-q, sy, x) (exact), x / sy ~ fma(e, r, q)
// (Markstein's step, which rounds as the division does when r is 1 / sy rounded to nearest), and 64
// elements packed into one store: about 25% faster than the division on AVX-512. The AVX2 and scalar
// tiers divide (an AVX2 form of it measured slower than the division).
// Call it only for parameters add_quantize_by_reciprocal_exact accepted: then every byte it writes is
// the one add_dequantized_then_quantize writes. A, B and Y are uint8_t or int8_t.
template <typename A, typename B, typename Y>
void add_dequantized_then_quantize_by_reciprocal(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu,
                                                 float sy, Y zy, Y* y, int64_t n);

// Whether add_dequantized_then_quantize_by_reciprocal gives add_dequantized_then_quantize's bytes for
// these parameters: both evaluated on all 65,536 pairs of bytes (a, b), the reciprocal form on
// AVX-512, the division as the scalar loop. False where the processor has no AVX-512 (the form is
// then never taken). About 0.1 ms: call it once per fused Add, when it is compiled.
template <typename A, typename B, typename Y>
bool add_quantize_by_reciprocal_exact(float sa, A za, float sb, B zb, bool relu, float sy, Y zy);

}  // namespace ephost::cpu::math
