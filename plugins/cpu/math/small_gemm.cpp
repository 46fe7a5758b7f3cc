#include "small_gemm.h"

#include <algorithm>
#include <cstddef>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "isa.h"

namespace ephost::cpu::math {

namespace {

#define EPHOST_SMALL_INLINE inline __attribute__((always_inline))

constexpr int64_t kPanel = 64;

// One panel of W columns for one row, accumulators in registers across k.
template <int W>
EPHOST_SMALL_INLINE void panel(const float* x, int64_t k, const float* p, float* y, int64_t valid) {
  float acc[W];
  for (int j = 0; j < W; ++j) acc[j] = 0.f;
  for (int64_t i = 0; i < k; ++i) {
    const float xi = x[i];
    const float* r = p + i * W;
    for (int j = 0; j < W; ++j) acc[j] += xi * r[j];
  }
  for (int64_t j = 0; j < valid; ++j) y[j] = acc[j];
}

EPHOST_SMALL_INLINE void body(const float* x, int64_t rows, int64_t k, int64_t n, const float* panels, float* y) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* xb = x + b * k;
    float* yb = y + b * n;
    const float* p = panels;
    for (int64_t n0 = 0; n0 < n; n0 += kPanel) {
      const int64_t valid = std::min(kPanel, n - n0), width = (valid + 15) / 16 * 16;
      switch (width) {
        case 64: panel<64>(xb, k, p, yb + n0, valid); break;
        case 48: panel<48>(xb, k, p, yb + n0, valid); break;
        case 32: panel<32>(xb, k, p, yb + n0, valid); break;
        default: panel<16>(xb, k, p, yb + n0, valid); break;
      }
      p += width * k;
    }
  }
}

void base(const float* x, int64_t rows, int64_t k, int64_t n, const float* p, float* y) { body(x, rows, k, n, p, y); }

#if defined(__x86_64__) && defined(__GNUC__)
// Full 64-wide panels with explicit registers (the generic loop above spills GCC's accumulator array
// to the stack): AVX2 keeps 8 ymm accumulators; AVX-512 keeps two sets of 4 zmm (even and odd k) so
// that 8 independent FMA chains hide the latency.
__attribute__((target("avx2,fma"))) void avx2(const float* x, int64_t rows, int64_t k, int64_t n, const float* p,
                                               float* y) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* xb = x + b * k;
    float* yb = y + b * n;
    const float* pp = p;
    for (int64_t n0 = 0; n0 < n; n0 += kPanel) {
      const int64_t valid = std::min(kPanel, n - n0), width = (valid + 15) / 16 * 16;
      if (width != 64) {
        body(xb, 1, k, valid, pp, yb + n0);  // the last, narrower panel
        break;
      }
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
      for (int64_t i = 0; i < k; ++i) {
        const __m256 xi = _mm256_broadcast_ss(xb + i);
        const float* r = pp + i * 64;
        a0 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r), a0);
        a1 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 8), a1);
        a2 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 16), a2);
        a3 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 24), a3);
        a4 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 32), a4);
        a5 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 40), a5);
        a6 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 48), a6);
        a7 = _mm256_fmadd_ps(xi, _mm256_loadu_ps(r + 56), a7);
      }
      float* o = yb + n0;
      _mm256_storeu_ps(o, a0);
      _mm256_storeu_ps(o + 8, a1);
      _mm256_storeu_ps(o + 16, a2);
      _mm256_storeu_ps(o + 24, a3);
      _mm256_storeu_ps(o + 32, a4);
      _mm256_storeu_ps(o + 40, a5);
      _mm256_storeu_ps(o + 48, a6);
      _mm256_storeu_ps(o + 56, a7);
      pp += 64 * k;
    }
  }
}

__attribute__((target("avx512f,fma"))) void avx512(const float* x, int64_t rows, int64_t k, int64_t n, const float* p,
                                                    float* y) {
  for (int64_t b = 0; b < rows; ++b) {
    const float* xb = x + b * k;
    float* yb = y + b * n;
    const float* pp = p;
    for (int64_t n0 = 0; n0 < n; n0 += kPanel) {
      const int64_t valid = std::min(kPanel, n - n0), width = (valid + 15) / 16 * 16;
      if (width != 64) {
        body(xb, 1, k, valid, pp, yb + n0);
        break;
      }
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
      int64_t i = 0;
      for (; i + 2 <= k; i += 2) {
        const __m512 xi = _mm512_set1_ps(xb[i]), xj = _mm512_set1_ps(xb[i + 1]);
        const float* r = pp + i * 64;
        a0 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r), a0);
        a1 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 16), a1);
        a2 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 32), a2);
        a3 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 48), a3);
        b0 = _mm512_fmadd_ps(xj, _mm512_loadu_ps(r + 64), b0);
        b1 = _mm512_fmadd_ps(xj, _mm512_loadu_ps(r + 80), b1);
        b2 = _mm512_fmadd_ps(xj, _mm512_loadu_ps(r + 96), b2);
        b3 = _mm512_fmadd_ps(xj, _mm512_loadu_ps(r + 112), b3);
      }
      if (i < k) {
        const __m512 xi = _mm512_set1_ps(xb[i]);
        const float* r = pp + i * 64;
        a0 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r), a0);
        a1 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 16), a1);
        a2 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 32), a2);
        a3 = _mm512_fmadd_ps(xi, _mm512_loadu_ps(r + 48), a3);
      }
      float* o = yb + n0;
      _mm512_storeu_ps(o, _mm512_add_ps(a0, b0));
      _mm512_storeu_ps(o + 16, _mm512_add_ps(a1, b1));
      _mm512_storeu_ps(o + 32, _mm512_add_ps(a2, b2));
      _mm512_storeu_ps(o + 48, _mm512_add_ps(a3, b3));
      pp += 64 * k;
    }
  }
}
#endif

using Fn = void (*)(const float*, int64_t, int64_t, int64_t, const float*, float*);

Fn pick() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (active_isa()) {
    case Isa::kAvx512: return avx512;
    case Isa::kAvx2: return avx2;
    case Isa::kScalar: break;
  }
#endif
  return base;
}

}  // namespace

SmallGemmWeights pack_for_small_gemm(const float* r, int64_t n, int64_t k) {
  SmallGemmWeights w;
  w.n = n;
  w.k = k;
  for (int64_t n0 = 0; n0 < n; n0 += kPanel) {
    const int64_t valid = std::min(kPanel, n - n0), width = (valid + 15) / 16 * 16;
    const size_t base = w.panels.size();
    w.panels.resize(base + static_cast<size_t>(width * k), 0.f);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < valid; ++j) w.panels[base + static_cast<size_t>(i * width + j)] = r[(n0 + j) * k + i];
  }
  return w;
}

void small_gemm(const float* x, int64_t rows, const SmallGemmWeights& w, float* y) {
  pick()(x, rows, w.k, w.n, w.panels.data(), y);
}

}  // namespace ephost::cpu::math
