#include "quantize.h"

#include <limits>
#include <type_traits>
#include <vector>

#include "isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EPHOST_QUANT_X86 1
#endif

namespace ephost::cpu::math {

namespace {

template <typename Q>
constexpr float kLowest = static_cast<float>(std::numeric_limits<Q>::lowest());
template <typename Q>
constexpr float kHighest = static_cast<float>(std::numeric_limits<Q>::max());

// round_half_to_even(r) + z, saturated to Q, in the baseline ISA (SSE2 has no roundps). |r| is first
// limited to 2^22, where adding and subtracting 1.5 * 2^23 rounds to an integer half to even in the
// default rounding mode; that limit changes no result, since every Q saturates far below it, and keeps
// NaN, which the final clamp sends to the lowest value like the ONNX reference's std::max(lo, NaN).
template <typename Q>
inline Q saturate_rounded(float r, float z) {
  constexpr float kLimit = 4194304.f;   // 2^22
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23
  r = r > kLimit ? kLimit : (r < -kLimit ? -kLimit : r);
  r = (r + kMagic) - kMagic;
  float v = r + z;
  v = v > kLowest<Q> ? v : kLowest<Q>;
  v = v < kHighest<Q> ? v : kHighest<Q>;
  return static_cast<Q>(static_cast<int32_t>(v));
}

template <typename Q>
inline float dequantize_one(Q x, Q z, float s) {
  // int32 - int32 needs 64 bits; the narrower types are exact in 32.
  using Wide = std::conditional_t<sizeof(Q) >= 4, int64_t, int32_t>;
  return static_cast<float>(static_cast<Wide>(x) - static_cast<Wide>(z)) * s;
}

// ----- baseline tier ---------------------------------------------------------------------------------

template <typename Q>
void quantize_base(const float* x, float s, Q z, Q* y, int64_t n) {
  const float zf = static_cast<float>(z);
  for (int64_t i = 0; i < n; ++i) y[i] = saturate_rounded<Q>(x[i] / s, zf);
}

template <typename Q>
void quantize_each_base(const float* x, const float* s, const Q* z, Q* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = saturate_rounded<Q>(x[i] / s[i], z ? static_cast<float>(z[i]) : 0.f);
}

template <typename Q>
void dequantize_base(const Q* x, float s, Q z, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_one<Q>(x[i], z, s);
}

template <typename Q>
void dequantize_each_base(const Q* x, const float* s, const Q* z, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = dequantize_one<Q>(x[i], z ? z[i] : Q{0}, s[i]);
}

// B of the fused residual Add: the float operand as it is, or a byte dequantized.
template <typename B>
inline float operand_one(B b, B zb, float sb) {
  if constexpr (std::is_same_v<B, float>)
    return b;
  else
    return dequantize_one<B>(b, zb, sb);
}

template <typename A, typename B, typename Y>
void add_quantize_base(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy, Y zy, Y* y,
                       int64_t n) {
  const float zf = static_cast<float>(zy);
  for (int64_t i = 0; i < n; ++i) {
    float v = dequantize_one<A>(a[i], za, sa) + operand_one<B>(b[i], zb, sb);
    if (relu) v = v > 0.f ? v : 0.f;
    y[i] = saturate_rounded<Y>(v / sy, zf);
  }
}

#if EPHOST_QUANT_X86

// ----- AVX2 tier: 8 lanes, the tail in the baseline expression (bit-identical) -----------------------

#define EPHOST_QUANT_AVX2 __attribute__((target("avx2")))
#define EPHOST_QUANT_AVX2_INLINE inline __attribute__((always_inline, target("avx2")))

// Eight elements of Q widened to int32.
template <typename Q>
EPHOST_QUANT_AVX2_INLINE __m256i load8_i32(const Q* p) {
  if constexpr (std::is_same_v<Q, uint8_t>)
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  else if constexpr (std::is_same_v<Q, int8_t>)
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  else if constexpr (std::is_same_v<Q, uint16_t>)
    return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  else if constexpr (std::is_same_v<Q, int16_t>)
    return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  else
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Eight int32 lanes, already within Q's range, stored as Q.
template <typename Q>
EPHOST_QUANT_AVX2_INLINE void store8(Q* p, __m256i v) {
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  if constexpr (sizeof(Q) == 1) {
    const __m128i w = _mm_packs_epi32(lo, hi);  // exact: every value fits int16
    const __m128i b = std::is_same_v<Q, uint8_t> ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
  } else {
    const __m128i w = std::is_same_v<Q, uint16_t> ? _mm_packus_epi32(lo, hi) : _mm_packs_epi32(lo, hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
  }
}

// round(x / s) + z, saturated (maxps returns its second operand for NaN: NaN becomes the lowest value).
template <typename Q>
EPHOST_QUANT_AVX2_INLINE __m256i quantize8(__m256 x, __m256 s, __m256 z) {
  __m256 v = _mm256_round_ps(_mm256_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_add_ps(v, z);
  v = _mm256_max_ps(v, _mm256_set1_ps(kLowest<Q>));
  v = _mm256_min_ps(v, _mm256_set1_ps(kHighest<Q>));
  return _mm256_cvtps_epi32(v);
}

template <typename Q>
EPHOST_QUANT_AVX2 void quantize_avx2(const float* x, float s, Q z, Q* y, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(static_cast<float>(z));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store8(y + i, quantize8<Q>(_mm256_loadu_ps(x + i), vs, vz));
  quantize_base(x + i, s, z, y + i, n - i);
}

template <typename Q>
EPHOST_QUANT_AVX2 void quantize_each_avx2(const float* x, const float* s, const Q* z, Q* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 vz = z ? _mm256_cvtepi32_ps(load8_i32(z + i)) : _mm256_setzero_ps();
    store8(y + i, quantize8<Q>(_mm256_loadu_ps(x + i), _mm256_loadu_ps(s + i), vz));
  }
  quantize_each_base(x + i, s + i, z ? z + i : nullptr, y + i, n - i);
}

template <typename Q>
EPHOST_QUANT_AVX2 void dequantize_avx2(const Q* x, float s, Q z, float* y, int64_t n) {
  int64_t i = 0;
  // An int32 difference can overflow 32 bits unless the zero point is 0 (ONNX requires 0 for int32).
  if (sizeof(Q) < 4 || z == 0) {
    const __m256 vs = _mm256_set1_ps(s);
    const __m256i vz = _mm256_set1_epi32(static_cast<int32_t>(z));
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(load8_i32(x + i), vz)), vs));
  }
  dequantize_base(x + i, s, z, y + i, n - i);
}

template <typename Q>
EPHOST_QUANT_AVX2 void dequantize_each_avx2(const Q* x, const float* s, const Q* z, float* y, int64_t n) {
  int64_t i = 0;
  if (sizeof(Q) < 4 || !z) {
    for (; i + 8 <= n; i += 8) {
      __m256i d = load8_i32(x + i);
      if (z) d = _mm256_sub_epi32(d, load8_i32(z + i));
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(d), _mm256_loadu_ps(s + i)));
    }
  }
  dequantize_each_base(x + i, s + i, z ? z + i : nullptr, y + i, n - i);
}

// Eight elements of B of the fused residual Add (avx2 has no FMA: the add that follows stays an add).
template <typename B>
EPHOST_QUANT_AVX2_INLINE __m256 operand8(const B* b, __m256i zb, __m256 sb) {
  if constexpr (std::is_same_v<B, float>)
    return _mm256_loadu_ps(b);
  else
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(load8_i32(b), zb)), sb);
}

template <typename A, typename B, typename Y>
EPHOST_QUANT_AVX2 void add_quantize_avx2(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy,
                                         Y zy, Y* y, int64_t n) {
  const __m256 vsa = _mm256_set1_ps(sa), vsb = _mm256_set1_ps(sb), vsy = _mm256_set1_ps(sy);
  const __m256 vzy = _mm256_set1_ps(static_cast<float>(zy)), zero = _mm256_setzero_ps();
  const __m256i vza = _mm256_set1_epi32(static_cast<int32_t>(za)), vzb = _mm256_set1_epi32(static_cast<int32_t>(zb));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 da = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(load8_i32(a + i), vza)), vsa);
    __m256 v = _mm256_add_ps(da, operand8<B>(b + i, vzb, vsb));
    if (relu) v = _mm256_max_ps(v, zero);  // NaN and -0 become +0, as x > 0 ? x : 0
    store8(y + i, quantize8<Y>(v, vsy, vzy));
  }
  add_quantize_base(a + i, sa, za, b + i, sb, zb, relu, sy, zy, y + i, n - i);
}

// ----- AVX-512 tier: 16 lanes, masked tails ----------------------------------------------------------

// GCC 12's AVX-512 headers pass _mm512_undefined_*() as the unused source of the unmasked intrinsics,
// which -Wmaybe-uninitialized reports once they are inlined; nothing here reads an undefined lane.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define EPHOST_QUANT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2")))
#define EPHOST_QUANT_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx2")))

inline __mmask16 tail_mask(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1u);
}

template <typename Q>
EPHOST_QUANT_AVX512_INLINE __m512i load16_i32(const Q* p, __mmask16 m) {
  if constexpr (std::is_same_v<Q, uint8_t>)
    return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p));
  else if constexpr (std::is_same_v<Q, int8_t>)
    return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p));
  else if constexpr (std::is_same_v<Q, uint16_t>)
    return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  else if constexpr (std::is_same_v<Q, int16_t>)
    return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, p));
  else
    return _mm512_maskz_loadu_epi32(m, p);
}

// Sixteen int32 lanes within Q's range (vpmovdb / vpmovdw truncate, exact here).
template <typename Q>
EPHOST_QUANT_AVX512_INLINE void store16(Q* p, __mmask16 m, __m512i v) {
  if constexpr (sizeof(Q) == 1)
    _mm512_mask_cvtepi32_storeu_epi8(p, m, v);
  else
    _mm512_mask_cvtepi32_storeu_epi16(p, m, v);
}

template <typename Q>
EPHOST_QUANT_AVX512_INLINE __m512i quantize16(__m512 x, __m512 s, __m512 z) {
  __m512 v = _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_add_ps(v, z);
  v = _mm512_max_ps(v, _mm512_set1_ps(kLowest<Q>));
  v = _mm512_min_ps(v, _mm512_set1_ps(kHighest<Q>));
  return _mm512_cvtps_epi32(v);
}

template <typename Q>
EPHOST_QUANT_AVX512 void quantize_avx512(const float* x, float s, Q z, Q* y, int64_t n) {
  const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(static_cast<float>(z));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    store16(y + i, m, quantize16<Q>(_mm512_maskz_loadu_ps(m, x + i), vs, vz));
  }
}

template <typename Q>
EPHOST_QUANT_AVX512 void quantize_each_avx512(const float* x, const float* s, const Q* z, Q* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 vz = z ? _mm512_cvtepi32_ps(load16_i32(z + i, m)) : _mm512_setzero_ps();
    // Masked-off lanes divide 0 by a scale of 1, so that they raise nothing worth a thought.
    const __m512 vs = _mm512_mask_loadu_ps(_mm512_set1_ps(1.f), m, s + i);
    store16(y + i, m, quantize16<Q>(_mm512_maskz_loadu_ps(m, x + i), vs, vz));
  }
}

template <typename Q>
EPHOST_QUANT_AVX512 void dequantize_avx512(const Q* x, float s, Q z, float* y, int64_t n) {
  if (sizeof(Q) >= 4 && z != 0) return dequantize_base(x, s, z, y, n);
  const __m512 vs = _mm512_set1_ps(s);
  const __m512i vz = _mm512_set1_epi32(static_cast<int32_t>(z));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load16_i32(x + i, m), vz)), vs));
  }
}

template <typename Q>
EPHOST_QUANT_AVX512 void dequantize_each_avx512(const Q* x, const float* s, const Q* z, float* y, int64_t n) {
  if (sizeof(Q) >= 4 && z) return dequantize_each_base(x, s, z, y, n);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    __m512i d = load16_i32(x + i, m);
    if (z) d = _mm512_sub_epi32(d, load16_i32(z + i, m));
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_maskz_loadu_ps(m, s + i)));
  }
}

// Sixteen elements of B of the fused residual Add (masked-off lanes read nothing).
template <typename B>
EPHOST_QUANT_AVX512_INLINE __m512 operand16(const B* b, __mmask16 m, __m512i zb, __m512 sb) {
  if constexpr (std::is_same_v<B, float>)
    return _mm512_maskz_loadu_ps(m, b);
  else
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load16_i32(b, m), zb)), sb);
}

template <typename A, typename B, typename Y>
EPHOST_QUANT_AVX512 void add_quantize_avx512(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu,
                                             float sy, Y zy, Y* y, int64_t n) {
  const __m512 vsa = _mm512_set1_ps(sa), vsb = _mm512_set1_ps(sb), vsy = _mm512_set1_ps(sy);
  const __m512 vzy = _mm512_set1_ps(static_cast<float>(zy)), zero = _mm512_setzero_ps();
  const __m512i vza = _mm512_set1_epi32(static_cast<int32_t>(za)), vzb = _mm512_set1_epi32(static_cast<int32_t>(zb));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 da = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load16_i32(a + i, m), vza)), vsa);
    // The rounding form is a builtin, which the compiler does not contract with the products into an
    // FMA (the plain one is a vector `+` it may, under GCC's default -ffp-contract=fast).
    __m512 v = _mm512_add_round_ps(da, operand16<B>(b + i, m, vzb, vsb), _MM_FROUND_CUR_DIRECTION);
    if (relu) v = _mm512_max_ps(v, zero);  // NaN and -0 become +0, as x > 0 ? x : 0
    store16(y + i, m, quantize16<Y>(v, vsy, vzy));
  }
}

#define EPHOST_QUANT_AVX512_FMA __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define EPHOST_QUANT_AVX512_FMA_INLINE \
  inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

// The residual Add with x / sy as Markstein's corrected product (quantize.h): q = x * r,
// e = fma(-q, sy, x) exact, x / sy = fma(e, r, q). Sixteen elements into int32 lanes: round_half_to_even(x / sy) + zy, the quotient first limited to
// +-2^22 (beyond it every byte type saturates anyway), so that the saturating packs below clamp.
template <typename A, typename B, typename Y>
EPHOST_QUANT_AVX512_FMA_INLINE __m512i add_quotient16(const A* a, const B* b, __mmask16 m, __m512 vsa, __m512i vza,
                                                      __m512 vsb, __m512i vzb, bool relu, __m512 vsy, __m512 vr,
                                                      __m512i vzy) {
  const __m512 da = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load16_i32(a, m), vza)), vsa);
  const __m512 db = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(load16_i32(b, m), vzb)), vsb);
  // The rounding forms are builtins the compiler never contracts into an FMA.
  __m512 v = _mm512_add_round_ps(da, db, _MM_FROUND_CUR_DIRECTION);
  if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
  const __m512 q = _mm512_mul_round_ps(v, vr, _MM_FROUND_CUR_DIRECTION);
  const __m512 e = _mm512_fnmadd_ps(q, vsy, v);
  const __m512 limit = _mm512_set1_ps(4194304.f);
  __m512 x = _mm512_fmadd_ps(e, vr, q);
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit);
  return _mm512_add_epi32(_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzy);
}

template <typename A, typename B, typename Y>
EPHOST_QUANT_AVX512_FMA void add_quantize_reciprocal_avx512(
    const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy, Y zy, Y* y, int64_t n) {
  const __m512 vsa = _mm512_set1_ps(sa), vsb = _mm512_set1_ps(sb), vsy = _mm512_set1_ps(sy);
  const __m512 vr = _mm512_set1_ps(1.f / sy);
  const __m512i vza = _mm512_set1_epi32(static_cast<int32_t>(za)), vzb = _mm512_set1_epi32(static_cast<int32_t>(zb));
  const __m512i vzy = _mm512_set1_epi32(static_cast<int32_t>(zy));
  const __mmask16 all = 0xFFFF;
  // 64 elements a step: four int32 vectors packed with saturation into one store of 64 bytes (the
  // packs work within 128-bit lanes; the permutation puts the 4-byte groups back in order).
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i q[4];
    for (int k = 0; k < 4; ++k)
      q[k] = add_quotient16<A, B, Y>(a + i + 16 * k, b + i + 16 * k, all, vsa, vza, vsb, vzb, relu, vsy, vr, vzy);
    const __m512i w0 = _mm512_packs_epi32(q[0], q[1]), w1 = _mm512_packs_epi32(q[2], q[3]);
    const __m512i bytes = std::is_same_v<Y, uint8_t> ? _mm512_packus_epi16(w0, w1) : _mm512_packs_epi16(w0, w1);
    _mm512_storeu_si512(y + i, _mm512_permutexvar_epi32(order, bytes));
  }
  const __m512i lo = _mm512_set1_epi32(static_cast<int32_t>(kLowest<Y>));
  const __m512i hi = _mm512_set1_epi32(static_cast<int32_t>(kHighest<Y>));
  for (; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512i q = add_quotient16<A, B, Y>(a + i, b + i, m, vsa, vza, vsb, vzb, relu, vsy, vr, vzy);
    store16(y + i, m, _mm512_min_epi32(_mm512_max_epi32(q, lo), hi));
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // EPHOST_QUANT_X86

// ----- dispatch, per call (one relaxed load), so that a cap set by a test takes effect ---------------

template <typename Q>
void quantize(const float* x, float s, Q z, Q* y, int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return quantize_avx512(x, s, z, y, n);
    case Isa::kAvx2: return quantize_avx2(x, s, z, y, n);
    case Isa::kScalar: break;
  }
#endif
  quantize_base(x, s, z, y, n);
}

template <typename Q>
void quantize_each(const float* x, const float* s, const Q* z, Q* y, int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return quantize_each_avx512(x, s, z, y, n);
    case Isa::kAvx2: return quantize_each_avx2(x, s, z, y, n);
    case Isa::kScalar: break;
  }
#endif
  quantize_each_base(x, s, z, y, n);
}

template <typename Q>
void dequantize(const Q* x, float s, Q z, float* y, int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return dequantize_avx512(x, s, z, y, n);
    case Isa::kAvx2: return dequantize_avx2(x, s, z, y, n);
    case Isa::kScalar: break;
  }
#endif
  dequantize_base(x, s, z, y, n);
}

template <typename Q>
void dequantize_each(const Q* x, const float* s, const Q* z, float* y, int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return dequantize_each_avx512(x, s, z, y, n);
    case Isa::kAvx2: return dequantize_each_avx2(x, s, z, y, n);
    case Isa::kScalar: break;
  }
#endif
  dequantize_each_base(x, s, z, y, n);
}

template <typename A, typename B, typename Y>
void add_quantize(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy, Y zy, Y* y, int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return add_quantize_avx512(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
    case Isa::kAvx2: return add_quantize_avx2(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
    case Isa::kScalar: break;
  }
#endif
  add_quantize_base(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
}

template <typename A, typename B, typename Y>
void add_quantize_by_reciprocal(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy, Y zy, Y* y,
                                int64_t n) {
#if EPHOST_QUANT_X86
  switch (active_isa()) {
    case Isa::kAvx512: return add_quantize_reciprocal_avx512(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
    case Isa::kAvx2:  // an AVX2 form of it measured slower than the AVX2 division (Xeon, AVX-512 capped)
    case Isa::kScalar: break;
  }
#endif
  add_quantize(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
}

template <typename A, typename B, typename Y>
bool reciprocal_exact(float sa, A za, float sb, B zb, bool relu, float sy, Y zy) {
#if EPHOST_QUANT_X86
  if (hardware_isa() != Isa::kAvx512) return false;
  constexpr int64_t kPairs = 256 * 256;
  std::vector<A> a(kPairs);
  std::vector<B> b(kPairs);
  for (int64_t i = 0; i < kPairs; ++i) {
    a[i] = static_cast<A>(static_cast<uint8_t>(i & 255));
    b[i] = static_cast<B>(static_cast<uint8_t>(i >> 8));
  }
  std::vector<Y> by_division(kPairs), by_reciprocal(kPairs);
  add_quantize_base(a.data(), sa, za, b.data(), sb, zb, relu, sy, zy, by_division.data(), kPairs);
  add_quantize_reciprocal_avx512(a.data(), sa, za, b.data(), sb, zb, relu, sy, zy, by_reciprocal.data(), kPairs);
  return by_division == by_reciprocal;
#else
  (void)sa, (void)za, (void)sb, (void)zb, (void)relu, (void)sy, (void)zy;
  return false;
#endif
}

}  // namespace

#define EPHOST_QUANTIZE_TYPE(Q)                                                                      \
  void quantize_linear(const float* x, float scale, Q zero_point, Q* y, int64_t n) {                \
    quantize<Q>(x, scale, zero_point, y, n);                                                       \
  }                                                                                                  \
  void quantize_linear_each(const float* x, const float* scale, const Q* zero_point, Q* y, int64_t n) { \
    quantize_each<Q>(x, scale, zero_point, y, n);                                                  \
  }
#define EPHOST_DEQUANTIZE_TYPE(Q)                                                                    \
  void dequantize_linear(const Q* x, float scale, Q zero_point, float* y, int64_t n) {              \
    dequantize<Q>(x, scale, zero_point, y, n);                                                     \
  }                                                                                                  \
  void dequantize_linear_each(const Q* x, const float* scale, const Q* zero_point, float* y, int64_t n) { \
    dequantize_each<Q>(x, scale, zero_point, y, n);                                                \
  }

EPHOST_QUANTIZE_TYPE(uint8_t)
EPHOST_QUANTIZE_TYPE(int8_t)
EPHOST_QUANTIZE_TYPE(uint16_t)
EPHOST_QUANTIZE_TYPE(int16_t)
EPHOST_DEQUANTIZE_TYPE(uint8_t)
EPHOST_DEQUANTIZE_TYPE(int8_t)
EPHOST_DEQUANTIZE_TYPE(uint16_t)
EPHOST_DEQUANTIZE_TYPE(int16_t)
EPHOST_DEQUANTIZE_TYPE(int32_t)

template <typename A, typename B, typename Y>
void add_dequantized_then_quantize(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu, float sy,
                                   Y zy, Y* y, int64_t n) {
  add_quantize<A, B, Y>(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
}

#define EPHOST_ADD_QUANTIZE(A, B, Y)                                                                              \
  template void add_dequantized_then_quantize<A, B, Y>(const A*, float, A, const B*, float, B, bool, float, Y, Y*, \
                                                       int64_t);
#define EPHOST_ADD_QUANTIZE_B(A, Y) \
  EPHOST_ADD_QUANTIZE(A, uint8_t, Y) EPHOST_ADD_QUANTIZE(A, int8_t, Y) EPHOST_ADD_QUANTIZE(A, float, Y)
EPHOST_ADD_QUANTIZE_B(uint8_t, uint8_t)
EPHOST_ADD_QUANTIZE_B(uint8_t, int8_t)
EPHOST_ADD_QUANTIZE_B(int8_t, uint8_t)
EPHOST_ADD_QUANTIZE_B(int8_t, int8_t)

template <typename A, typename B, typename Y>
void add_dequantized_then_quantize_by_reciprocal(const A* a, float sa, A za, const B* b, float sb, B zb, bool relu,
                                                 float sy, Y zy, Y* y, int64_t n) {
  add_quantize_by_reciprocal<A, B, Y>(a, sa, za, b, sb, zb, relu, sy, zy, y, n);
}

template <typename A, typename B, typename Y>
bool add_quantize_by_reciprocal_exact(float sa, A za, float sb, B zb, bool relu, float sy, Y zy) {
  return reciprocal_exact<A, B, Y>(sa, za, sb, zb, relu, sy, zy);
}

#define EPHOST_ADD_QUANTIZE_BY_RECIPROCAL(A, B, Y)                                                              \
  template void add_dequantized_then_quantize_by_reciprocal<A, B, Y>(const A*, float, A, const B*, float, B, bool, \
                                                                     float, Y, Y*, int64_t);                      \
  template bool add_quantize_by_reciprocal_exact<A, B, Y>(float, A, float, B, bool, float, Y);
#define EPHOST_ADD_QUANTIZE_BY_RECIPROCAL_Y(A, B) \
  EPHOST_ADD_QUANTIZE_BY_RECIPROCAL(A, B, uint8_t) EPHOST_ADD_QUANTIZE_BY_RECIPROCAL(A, B, int8_t)
EPHOST_ADD_QUANTIZE_BY_RECIPROCAL_Y(uint8_t, uint8_t)
EPHOST_ADD_QUANTIZE_BY_RECIPROCAL_Y(uint8_t, int8_t)
EPHOST_ADD_QUANTIZE_BY_RECIPROCAL_Y(int8_t, uint8_t)
EPHOST_ADD_QUANTIZE_BY_RECIPROCAL_Y(int8_t, int8_t)

}  // namespace ephost::cpu::math
