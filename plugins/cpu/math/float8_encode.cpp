// float8_encode_f32 (float8_encode.h): float to float8 codes on the float's bits, in vector loops. Bit
// for bit narrow_encode_one through double (narrow_types.cpp), because a float converts to double exactly
// and both round half to even at the same quantum:
// - from the smallest normal float8 up, the float's 23-bit mantissa is rounded half to even to the
//   type's M bits on the integer bits (a carry moves into the exponent, as the value moves into the next
//   binade), and the exponent is rebiased; a code past the largest finite one is an overflow;
// - below it (subnormals and zeros), |x| * 2^(bias - 1 + M) is exact in float and its nearest integer,
//   half to even, is the code's mantissa (2^M being the smallest normal's code);
// - NaN, infinities and overflows take the codes of Cast-19's table (saturate or not); fnuz types have
//   no negative zero.
#include "float8_encode.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "ephost/ephost_types.h"
#include "isa.h"

namespace ephost::cpu::math {

namespace {

// What encoding one float8 type needs, as 32-bit integers (one lane each).
struct Float8Codes {
  int32_t shift;          // 23 - M: the float mantissa bits dropped
  int32_t half;           // 2^(shift - 1) - 1: added (with the kept part's lowest bit) to round half to even
  int32_t min_normal;     // the float bits of the smallest normal float8, 2^(1 - bias)
  int32_t rebias;         // (127 - bias) << M: float exponent to float8 exponent, in code units
  float subnormal_scale;  // 2^(bias - 1 + M): |x| below min_normal to mantissa steps
  int32_t max_code;       // the largest finite code
  int32_t nan_positive, nan_negative;            // NaN's codes for a positive and a negative sign
  int32_t overflow_positive, overflow_negative;  // an infinity's or an overflow's codes
  bool unsigned_zero;     // fnuz: zero has no sign (0x80 is NaN)
};

Float8Codes codes_of(int32_t t, bool saturate) {
  int m = 3, bias = 7, max_code = 0x7E;
  bool fnuz = false, ieee = false;
  switch (t) {
    case EPHOST_ELEMENT_FLOAT8E4M3FN: break;
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ: bias = 8, max_code = 0x7F, fnuz = true; break;
    case EPHOST_ELEMENT_FLOAT8E5M2: m = 2, bias = 15, max_code = 0x7B, ieee = true; break;
    default: m = 2, bias = 16, max_code = 0x7F, fnuz = true; break;  // e5m2fnuz
  }
  Float8Codes c{};
  c.shift = 23 - m;
  c.half = (1 << (c.shift - 1)) - 1;
  c.min_normal = (1 - bias + 127) << 23;
  c.rebias = (127 - bias) << m;
  c.subnormal_scale = std::ldexp(1.f, bias - 1 + m);
  c.max_code = max_code;
  c.unsigned_zero = fnuz;
  c.nan_positive = fnuz ? 0x80 : 0x7F;
  c.nan_negative = fnuz ? 0x80 : 0xFF;
  if (saturate) {
    c.overflow_positive = max_code, c.overflow_negative = max_code | 0x80;
  } else if (ieee) {
    c.overflow_positive = 0x7C, c.overflow_negative = 0xFC;  // infinities
  } else {
    c.overflow_positive = c.nan_positive, c.overflow_negative = c.nan_negative;
  }
  return c;
}

using EncodeFn = void (*)(const Float8Codes& c, const float* x, int64_t n, uint8_t* codes);

void encode_base(const Float8Codes& c, const float* x, int64_t n, uint8_t* codes) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], sizeof u);
    const bool negative = (u >> 31) != 0;
    const int32_t a = static_cast<int32_t>(u & 0x7FFFFFFFu), sign = negative ? 0x80 : 0;
    int32_t code;
    if (a > 0x7F800000) {
      code = negative ? c.nan_negative : c.nan_positive;
    } else if (a >= c.min_normal) {
      const int32_t magnitude = ((a + c.half + ((a >> c.shift) & 1)) >> c.shift) - c.rebias;
      if (a == 0x7F800000 || magnitude > c.max_code)
        code = negative ? c.overflow_negative : c.overflow_positive;
      else
        code = magnitude | sign;
    } else {
      const int32_t steps = static_cast<int32_t>(std::nearbyint(std::fabs(x[i]) * c.subnormal_scale));
      code = steps == 0 && c.unsigned_zero ? 0 : steps | sign;
    }
    codes[i] = static_cast<uint8_t>(code);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)

// Eight codes as int32 lanes.
__attribute__((target("avx2,fma"))) inline __m256i eight_codes(const Float8Codes& c, const float* p) {
  const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i negative = _mm256_srai_epi32(u, 31);  // all ones for a negative sign
  const __m256i sign = _mm256_and_si256(negative, _mm256_set1_epi32(0x80));
  const __m256i rounding = _mm256_add_epi32(
      _mm256_set1_epi32(c.half), _mm256_and_si256(_mm256_srli_epi32(a, c.shift), _mm256_set1_epi32(1)));
  const __m256i normal_magnitude =
      _mm256_sub_epi32(_mm256_srli_epi32(_mm256_add_epi32(a, rounding), c.shift), _mm256_set1_epi32(c.rebias));
  const __m256 scaled = _mm256_mul_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(c.subnormal_scale));
  const __m256i steps = _mm256_cvttps_epi32(_mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  const __m256i normal = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(c.min_normal - 1));
  const __m256i magnitude = _mm256_blendv_epi8(steps, normal_magnitude, normal);
  __m256i code = _mm256_or_si256(magnitude, sign);
  if (c.unsigned_zero) code = _mm256_andnot_si256(_mm256_cmpeq_epi32(magnitude, _mm256_setzero_si256()), code);
  const __m256i overflow = _mm256_or_si256(_mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(c.max_code)),
                                           _mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7F800000)));
  const __m256i overflow_code = _mm256_blendv_epi8(_mm256_set1_epi32(c.overflow_positive),
                                                   _mm256_set1_epi32(c.overflow_negative), negative);
  code = _mm256_blendv_epi8(code, overflow_code, _mm256_and_si256(overflow, normal));
  const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000));
  const __m256i nan_code =
      _mm256_blendv_epi8(_mm256_set1_epi32(c.nan_positive), _mm256_set1_epi32(c.nan_negative), negative);
  return _mm256_blendv_epi8(code, nan_code, nan);
}

__attribute__((target("avx2,fma"))) void encode_avx2(const Float8Codes& c, const float* x, int64_t n, uint8_t* codes) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(eight_codes(c, x + i), eight_codes(c, x + i + 8)), 0xD8);
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), bytes);
  }
  encode_base(c, x + i, n - i, codes + i);
}

// GCC 12's AVX-512 headers pass _mm512_undefined_*() as the unused source of the unmasked intrinsics,
// which -Wmaybe-uninitialized reports once they are inlined; nothing here reads an undefined lane.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

__attribute__((target("avx512f"))) void encode_avx512(const Float8Codes& c, const float* x, int64_t n, uint8_t* codes) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_loadu_si512(x + i);
    const __m512i a = _mm512_and_si512(u, abs_mask);
    const __mmask16 negative = _mm512_cmplt_epi32_mask(u, _mm512_setzero_si512());
    const __m512i sign = _mm512_maskz_mov_epi32(negative, _mm512_set1_epi32(0x80));
    const __m512i rounding = _mm512_add_epi32(
        _mm512_set1_epi32(c.half), _mm512_and_si512(_mm512_srli_epi32(a, c.shift), _mm512_set1_epi32(1)));
    const __m512i normal_magnitude =
        _mm512_sub_epi32(_mm512_srli_epi32(_mm512_add_epi32(a, rounding), c.shift), _mm512_set1_epi32(c.rebias));
    const __m512 scaled = _mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(c.subnormal_scale));
    const __m512i steps =
        _mm512_cvttps_epi32(_mm512_roundscale_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __mmask16 normal = _mm512_cmpge_epi32_mask(a, _mm512_set1_epi32(c.min_normal));
    const __m512i magnitude = _mm512_mask_mov_epi32(steps, normal, normal_magnitude);
    __m512i code = _mm512_or_si512(magnitude, sign);
    if (c.unsigned_zero) code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(magnitude, _mm512_setzero_si512()),
                                                      _mm512_setzero_si512());
    const __mmask16 overflow = normal & (_mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(c.max_code)) |
                                         _mm512_cmpeq_epi32_mask(a, inf));
    const __m512i overflow_code =
        _mm512_mask_mov_epi32(_mm512_set1_epi32(c.overflow_positive), negative, _mm512_set1_epi32(c.overflow_negative));
    code = _mm512_mask_mov_epi32(code, overflow, overflow_code);
    const __m512i nan_code =
        _mm512_mask_mov_epi32(_mm512_set1_epi32(c.nan_positive), negative, _mm512_set1_epi32(c.nan_negative));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(a, inf), nan_code);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(code));
  }
  encode_base(c, x + i, n - i, codes + i);
}

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // x86-64

EncodeFn pick() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (active_isa()) {
    case Isa::kAvx512: return encode_avx512;
    case Isa::kAvx2: return encode_avx2;
    case Isa::kScalar: break;
  }
#endif
  return encode_base;
}

}  // namespace

bool is_float8_type(int32_t t) {
  return t == EPHOST_ELEMENT_FLOAT8E4M3FN || t == EPHOST_ELEMENT_FLOAT8E4M3FNUZ || t == EPHOST_ELEMENT_FLOAT8E5M2 ||
         t == EPHOST_ELEMENT_FLOAT8E5M2FNUZ;
}

void float8_encode_f32(int32_t elem_type, const float* values, int64_t n, bool saturate, void* data, int64_t begin) {
  pick()(codes_of(elem_type, saturate), values, n, static_cast<uint8_t*>(data) + begin);
}

}  // namespace ephost::cpu::math
