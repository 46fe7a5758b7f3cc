// narrow_encode_integer_f32 (narrow_types.h): floats to int4, uint4, int2 or uint2 codes in vector loops,
// bit for bit what narrow_encode gives through double: NaN to 0, clamped to the type's range, rounded
// half to even. In float the clamp bounds are exact and rounding a float to an integer is exact, so the
// float computation equals the double one. Codes are made one per byte, a chunk at a time, then packed.
#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "ephost/ephost_types.h"
#include "isa.h"
#include "narrow_types.h"

namespace ephost::cpu::math {

namespace {

struct IntCodes {
  float lo, hi;
  int mask;
};

IntCodes codes_of(int32_t t) {
  switch (t) {
    case EPHOST_ELEMENT_INT4: return {-8.f, 7.f, 0xF};
    case EPHOST_ELEMENT_UINT4: return {0.f, 15.f, 0xF};
    case EPHOST_ELEMENT_INT2: return {-2.f, 1.f, 0x3};
    default: return {0.f, 3.f, 0x3};  // uint2
  }
}

// codes[i] for x[i], i < n.
using CodesFn = void (*)(const IntCodes& c, const float* x, int64_t n, uint8_t* codes);

void codes_base(const IntCodes& c, const float* x, int64_t n, uint8_t* codes) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    codes[i] = std::isnan(v) ? 0
                             : static_cast<uint8_t>(static_cast<int>(std::nearbyint(std::fmin(std::fmax(v, c.lo), c.hi))) &
                                                    c.mask);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)

// Eight codes as int32 lanes (0 for NaN).
__attribute__((target("avx2,fma"))) inline __m256i eight_codes(const float* p, __m256 lo, __m256 hi, __m256i mask) {
  const __m256 v = _mm256_loadu_ps(p);
  const __m256 ordered = _mm256_cmp_ps(v, v, _CMP_ORD_Q);
  const __m256 r = _mm256_round_ps(_mm256_min_ps(_mm256_max_ps(v, lo), hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm256_and_si256(_mm256_and_si256(_mm256_cvtps_epi32(r), mask), _mm256_castps_si256(ordered));
}

__attribute__((target("avx2,fma"))) void codes_avx2(const IntCodes& c, const float* x, int64_t n, uint8_t* codes) {
  const __m256 lo = _mm256_set1_ps(c.lo), hi = _mm256_set1_ps(c.hi);
  const __m256i mask = _mm256_set1_epi32(c.mask);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(eight_codes(x + i, lo, hi, mask), eight_codes(x + i + 8, lo, hi, mask)), 0xD8);
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), bytes);
  }
  codes_base(c, x + i, n - i, codes + i);
}

// GCC 12's AVX-512 headers pass _mm512_undefined_*() as the unused source of the unmasked intrinsics,
// which -Wmaybe-uninitialized reports once they are inlined; nothing here reads an undefined lane.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

__attribute__((target("avx512f"))) void codes_avx512(const IntCodes& c, const float* x, int64_t n, uint8_t* codes) {
  const __m512 lo = _mm512_set1_ps(c.lo), hi = _mm512_set1_ps(c.hi);
  const __m512i mask = _mm512_set1_epi32(c.mask);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    const __m512 r = _mm512_roundscale_ps(_mm512_min_ps(_mm512_max_ps(v, lo), hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i q = _mm512_maskz_and_epi32(ordered, _mm512_cvtps_epi32(r), mask);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(q));
  }
  codes_base(c, x + i, n - i, codes + i);
}

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // x86-64

CodesFn pick() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (active_isa()) {
    case Isa::kAvx512: return codes_avx512;
    case Isa::kAvx2: return codes_avx2;
    case Isa::kScalar: break;
  }
#endif
  return codes_base;
}

}  // namespace

void narrow_encode_integer_f32(int32_t elem_type, const float* values, int64_t n, void* data, int64_t begin) {
  const IntCodes c = codes_of(elem_type);
  const CodesFn codes_fn = pick();
  const int per_byte = elements_per_byte(elem_type);
  constexpr int64_t kChunk = 1024;  // a multiple of every packed type's elements per byte
  uint8_t codes[kChunk];
  auto* out = static_cast<uint8_t*>(data) + begin / per_byte;
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = std::min(kChunk, n - i);
    codes_fn(c, values + i, len, codes);
    narrow_pack_codes(elem_type, codes, len, out + i / per_byte);
  }
}

}  // namespace ephost::cpu::math
