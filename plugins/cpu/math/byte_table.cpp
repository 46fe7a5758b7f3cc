#include "byte_table.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "isa.h"

namespace ephost::cpu::math {

namespace {

void lookup_scalar(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

#if defined(__x86_64__) && defined(__GNUC__)
#define EPHOST_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

EPHOST_VBMI void lookup_vbmi(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i idx = _mm512_loadu_si512(x + i);
    // vpermi2b uses the index's low 7 bits: entries 0..127 from (t0, t1), 128..255 from (t2, t3).
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    const __mmask64 top = _mm512_movepi8_mask(idx);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(top, lo, hi));
  }
  if (i < n) {
    const __mmask64 rest = (~__mmask64{0}) >> (64 - (n - i));
    const __m512i idx = _mm512_maskz_loadu_epi8(rest, x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_mask_storeu_epi8(y + i, rest, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
}

bool has_vbmi() {
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi;
}
#endif

}  // namespace

bool lookup_bytes_uses_vbmi() {
#if defined(__x86_64__) && defined(__GNUC__)
  return active_isa() == Isa::kAvx512 && has_vbmi();
#else
  return false;
#endif
}

void lookup_bytes(const uint8_t table[256], const uint8_t* x, uint8_t* y, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (lookup_bytes_uses_vbmi()) return lookup_vbmi(table, x, y, n);
#endif
  lookup_scalar(table, x, y, n);
}

}  // namespace ephost::cpu::math
