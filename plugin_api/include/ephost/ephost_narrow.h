/*
 * ephost_narrow.h — reading the element types of ONNX opsets 19 to 25 that no C type holds: the
 * float8 family (EPHOST_ELEMENT_FLOAT8E4M3FN, _FLOAT8E4M3FNUZ, _FLOAT8E5M2, _FLOAT8E5M2FNUZ,
 * _FLOAT8E8M0), EPHOST_ELEMENT_FLOAT4E2M1, and the packed integers EPHOST_ELEMENT_INT4, _UINT4,
 * _INT2 and _UINT2.
 *
 * Their tensors hold codes: one byte per float8 element; two 4-bit codes per byte (int4, uint4,
 * float4e2m1) or four 2-bit codes per byte (int2, uint2), the first element in the least significant
 * bits, as ONNX stores them (EphostTensorDataSize gives a tensor's bytes). These turn an element into
 * the double it stands for, exactly. Writing them (rounding and saturation) is Cast's job.
 *
 * Header-only and dependency-free (C99 or C++, no libm), like ephost_half.h.
 * Added with application API 4 and plugin ABI 4.
 */
#ifndef EPHOST_NARROW_H_
#define EPHOST_NARROW_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ephost/ephost_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per byte: 2 for the 4-bit types, 4 for the 2-bit types, 1 for every other type. */
static inline size_t EphostElementsPerByte(int32_t elem_type) {
  const size_t bits = EphostElementBits(elem_type);
  return bits != 0 && bits < 8 ? 8 / bits : 1;
}

/* The code of element `index` of tensor data `data` of a narrow type (its bits, right-aligned). */
static inline uint32_t EphostNarrowCode(int32_t elem_type, const void* data, size_t index) {
  const uint8_t* bytes = (const uint8_t*)data;
  const size_t per_byte = EphostElementsPerByte(elem_type);
  const size_t bits = 8 / per_byte;
  return (uint32_t)(bytes[index / per_byte] >> (bits * (index % per_byte))) & ((1u << bits) - 1u);
}

/* significand * 2^exponent, exactly, for |exponent| < 1000. */
static inline double EphostNarrowScaled(uint32_t significand, int exponent) {
  const uint64_t bits = (uint64_t)(exponent + 1023) << 52;
  double power;
  memcpy(&power, &bits, sizeof power);
  return (double)significand * power;
}

static inline double EphostNarrowFromBits(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
static inline double EphostNarrowNaN(void) { return EphostNarrowFromBits(0x7FF8000000000000ull); }

/* The value of `code` in `elem_type`, exactly: a signed zero, a number, an infinity (float8e5m2) or
 * NaN. NaN also for a type that is not one of the narrow types above. */
static inline double EphostNarrowCodeToDouble(int32_t elem_type, uint32_t code) {
  int exp_bits = 0, mant_bits = 0, bias = 0;
  uint32_t sign_bit = 0x80u;
  switch (elem_type) {
    case EPHOST_ELEMENT_INT4: return (double)(int)(code & 0x8u ? (int)(code & 0xFu) - 16 : (int)(code & 0xFu));
    case EPHOST_ELEMENT_UINT4: return (double)(code & 0xFu);
    case EPHOST_ELEMENT_INT2: return (double)(code & 0x2u ? (int)(code & 0x3u) - 4 : (int)(code & 0x3u));
    case EPHOST_ELEMENT_UINT2: return (double)(code & 0x3u);
    case EPHOST_ELEMENT_FLOAT8E8M0: /* 2^(code - 127); 0xFF is NaN */
      return (code & 0xFFu) == 0xFFu ? EphostNarrowNaN() : EphostNarrowScaled(1, (int)(code & 0xFFu) - 127);
    case EPHOST_ELEMENT_FLOAT8E4M3FN:
      exp_bits = 4, mant_bits = 3, bias = 7;
      if ((code & 0x7Fu) == 0x7Fu) return (code & 0x80u) ? -EphostNarrowNaN() : EphostNarrowNaN();
      break;
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
      exp_bits = 4, mant_bits = 3, bias = 8;
      if ((code & 0xFFu) == 0x80u) return EphostNarrowNaN();
      break;
    case EPHOST_ELEMENT_FLOAT8E5M2:
      exp_bits = 5, mant_bits = 2, bias = 15;
      if ((code & 0x7Cu) == 0x7Cu) { /* the top exponent: Inf (mantissa 0) or NaN */
        if (code & 0x3u) return (code & 0x80u) ? -EphostNarrowNaN() : EphostNarrowNaN();
        return EphostNarrowFromBits((code & 0x80u) ? 0xFFF0000000000000ull : 0x7FF0000000000000ull);
      }
      break;
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
      exp_bits = 5, mant_bits = 2, bias = 16;
      if ((code & 0xFFu) == 0x80u) return EphostNarrowNaN();
      break;
    case EPHOST_ELEMENT_FLOAT4E2M1: exp_bits = 2, mant_bits = 1, bias = 1, sign_bit = 0x8u; break;
    default: return EphostNarrowNaN();
  }
  {
    const uint32_t e = (code >> mant_bits) & ((1u << exp_bits) - 1u);
    const uint32_t m = code & ((1u << mant_bits) - 1u);
    const double magnitude = e == 0 ? EphostNarrowScaled(m, 1 - bias - mant_bits)
                                    : EphostNarrowScaled((1u << mant_bits) + m, (int)e - bias - mant_bits);
    return (code & sign_bit) ? -magnitude : magnitude;
  }
}

/* Element `index` of narrow tensor data `data`, as a double. */
static inline double EphostNarrowElementToDouble(int32_t elem_type, const void* data, size_t index) {
  return EphostNarrowCodeToDouble(elem_type, EphostNarrowCode(elem_type, data, index));
}

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_NARROW_H_ */
