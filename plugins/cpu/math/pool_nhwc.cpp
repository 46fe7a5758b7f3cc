// max_pool_nhwc (pool.h): the 2-D MaxPool of int8 convolution chains on their channels-last bytes
// (fusion/qdq_conv.cpp; ResNet-50's stem pool). Each output pixel is the byte-wise maximum of the
// pixel rows of its window: one vector register per block of channels, kept in the register across
// the window and stored once, in the widest tier math/isa.h allows (AVX-512 BW: 64 bytes, AVX2: 32,
// the baseline: a loop the compiler vectorises for SSE2). The element loop this replaces read and wrote
// the output byte by byte for every window position (uint8_t stores may alias anything, so nothing
// stayed in a register and nothing was vectorised): 6% of int8 ResNet-50's time for one pool.
#include <algorithm>
#include <limits>
#include <vector>

#include "isa.h"
#include "parallel.h"
#include "pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EPHOST_POOL_X86 1
#endif

namespace ephost::cpu::math {

namespace {

// One output pixel's channels [from, C): out[c] = max over the window's `count` pixel rows taps[t] of
// taps[t][c].
template <typename T>
void pixel_max_base(const T* const* taps, int64_t count, int64_t from, int64_t C, T* __restrict out) {
  for (int64_t c = from; c < C; ++c) out[c] = std::numeric_limits<T>::lowest();
  for (int64_t t = 0; t < count; ++t) {
    const T* __restrict in = taps[t];
    for (int64_t c = from; c < C; ++c) out[c] = in[c] > out[c] ? in[c] : out[c];
  }
}

#if EPHOST_POOL_X86

template <typename T>
__attribute__((target("avx2"))) void pixel_max_avx2(const T* const* taps, int64_t count, int64_t C, T* out) {
  constexpr bool kSigned = std::numeric_limits<T>::is_signed;
  const __m256i lowest = _mm256_set1_epi8(static_cast<char>(std::numeric_limits<T>::lowest()));
  int64_t c = 0;
  for (; c + 32 <= C; c += 32) {
    __m256i m = lowest;
    for (int64_t t = 0; t < count; ++t) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps[t] + c));
      m = kSigned ? _mm256_max_epi8(m, v) : _mm256_max_epu8(m, v);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), m);
  }
  pixel_max_base(taps, count, c, C, out);
}

template <typename T>
__attribute__((target("avx512f,avx512bw"))) void pixel_max_avx512(const T* const* taps, int64_t count, int64_t C,
                                                                  T* out) {
  constexpr bool kSigned = std::numeric_limits<T>::is_signed;
  const __m512i lowest = _mm512_set1_epi8(static_cast<char>(std::numeric_limits<T>::lowest()));
  for (int64_t c = 0; c < C; c += 64) {
    const __mmask64 k = C - c >= 64 ? ~__mmask64{0} : (__mmask64{1} << (C - c)) - 1;
    __m512i m = lowest;
    for (int64_t t = 0; t < count; ++t) {
      const __m512i v = _mm512_maskz_loadu_epi8(k, taps[t] + c);
      m = kSigned ? _mm512_max_epi8(m, v) : _mm512_max_epu8(m, v);
    }
    _mm512_mask_storeu_epi8(out + c, k, m);
  }
}

#endif  // EPHOST_POOL_X86

template <typename T>
void pixel_max(const T* const* taps, int64_t count, int64_t C, T* out) {
#if EPHOST_POOL_X86
  switch (active_isa()) {
    case Isa::kAvx512: return pixel_max_avx512(taps, count, C, out);
    case Isa::kAvx2: return pixel_max_avx2(taps, count, C, out);
    case Isa::kScalar: break;
  }
#endif
  pixel_max_base(taps, count, 0, C, out);
}

// The window's kernel offsets [first, last) along one axis that land inside [0, size).
struct Taps {
  int64_t first = 0, last = 0;
};

Taps taps_inside(int64_t out, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t size) {
  Taps t{0, 0};
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t i = out * stride - pad + k * dilation;
    if (i < 0) t.first = k + 1;
    if (i < size) t.last = k + 1;
  }
  t.last = std::max(t.last, t.first);
  return t;
}

}  // namespace

template <typename T>
void max_pool_nhwc(const T* x, const PoolGeometry& g, T* y, int threads) {
  const int64_t N = g.batch, C = g.channels, H = g.in_spatial[0], W = g.in_spatial[1];
  const int64_t OH = g.out_spatial[0], OW = g.out_spatial[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1], SH = g.strides[0], SW = g.strides[1];
  const int64_t DH = g.dilations[0], DW = g.dilations[1], PH = g.pad_begin[0], PW = g.pad_begin[1];
  parallel_for(N * OH, threads, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(OW * C, 1)),
               [&](int64_t r0, int64_t r1) {
    std::vector<const T*> taps(static_cast<size_t>(std::max<int64_t>(KH * KW, 1)));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / OH, oh = r % OH;
      const Taps th = taps_inside(oh, SH, PH, DH, KH, H);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Taps tw = taps_inside(ow, SW, PW, DW, KW, W);
        int64_t count = 0;
        for (int64_t kh = th.first; kh < th.last; ++kh) {
          const int64_t ih = oh * SH - PH + kh * DH;
          for (int64_t kw = tw.first; kw < tw.last; ++kw)
            taps[static_cast<size_t>(count++)] = x + ((n * H + ih) * W + ow * SW - PW + kw * DW) * C;
        }
        pixel_max(taps.data(), count, C, y + (r * OW + ow) * C);
      }
    }
  });
}

template void max_pool_nhwc<int8_t>(const int8_t*, const PoolGeometry&, int8_t*, int);
template void max_pool_nhwc<uint8_t>(const uint8_t*, const PoolGeometry&, uint8_t*, int);

}  // namespace ephost::cpu::math
