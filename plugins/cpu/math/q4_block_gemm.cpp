#include "q4_block_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "isa.h"
#include "parallel.h"

namespace ephost::cpu::math {

namespace {

#define EPHOST_Q4_INLINE inline __attribute__((always_inline))

constexpr int64_t kHalf = kQ4Tile / 2;
// K rows dequantized at a time: 64 KiB of floats, reused by every row of x the work item has.
constexpr int64_t kChunk = 256;

uint8_t code_at(const void* data, int64_t index) {
  const uint8_t byte = static_cast<const uint8_t*>(data)[index / 2];
  return static_cast<uint8_t>((index % 2 != 0 ? byte >> 4 : byte) & 0xF);
}

// The zero point's value in the unsigned code domain (int4 shifted by 8).
float unsigned_zero(bool is_signed, uint8_t code) {
  if (!is_signed) return static_cast<float>(code);
  const int value = code >= 8 ? static_cast<int>(code) - 16 : static_cast<int>(code);
  return static_cast<float>(value + 8);
}

// The tile's rows [k0, k1) as floats: buf[(k - k0) * kQ4Tile + j], column j of the tile.
using DequantFn = void (*)(const Q4BlockWeights& w, int64_t tile, int64_t k0, int64_t k1, float* buf);
// acc[i * kQ4Tile + j] += sum over kk < kc of x[i * ldx + kk] * buf[kk * kQ4Tile + j], for i < rows.
using AccumulateFn = void (*)(const float* x, int64_t ldx, int64_t rows, int64_t kc, const float* buf, float* acc);

// For a few rows (kDirectRows), dequantizing into a buffer costs more than the product: per block,
// the sums of x * code (codes as floats, exact), then acc += s * (those - z * the block's sum of x).
// xsum[i * w.blocks + b] is row i's sum of x over block b.
using DirectFn = void (*)(const float* x, int64_t ldx, int64_t rows, const float* xsum, const Q4BlockWeights& w,
                          int64_t tile, float* acc);
constexpr int64_t kDirectRows = 4;

// Row k's block ends at min(k1, the block's end); its scales and zero points over the tile. (Plain
// loops rather than a callback: a lambda would not inherit the callers' target attributes.)
EPHOST_Q4_INLINE int64_t block_end(const Q4BlockWeights& w, int64_t k, int64_t k1) {
  return std::min(k1, (k / w.block + 1) * w.block);
}
EPHOST_Q4_INLINE size_t block_at(const Q4BlockWeights& w, int64_t tile, int64_t k) {
  return static_cast<size_t>((tile * w.blocks + k / w.block) * kQ4Tile);
}

EPHOST_Q4_INLINE const uint8_t* row_codes(const Q4BlockWeights& w, int64_t tile, int64_t k) {
  return w.codes.data() + static_cast<size_t>((tile * w.k + k) * kHalf);
}

void dequant_base(const Q4BlockWeights& w, int64_t tile, int64_t k0, int64_t k1, float* buf) {
  for (int64_t kb = k0, ke; kb < k1; kb = ke) {
    ke = block_end(w, kb, k1);
    const float *s = w.scales.data() + block_at(w, tile, kb), *z = w.zeros.data() + block_at(w, tile, kb);
    for (int64_t k = kb; k < ke; ++k) {
      const uint8_t* c = row_codes(w, tile, k);
      float* o = buf + (k - k0) * kQ4Tile;
      for (int64_t j = 0; j < kHalf; ++j) {
        o[j] = (static_cast<float>(c[j] & 0xF) - z[j]) * s[j];
        o[j + kHalf] = (static_cast<float>(c[j] >> 4) - z[j + kHalf]) * s[j + kHalf];
      }
    }
  }
}

void direct_base(const float* x, int64_t ldx, int64_t rows, const float* xsum, const Q4BlockWeights& w, int64_t tile,
                 float* acc) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* a = acc + i * kQ4Tile;
    for (int64_t kb = 0, ke; kb < w.k; kb = ke) {
      ke = block_end(w, kb, w.k);
      float t[kQ4Tile] = {};
      for (int64_t k = kb; k < ke; ++k) {
        const uint8_t* c = row_codes(w, tile, k);
        const float v = xi[k];
        for (int64_t j = 0; j < kHalf; ++j) {
          t[j] += v * static_cast<float>(c[j] & 0xF);
          t[j + kHalf] += v * static_cast<float>(c[j] >> 4);
        }
      }
      const float *s = w.scales.data() + block_at(w, tile, kb), *z = w.zeros.data() + block_at(w, tile, kb);
      const float xs = xsum[i * w.blocks + kb / w.block];
      for (int64_t j = 0; j < kQ4Tile; ++j) a[j] += s[j] * (t[j] - z[j] * xs);
    }
  }
}

template <int MR>
EPHOST_Q4_INLINE void accumulate_rows_base(const float* x, int64_t ldx, int64_t kc, const float* buf, float* acc) {
  for (int i = 0; i < MR; ++i) {
    float a[kQ4Tile];
    std::memcpy(a, acc + i * kQ4Tile, sizeof a);
    const float* xi = x + i * ldx;
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float v = xi[kk];
      const float* b = buf + kk * kQ4Tile;
      for (int64_t j = 0; j < kQ4Tile; ++j) a[j] += v * b[j];
    }
    std::memcpy(acc + i * kQ4Tile, a, sizeof a);
  }
}

void accumulate_base(const float* x, int64_t ldx, int64_t rows, int64_t kc, const float* buf, float* acc) {
  for (int64_t i = 0; i < rows; ++i) accumulate_rows_base<1>(x + i * ldx, ldx, kc, buf, acc + i * kQ4Tile);
}

#if defined(__x86_64__) && defined(__GNUC__)

__attribute__((target("avx2,fma"))) void dequant_avx2(const Q4BlockWeights& w, int64_t tile, int64_t k0, int64_t k1,
                                                      float* buf) {
  const __m256i low = _mm256_set1_epi32(0xF);
  for (int64_t kb = k0, ke; kb < k1; kb = ke) {
    ke = block_end(w, kb, k1);
    const float *s = w.scales.data() + block_at(w, tile, kb), *z = w.zeros.data() + block_at(w, tile, kb);
    for (int64_t k = kb; k < ke; ++k) {
      const uint8_t* c = row_codes(w, tile, k);
      float* o = buf + (k - k0) * kQ4Tile;
      for (int g = 0; g < 4; ++g) {
        const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + 8 * g)));
        const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(bytes, low));
        const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4));
        const int jl = 8 * g, jh = 8 * g + static_cast<int>(kHalf);
        _mm256_storeu_ps(o + jl, _mm256_mul_ps(_mm256_sub_ps(lo, _mm256_loadu_ps(z + jl)), _mm256_loadu_ps(s + jl)));
        _mm256_storeu_ps(o + jh, _mm256_mul_ps(_mm256_sub_ps(hi, _mm256_loadu_ps(z + jh)), _mm256_loadu_ps(s + jh)));
      }
    }
  }
}

__attribute__((target("avx2,fma"))) void direct_avx2(const float* x, int64_t ldx, int64_t rows, const float* xsum,
                                                     const Q4BlockWeights& w, int64_t tile, float* acc) {
  const __m256i low = _mm256_set1_epi32(0xF);
  for (int64_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* a = acc + i * kQ4Tile;
    for (int64_t kb = 0, ke; kb < w.k; kb = ke) {
      ke = block_end(w, kb, w.k);
      __m256 t[8];
      for (int q = 0; q < 8; ++q) t[q] = _mm256_setzero_ps();
      for (int64_t k = kb; k < ke; ++k) {
        const uint8_t* c = row_codes(w, tile, k);
        const __m256 v = _mm256_broadcast_ss(xi + k);
        for (int g = 0; g < 4; ++g) {
          const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + 8 * g)));
          t[g] = _mm256_fmadd_ps(v, _mm256_cvtepi32_ps(_mm256_and_si256(bytes, low)), t[g]);
          t[g + 4] = _mm256_fmadd_ps(v, _mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4)), t[g + 4]);
        }
      }
      const float *s = w.scales.data() + block_at(w, tile, kb), *z = w.zeros.data() + block_at(w, tile, kb);
      const __m256 xs = _mm256_set1_ps(xsum[i * w.blocks + kb / w.block]);
      for (int q = 0; q < 8; ++q) {
        const __m256 d = _mm256_fnmadd_ps(_mm256_loadu_ps(z + 8 * q), xs, t[q]);
        _mm256_storeu_ps(a + 8 * q, _mm256_fmadd_ps(_mm256_loadu_ps(s + 8 * q), d, _mm256_loadu_ps(a + 8 * q)));
      }
    }
  }
}

// Two rows by half a tile (4 ymm each): 8 accumulators, 4 weight loads and 2 broadcasts per k.
template <int MR>
__attribute__((target("avx2,fma"))) EPHOST_Q4_INLINE void accumulate_half_avx2(const float* x, int64_t ldx, int64_t kc,
                                                                                const float* buf, float* acc) {
  __m256 a[MR][4];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < 4; ++j) a[i][j] = _mm256_loadu_ps(acc + i * kQ4Tile + 8 * j);
  for (int64_t kk = 0; kk < kc; ++kk) {
    const float* b = buf + kk * kQ4Tile;
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), b2 = _mm256_loadu_ps(b + 16),
                 b3 = _mm256_loadu_ps(b + 24);
    for (int i = 0; i < MR; ++i) {
      const __m256 v = _mm256_broadcast_ss(x + i * ldx + kk);
      a[i][0] = _mm256_fmadd_ps(v, b0, a[i][0]);
      a[i][1] = _mm256_fmadd_ps(v, b1, a[i][1]);
      a[i][2] = _mm256_fmadd_ps(v, b2, a[i][2]);
      a[i][3] = _mm256_fmadd_ps(v, b3, a[i][3]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < 4; ++j) _mm256_storeu_ps(acc + i * kQ4Tile + 8 * j, a[i][j]);
}

__attribute__((target("avx2,fma"))) void accumulate_avx2(const float* x, int64_t ldx, int64_t rows, int64_t kc,
                                                         const float* buf, float* acc) {
  for (int64_t half = 0; half < kQ4Tile; half += kHalf) {
    int64_t i = 0;
    for (; i + 2 <= rows; i += 2) accumulate_half_avx2<2>(x + i * ldx, ldx, kc, buf + half, acc + i * kQ4Tile + half);
    if (i < rows) accumulate_half_avx2<1>(x + i * ldx, ldx, kc, buf + half, acc + i * kQ4Tile + half);
  }
}

// GCC 12's AVX-512 headers pass _mm512_undefined_*() as the unused source of the unmasked intrinsics,
// which -Wmaybe-uninitialized reports once they are inlined; nothing here reads an undefined lane.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

__attribute__((target("avx512f,fma"))) void dequant_avx512(const Q4BlockWeights& w, int64_t tile, int64_t k0,
                                                           int64_t k1, float* buf) {
  const __m512i low = _mm512_set1_epi32(0xF);
  for (int64_t kb = k0, ke; kb < k1; kb = ke) {
    ke = block_end(w, kb, k1);
    const float *s = w.scales.data() + block_at(w, tile, kb), *z = w.zeros.data() + block_at(w, tile, kb);
    __m512 sv[4], zv[4];
    for (int q = 0; q < 4; ++q) {
      sv[q] = _mm512_loadu_ps(s + 16 * q);
      zv[q] = _mm512_loadu_ps(z + 16 * q);
    }
    for (int64_t k = kb; k < ke; ++k) {
      const uint8_t* c = row_codes(w, tile, k);
      float* o = buf + (k - k0) * kQ4Tile;
      const __m512i b0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
      const __m512i b1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16)));
      const __m512i v[4] = {_mm512_and_si512(b0, low), _mm512_and_si512(b1, low), _mm512_srli_epi32(b0, 4),
                            _mm512_srli_epi32(b1, 4)};
      for (int q = 0; q < 4; ++q)
        _mm512_storeu_ps(o + 16 * q, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(v[q]), zv[q]), sv[q]));
    }
  }
}

template <int MR>
__attribute__((target("avx512f,fma"))) EPHOST_Q4_INLINE void direct_rows_avx512(const float* x, int64_t ldx,
                                                                                 const float* xsum,
                                                                                 const Q4BlockWeights& w, int64_t tile,
                                                                                 float* acc) {
  const __m512i low = _mm512_set1_epi32(0xF);
  for (int64_t kb = 0, ke; kb < w.k; kb = ke) {
    ke = block_end(w, kb, w.k);
    __m512 t[MR][4];
    for (int i = 0; i < MR; ++i)
      for (int q = 0; q < 4; ++q) t[i][q] = _mm512_setzero_ps();
    for (int64_t k = kb; k < ke; ++k) {
      const uint8_t* c = row_codes(w, tile, k);
      const __m512i b0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
      const __m512i b1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16)));
      const __m512 q[4] = {_mm512_cvtepi32_ps(_mm512_and_si512(b0, low)), _mm512_cvtepi32_ps(_mm512_and_si512(b1, low)),
                           _mm512_cvtepi32_ps(_mm512_srli_epi32(b0, 4)), _mm512_cvtepi32_ps(_mm512_srli_epi32(b1, 4))};
      for (int i = 0; i < MR; ++i) {
        const __m512 v = _mm512_set1_ps(x[i * ldx + k]);
        for (int j = 0; j < 4; ++j) t[i][j] = _mm512_fmadd_ps(v, q[j], t[i][j]);
      }
    }
    const size_t at = block_at(w, tile, kb);
    for (int i = 0; i < MR; ++i) {
      const __m512 xs = _mm512_set1_ps(xsum[i * w.blocks + kb / w.block]);
      float* a = acc + i * kQ4Tile;
      for (int j = 0; j < 4; ++j) {
        const __m512 d = _mm512_fnmadd_ps(_mm512_loadu_ps(w.zeros.data() + at + 16 * j), xs, t[i][j]);
        _mm512_storeu_ps(a + 16 * j,
                         _mm512_fmadd_ps(_mm512_loadu_ps(w.scales.data() + at + 16 * j), d, _mm512_loadu_ps(a + 16 * j)));
      }
    }
  }
}

__attribute__((target("avx512f,fma"))) void direct_avx512(const float* x, int64_t ldx, int64_t rows, const float* xsum,
                                                          const Q4BlockWeights& w, int64_t tile, float* acc) {
  switch (rows) {
    case 4: direct_rows_avx512<4>(x, ldx, xsum, w, tile, acc); break;
    case 3: direct_rows_avx512<3>(x, ldx, xsum, w, tile, acc); break;
    case 2: direct_rows_avx512<2>(x, ldx, xsum, w, tile, acc); break;
    default:
      for (int64_t i = 0; i < rows; ++i)
        direct_rows_avx512<1>(x + i * ldx, ldx, xsum + i * w.blocks, w, tile, acc + i * kQ4Tile);
  }
}

// Four rows by a whole tile (4 zmm each): 16 accumulators, 4 weight loads and 4 broadcasts per k.
template <int MR>
__attribute__((target("avx512f,fma"))) EPHOST_Q4_INLINE void accumulate_rows_avx512(const float* x, int64_t ldx,
                                                                                     int64_t kc, const float* buf,
                                                                                     float* acc) {
  __m512 a[MR][4];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < 4; ++j) a[i][j] = _mm512_loadu_ps(acc + i * kQ4Tile + 16 * j);
  for (int64_t kk = 0; kk < kc; ++kk) {
    const float* b = buf + kk * kQ4Tile;
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), b2 = _mm512_loadu_ps(b + 32),
                 b3 = _mm512_loadu_ps(b + 48);
    for (int i = 0; i < MR; ++i) {
      const __m512 v = _mm512_set1_ps(x[i * ldx + kk]);
      a[i][0] = _mm512_fmadd_ps(v, b0, a[i][0]);
      a[i][1] = _mm512_fmadd_ps(v, b1, a[i][1]);
      a[i][2] = _mm512_fmadd_ps(v, b2, a[i][2]);
      a[i][3] = _mm512_fmadd_ps(v, b3, a[i][3]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < 4; ++j) _mm512_storeu_ps(acc + i * kQ4Tile + 16 * j, a[i][j]);
}

__attribute__((target("avx512f,fma"))) void accumulate_avx512(const float* x, int64_t ldx, int64_t rows, int64_t kc,
                                                              const float* buf, float* acc) {
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) accumulate_rows_avx512<4>(x + i * ldx, ldx, kc, buf, acc + i * kQ4Tile);
  switch (rows - i) {
    case 3: accumulate_rows_avx512<3>(x + i * ldx, ldx, kc, buf, acc + i * kQ4Tile); break;
    case 2: accumulate_rows_avx512<2>(x + i * ldx, ldx, kc, buf, acc + i * kQ4Tile); break;
    case 1: accumulate_rows_avx512<1>(x + i * ldx, ldx, kc, buf, acc + i * kQ4Tile); break;
    default: break;
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // x86-64

struct Loops {
  DequantFn dequant;
  AccumulateFn accumulate;
  DirectFn direct;
};

Loops pick() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (active_isa()) {
    case Isa::kAvx512: return {dequant_avx512, accumulate_avx512, direct_avx512};
    case Isa::kAvx2: return {dequant_avx2, accumulate_avx2, direct_avx2};
    case Isa::kScalar: break;
  }
#endif
  return {dequant_base, accumulate_base, direct_base};
}

// Rows [r0, r1) of y over one column tile: the tile's weights dequantized kChunk rows of K at a time.
// xsum: the rows' block sums of x (direct path, rows <= kDirectRows), else null.
void tile_product(const Loops& loops, const float* x, int64_t r0, int64_t r1, const Q4BlockWeights& w, int64_t tile,
                  const float* bias, const float* xsum, float* y) {
  thread_local std::vector<float> buf, acc;
  const int64_t rows = r1 - r0, n0 = tile * kQ4Tile, valid = std::min(kQ4Tile, w.n - n0);
  buf.resize(static_cast<size_t>(kChunk * kQ4Tile));
  acc.assign(static_cast<size_t>(rows * kQ4Tile), 0.f);
  if (bias != nullptr)
    for (int64_t i = 0; i < rows; ++i) std::copy(bias + n0, bias + n0 + valid, acc.data() + i * kQ4Tile);
  if (xsum != nullptr) {
    loops.direct(x + r0 * w.k, w.k, rows, xsum + r0 * w.blocks, w, tile, acc.data());
  } else {
    for (int64_t k0 = 0; k0 < w.k; k0 += kChunk) {
      const int64_t k1 = std::min(w.k, k0 + kChunk);
      loops.dequant(w, tile, k0, k1, buf.data());
      loops.accumulate(x + r0 * w.k + k0, w.k, rows, k1 - k0, buf.data(), acc.data());
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    std::copy(acc.data() + i * kQ4Tile, acc.data() + i * kQ4Tile + valid, y + (r0 + i) * w.n + n0);
}

}  // namespace

Q4BlockWeights pack_q4_block_weights(const Q4WeightSource& src, int64_t k, int64_t n, int64_t block) {
  Q4BlockWeights w;
  w.k = k;
  w.n = n;
  w.block = std::max<int64_t>(block, 1);
  w.blocks = k == 0 ? 0 : (k + w.block - 1) / w.block;
  w.tiles = (n + kQ4Tile - 1) / kQ4Tile;
  w.codes.assign(static_cast<size_t>(w.tiles * k * kHalf), 0);
  w.scales.assign(static_cast<size_t>(w.tiles * w.blocks * kQ4Tile), 0.f);
  w.zeros.assign(w.scales.size(), 0.f);
  // A signed code c (two's complement) shifted by 8 is c ^ 8.
  const uint8_t flip = src.is_signed ? 8 : 0;
  for (int64_t t = 0; t < w.tiles; ++t) {
    const int64_t valid = std::min(kQ4Tile, n - t * kQ4Tile);
    for (int64_t kk = 0; kk < k; ++kk) {
      uint8_t* row = w.codes.data() + static_cast<size_t>((t * k + kk) * kHalf);
      for (int64_t j = 0; j < valid; ++j) {
        const int64_t col = t * kQ4Tile + j;
        const uint8_t c = code_at(src.codes, kk * src.k_stride + col * src.n_stride) ^ flip;
        row[j % kHalf] |= static_cast<uint8_t>(j < kHalf ? c : c << 4);
      }
    }
    for (int64_t b = 0; b < w.blocks; ++b)
      for (int64_t j = 0; j < valid; ++j) {
        const int64_t col = t * kQ4Tile + j;
        const int64_t at = b * src.scale_k_stride + col * src.scale_n_stride;
        const size_t to = static_cast<size_t>((t * w.blocks + b) * kQ4Tile + j);
        w.scales[to] = src.scales[at];
        w.zeros[to] = src.zero_points != nullptr ? unsigned_zero(src.is_signed, code_at(src.zero_points, at))
                                                 : (src.is_signed ? 8.f : 0.f);
      }
  }
  return w;
}

void q4_block_gemm(const float* x, int64_t rows, const Q4BlockWeights& w, const float* bias, float* y, int threads) {
  if (rows <= 0 || w.n <= 0) return;
  if (w.k == 0) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < w.n; ++j) y[r * w.n + j] = bias != nullptr ? bias[j] : 0.f;
    return;
  }
  const Loops loops = pick();
  std::vector<float> xsum;
  if (rows <= kDirectRows) {
    xsum.assign(static_cast<size_t>(rows * w.blocks), 0.f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < w.k; ++k) xsum[static_cast<size_t>(r * w.blocks + k / w.block)] += x[r * w.k + k];
  }
  const int team = threads_for_work(2.0 * static_cast<double>(rows) * static_cast<double>(w.n * w.k), threads);
  // Work items: column tiles, each cut into row parts when there are too few tiles for the team (each
  // part dequantizes its tile again, so parts stay tall).
  int64_t parts = 1;
  if (w.tiles < 2 * team) parts = std::max<int64_t>(1, std::min<int64_t>((rows + 15) / 16, (2 * team + w.tiles - 1) / w.tiles));
  const int64_t part_rows = (rows + parts - 1) / parts;
  parts = (rows + part_rows - 1) / part_rows;
  parallel_for(w.tiles * parts, team, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t tile = i % w.tiles, part = i / w.tiles;
      const int64_t r0 = part * part_rows, r1 = std::min(rows, r0 + part_rows);
      tile_product(loops, x, r0, r1, w, tile, bias, xsum.empty() ? nullptr : xsum.data(), y);
    }
  });
  note_team_end(team);
}

}  // namespace ephost::cpu::math
