/*
 * ephost_half.h — float16 (IEEE 754 binary16) and bfloat16 to and from float.
 *
 * EPHOST_ELEMENT_FLOAT16 and EPHOST_ELEMENT_BFLOAT16 tensors hold 16-bit patterns (uint16_t); these
 * turn them into floats and back. Header-only and dependency-free (C99 or C++), like
 * EphostElementTypeName: no symbol, so applications, plugins and the host convert the same way
 * whatever library they run with.
 *
 * Rounding: float to float16 and float to bfloat16 round to nearest, ties to even.
 * EphostFloatToBfloat16Truncate drops the low 16 bits instead, as ONNX's reference Cast does.
 * NaN stays a quiet NaN, infinities stay infinite, a float beyond float16's range becomes infinity,
 * and one below half of its smallest subnormal becomes a signed zero. Widening to float is exact.
 *
 * Added with application API 2 and plugin ABI 2.
 */
#ifndef EPHOST_HALF_H_
#define EPHOST_HALF_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The float a float16 bit pattern stands for (exact, subnormals included). */
static inline float EphostFloat16ToFloat(uint16_t bits) {
  const uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  float value;
  if (exponent == 0) {
    if (mantissa == 0) {
      out = sign;
    } else { /* subnormal: normalise, since every float16 subnormal is a normal float */
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      out = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) { /* infinity or NaN (the payload is kept) */
    out = sign | 0x7f800000u | (mantissa << 13);
  } else {
    out = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  memcpy(&value, &out, sizeof(value));
  return value;
}

/* The float16 nearest to `value` (ties to even). */
static inline uint16_t EphostFloatToFloat16(float value) {
  uint32_t x;
  uint32_t magnitude;
  uint16_t sign;
  uint32_t r;
  uint32_t rest;
  memcpy(&x, &value, sizeof(x));
  sign = (uint16_t)((x >> 16) & 0x8000u);
  magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return (uint16_t)(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u)); /* NaN, inf */
  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: infinity */
  if (magnitude < 0x38800000u) { /* below the smallest normal float16: subnormal or zero */
    uint32_t exponent, mantissa, shift, half;
    if (magnitude < 0x33000000u) return sign; /* < 2^-25 rounds to zero */
    exponent = magnitude >> 23;
    mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    shift = 126 - exponent; /* 14..24 bits dropped */
    r = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    half = 1u << (shift - 1);
    if (rest > half || (rest == half && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
  }
  r = magnitude - 0x38000000u; /* rebias the exponent: 127 -> 15 */
  rest = r & 0x1fffu;
  r >>= 13;
  if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) ++r; /* a carry into the exponent is right */
  return (uint16_t)(sign | r);
}

/* The float a bfloat16 bit pattern stands for (exact: bfloat16 is the top half of a float). */
static inline float EphostBfloat16ToFloat(uint16_t bits) {
  const uint32_t out = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &out, sizeof(value));
  return value;
}

/* The bfloat16 nearest to `value` (ties to even). */
static inline uint16_t EphostFloatToBfloat16(float value) {
  uint32_t x;
  memcpy(&x, &value, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* stays a quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* `value` with its low 16 bits dropped: what ONNX's reference Cast to bfloat16 computes (onnx.reference
 * calls float32_to_bfloat16 with truncate=True, and the backend test data expects it). */
static inline uint16_t EphostFloatToBfloat16Truncate(float value) {
  uint32_t x;
  memcpy(&x, &value, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* stays a quiet NaN */
  return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_HALF_H_ */
