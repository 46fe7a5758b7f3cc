#include "transpose.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "parallel.h"

namespace ephost::cpu::math {

Shape transpose_shape(const Shape& in, std::vector<int64_t>* perm) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (perm->empty())
    for (int64_t i = r - 1; i >= 0; --i) perm->push_back(i);
  if (static_cast<int64_t>(perm->size()) != r)
    invalid("perm " + to_string(*perm) + " does not have one entry per input axis (rank " + std::to_string(r) + ")");
  std::vector<bool> seen(r, false);
  Shape out(r);
  for (int64_t i = 0; i < r; ++i) {
    int64_t p = (*perm)[i];
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[p]) invalid("perm " + to_string(*perm) + " is not a permutation");
    seen[p] = true;
    (*perm)[i] = p;
    out[i] = in[p];
  }
  return out;
}

namespace {

#if defined(__SSE2__)
// r[i] is row i of a 16x16 byte block; on return r[j] is its column j. Four rounds of interleaving rows
// i and i + 8 into rows 2i and 2i + 1: each round rotates the 8-bit (row, column) index by one bit.
inline void transpose_16x16(__m128i r[16]) {
  for (int round = 0; round < 4; ++round) {
    __m128i t[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
}
#endif

}  // namespace

void transpose_2d_bytes(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, int64_t rows,
                        int64_t cols) {
#if defined(__SSE2__)
  const uint8_t* __restrict s = src;
  uint8_t* __restrict d = dst;
  const int64_t ss = src_stride, ds = dst_stride, R = rows, C = cols;
  for (int64_t r0 = 0; r0 < R; r0 += 16) {
    const int64_t nr = R - r0 < 16 ? R - r0 : 16;
    for (int64_t c0 = 0; c0 < C; c0 += 16) {
      const int64_t nc = C - c0 < 16 ? C - c0 : 16;
      __m128i t[16];
      if (nr == 16 && nc == 16) {
        for (int i = 0; i < 16; ++i) t[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + (r0 + i) * ss + c0));
        transpose_16x16(t);
        for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (c0 + j) * ds + r0), t[j]);
        continue;
      }
      alignas(16) uint8_t block[16][16] = {};
      for (int64_t i = 0; i < nr; ++i) std::memcpy(block[i], s + (r0 + i) * ss + c0, static_cast<size_t>(nc));
      for (int i = 0; i < 16; ++i) t[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(block[i]));
      transpose_16x16(t);
      for (int j = 0; j < 16; ++j) _mm_store_si128(reinterpret_cast<__m128i*>(block[j]), t[j]);
      for (int64_t j = 0; j < nc; ++j) std::memcpy(d + (c0 + j) * ds + r0, block[j], static_cast<size_t>(nr));
    }
  }
#else
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * dst_stride + r] = src[r * src_stride + c];
#endif
}

namespace {

template <typename T>
void transpose_typed(const T* x, const Shape& dims, const Shape& in_strides, T* y, int threads) {
  // dims: output dims (merged); in_strides: stride in x of each output dim.
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1], s_in = in_strides[r - 1];
  const int64_t rows = numel(dims) / inner;
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> idx(r, 0);
    int64_t rem = r0, off = 0;
    for (size_t d = r - 1; d-- > 0;) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      off += idx[d] * in_strides[d];
    }
    for (int64_t row = r0; row < r1; ++row) {
      T* yr = y + row * inner;
      const T* xr = x + off;
      if (s_in == 1) {
        std::memcpy(yr, xr, sizeof(T) * inner);
      } else {
        for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i * s_in];
      }
      for (size_t d = r - 1; d-- > 0;) {
        off += in_strides[d];
        if (++idx[d] < dims[d]) break;
        off -= in_strides[d] * dims[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace

void transpose(const void* x, const Shape& in, const std::vector<int64_t>& perm, void* y, size_t elem_size,
               int threads) {
  const int64_t n = numel(in);
  if (n == 0) return;
  const Shape st = strides_of(in);
  // Output dims with their input strides, dropping size-1 dims and merging runs that stay adjacent.
  Shape dims, strides;
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t d = in[perm[i]], s = st[perm[i]];
    if (d == 1) continue;
    if (!dims.empty() && strides.back() == s * d) {
      dims.back() *= d;
      strides.back() = s;
    } else {
      dims.push_back(d);
      strides.push_back(s);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back(1);
  }
  switch (elem_size) {
    case 1: return transpose_typed(static_cast<const uint8_t*>(x), dims, strides, static_cast<uint8_t*>(y), threads);
    case 2: return transpose_typed(static_cast<const uint16_t*>(x), dims, strides, static_cast<uint16_t*>(y), threads);
    case 4: return transpose_typed(static_cast<const uint32_t*>(x), dims, strides, static_cast<uint32_t*>(y), threads);
    case 8: return transpose_typed(static_cast<const uint64_t*>(x), dims, strides, static_cast<uint64_t*>(y), threads);
    default: invalid("unsupported element size " + std::to_string(elem_size));
  }
}

}  // namespace ephost::cpu::math
