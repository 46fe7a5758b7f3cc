#include "vec.h"

#include "denormals.h"
#include "fast_math.h"
#include "isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace ephost::cpu::math {

namespace {

// The loop bodies, instantiated below once per ISA. Everything is force-inlined into the
// ISA-specific entry points so that the vectoriser sees them with that entry point's target.
#define EPHOST_VEC_INLINE inline __attribute__((always_inline))

template <typename F>
EPHOST_VEC_INLINE void binary_loop(const float* a, bool av, const float* b, bool bv, float* o, int64_t n, F f) {
  if (av && bv) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (av) {
    const float s = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], s);
  } else {
    const float s = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(s, b[i]);
  }
}

EPHOST_VEC_INLINE void binary_body(BinOp op, const float* a, bool av, const float* b, bool bv, float* o, int64_t n) {
  switch (op) {
    case BinOp::kAdd: return binary_loop(a, av, b, bv, o, n, [](float x, float y) { return x + y; });
    case BinOp::kSub: return binary_loop(a, av, b, bv, o, n, [](float x, float y) { return x - y; });
    case BinOp::kMul: return binary_loop(a, av, b, bv, o, n, [](float x, float y) { return x * y; });
    case BinOp::kDiv: return binary_loop(a, av, b, bv, o, n, [](float x, float y) { return x / y; });
  }
}

EPHOST_VEC_INLINE void clip_body(const float* x, float lo, float hi, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
  }
}

EPHOST_VEC_INLINE void hard_sigmoid_body(const float* x, float alpha, float beta, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = alpha * x[i] + beta;
    y[i] = v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
  }
}

EPHOST_VEC_INLINE void hard_swish_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] * (1.0f / 6.0f) + 0.5f;
    y[i] = x[i] * (v < 0.f ? 0.f : (v > 1.f ? 1.f : v));
  }
}

EPHOST_VEC_INLINE void relu_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

EPHOST_VEC_INLINE void sigmoid_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_sigmoid(x[i]);
}

EPHOST_VEC_INLINE void tanh_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_tanh(x[i]);
}

EPHOST_VEC_INLINE void linear_body(const float* x, float a, float b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

EPHOST_VEC_INLINE void swish_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * fast_sigmoid(x[i]);
}

EPHOST_VEC_INLINE void erf_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_erf(x[i]);
}

EPHOST_VEC_INLINE void gelu_erf_body(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_gelu_erf(x[i]);
}

EPHOST_VEC_INLINE void layer_norm_body(const float* x, float* y, int64_t n, const float* g, const float* b,
                                       float eps) {
  float acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += x[i + j];
  for (; i < n; ++i) acc[i & 15] += x[i];
  double total = 0;
  for (int j = 0; j < 16; ++j) total += acc[j];
  const float mean = static_cast<float>(total / static_cast<double>(n));
  for (float& a : acc) a = 0.f;
  for (i = 0; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) {
      const float d = x[i + j] - mean;
      acc[j] += d * d;
    }
  for (; i < n; ++i) {
    const float d = x[i] - mean;
    acc[i & 15] += d * d;
  }
  total = 0;
  for (int j = 0; j < 16; ++j) total += acc[j];
  const float var = static_cast<float>(total / static_cast<double>(n));
  const float inv = 1.f / __builtin_sqrtf(var + eps);
  if (g && b) {
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * g[i] + b[i];
  } else if (g) {
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * g[i];
  } else {
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv;
  }
}

EPHOST_VEC_INLINE void softmax_row_body(const float* x, float scale, const float* mask, float* y, int64_t n) {
  if (n <= 0) return;
  // y = x * scale + mask, then its maximum with 16 independent lanes.
  if (mask)
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale + mask[i];
  else
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
  float mx[16];
  for (float& m : mx) m = -__builtin_inff();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) mx[j] = mx[j] < y[i + j] ? y[i + j] : mx[j];
  for (; i < n; ++i) mx[0] = mx[0] < y[i] ? y[i] : mx[0];
  float m = mx[0];
  for (int j = 1; j < 16; ++j) m = m < mx[j] ? mx[j] : m;
  for (i = 0; i < n; ++i) y[i] = fast_exp(y[i] - m);
  float acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (i = 0; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += y[i + j];
  for (; i < n; ++i) acc[i & 15] += y[i];
  double total = 0;
  for (int j = 0; j < 16; ++j) total += acc[j];
  const float inv = static_cast<float>(1.0 / total);
  for (i = 0; i < n; ++i) y[i] *= inv;
}

// 16 float lanes per block of 4096 (two independent AVX2 accumulators), blocks added in double.
// The lane structure is fixed, so the result does not depend on the ISA the loop runs on.
EPHOST_VEC_INLINE double sum_body(const float* x, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += 4096) {
    const int64_t e = b + 4096 < n ? b + 4096 : n;
    float acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = b;
    for (; i + 16 <= e; i += 16)
      for (int j = 0; j < 16; ++j) acc[j] += x[i + j];
    for (; i < e; ++i) acc[i & 15] += x[i];
    float s8[8];
    for (int j = 0; j < 8; ++j) s8[j] = acc[j] + acc[j + 8];
    for (int j = 0; j < 8; ++j) total += s8[j];
  }
  return total;
}

struct Table {
  void (*binary)(BinOp, const float*, bool, const float*, bool, float*, int64_t);
  void (*clip)(const float*, float, float, float*, int64_t);
  void (*hard_sigmoid)(const float*, float, float, float*, int64_t);
  void (*hard_swish)(const float*, float*, int64_t);
  void (*relu)(const float*, float*, int64_t);
  void (*sigmoid)(const float*, float*, int64_t);
  void (*tanh)(const float*, float*, int64_t);
  void (*linear)(const float*, float, float, float*, int64_t);
  void (*swish)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*gelu_erf)(const float*, float*, int64_t);
  void (*layer_norm)(const float*, float*, int64_t, const float*, const float*, float);
  void (*softmax_row)(const float*, float, const float*, float*, int64_t);
  double (*sum)(const float*, int64_t);
};

#define EPHOST_VEC_DEFINE(NS, TARGET)                                                                     \
  namespace NS {                                                                                          \
  TARGET void binary(BinOp op, const float* a, bool av, const float* b, bool bv, float* o, int64_t n) {   \
    binary_body(op, a, av, b, bv, o, n);                                                                  \
  }                                                                                                       \
  TARGET void clip(const float* x, float lo, float hi, float* y, int64_t n) { clip_body(x, lo, hi, y, n); } \
  TARGET void hard_sigmoid(const float* x, float a, float b, float* y, int64_t n) {                       \
    hard_sigmoid_body(x, a, b, y, n);                                                                     \
  }                                                                                                       \
  TARGET void hard_swish(const float* x, float* y, int64_t n) { hard_swish_body(x, y, n); }               \
  TARGET void relu(const float* x, float* y, int64_t n) { relu_body(x, y, n); }                           \
  TARGET void sigmoid(const float* x, float* y, int64_t n) { sigmoid_body(x, y, n); }                     \
  TARGET void tanh(const float* x, float* y, int64_t n) { tanh_body(x, y, n); }                           \
  TARGET void linear(const float* x, float a, float b, float* y, int64_t n) { linear_body(x, a, b, y, n); } \
  TARGET void swish(const float* x, float* y, int64_t n) { swish_body(x, y, n); }                         \
  TARGET void erf(const float* x, float* y, int64_t n) { erf_body(x, y, n); }                             \
  TARGET void gelu_erf(const float* x, float* y, int64_t n) { gelu_erf_body(x, y, n); }                   \
  TARGET void layer_norm(const float* x, float* y, int64_t n, const float* g, const float* b, float eps) { \
    layer_norm_body(x, y, n, g, b, eps);                                                                  \
  }                                                                                                       \
  TARGET void softmax_row(const float* x, float s, const float* m, float* y, int64_t n) {                 \
    softmax_row_body(x, s, m, y, n);                                                                      \
  }                                                                                                       \
  TARGET double sum(const float* x, int64_t n) { return sum_body(x, n); }                                 \
  constexpr Table table{binary, clip, hard_sigmoid, hard_swish, relu, sigmoid, tanh, linear, swish, erf, gelu_erf, layer_norm, softmax_row, sum};          \
  }

EPHOST_VEC_DEFINE(base, )
#if defined(__x86_64__) && defined(__GNUC__)
// "avx2" only: no FMA, so a*x+b stays two rounded operations as in the baseline build.
EPHOST_VEC_DEFINE(avx2, __attribute__((target("avx2"))))
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2 with FMA (the AVX2 tier requires both, math/isa.cpp) for sigmoid and SiLU, written out as the
// AVX-512 ones below: 1.5-1.8 times faster than GCC's vectorisation of fast_sigmoid (a rounding without
// a float-int round trip, FMAs, no integer floor), and no longer at the mercy of the vectoriser, which
// once left these loops scalar on AVX2 (SiLU was then 70% of EfficientNet's time).
#define EPHOST_VEC256 __attribute__((target("avx2,fma")))
namespace avx2fma {

// e^x as exp16 below (Cephes' range reduction, degree-6 Taylor polynomial), with 2^n built in the
// exponent field in two halves: n reaches 128 at the top of the range, where one 2^n would overflow.
EPHOST_VEC256 inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3365447504019f)), _mm256_set1_ps(88.3762626647949f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.f / 720.f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 120.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 24.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 6.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// 1 / (1 + e^-x), divided exactly; 0 below x = -88.38 as fast_sigmoid and sigmoid16.
EPHOST_VEC256 inline __m256 sigmoid8(__m256 x) {
  const __m256 d = _mm256_add_ps(_mm256_set1_ps(1.f), exp8(_mm256_sub_ps(_mm256_setzero_ps(), x)));
  const __m256 s = _mm256_div_ps(_mm256_set1_ps(1.f), d);
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-88.3762626647949f), _CMP_LT_OQ);
  return _mm256_andnot_ps(tiny, s);
}

template <typename F>
EPHOST_VEC256 inline void map8(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = i; k < n; ++k) buf[k - i] = x[k];
    _mm256_store_ps(buf, f(_mm256_load_ps(buf)));
    for (int64_t k = i; k < n; ++k) y[k] = buf[k - i];
  }
}

EPHOST_VEC256 void sigmoid(const float* x, float* y, int64_t n) {
  map8(x, y, n, [](__m256 v) EPHOST_VEC256 { return sigmoid8(v); });
}
EPHOST_VEC256 void swish(const float* x, float* y, int64_t n) {
  map8(x, y, n, [](__m256 v) EPHOST_VEC256 { return _mm256_mul_ps(v, sigmoid8(v)); });
}
}  // namespace avx2fma

// The AVX2 tier: the loops compiled for AVX2, with the written-out sigmoid and SiLU.
constexpr Table avx2_table = [] {
  Table t = avx2::table;
  t.sigmoid = avx2fma::sigmoid;
  t.swish = avx2fma::swish;
  return t;
}();
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// AVX-512 with FMA for the transcendental loops (exp, erf, tanh) and the row reductions, whose
// results no test or fused group needs bit-identical to a scalar expression (both the node kernels
// and the fused groups call these same entries). The exact elementwise loops stay on AVX2.
#if defined(__clang__)
// clang has no prefer-vector-width in target() (it would ignore the whole attribute and refuse the
// intrinsics); min_vector_width is its way of saying the same.
#define EPHOST_VEC512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma"), min_vector_width(512)))
#else
#define EPHOST_VEC512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma,prefer-vector-width=512")))
#endif
namespace avx512 {

// e^x for x in [-87.3, 88.3] (clamped), as Cephes: n = round(x / ln 2), r = x - n ln 2 in two FMAs,
// e^r by its degree-6 Taylor polynomial (|r| <= ln 2 / 2: error below 2e-7), times 2^n by vscalefps.
EPHOST_VEC512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3365447504019f)), _mm512_set1_ps(88.3762626647949f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.f / 720.f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(p, n);
}

// 1 / (1 + e^-x): the reciprocal from vrcp14ps and one Newton step (relative error ~2^-28); 0 below
// x = -88.3, where the true value is under the smallest normal float.
EPHOST_VEC512 inline __m512 sigmoid16(__m512 x) {
  const __m512 d = _mm512_add_ps(_mm512_set1_ps(1.f), exp16(_mm512_sub_ps(_mm512_setzero_ps(), x)));
  const __m512 r0 = _mm512_rcp14_ps(d);
  const __m512 r = _mm512_mul_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(2.f)));
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-88.3762626647949f), _CMP_LT_OQ);
  return _mm512_mask_mov_ps(r, tiny, _mm512_setzero_ps());
}

template <typename F>
EPHOST_VEC512 inline void map16(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

EPHOST_VEC512 void sigmoid(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) EPHOST_VEC512 { return sigmoid16(v); });
}
EPHOST_VEC512 void swish(const float* x, float* y, int64_t n) {
  map16(x, y, n, [](__m512 v) EPHOST_VEC512 { return _mm512_mul_ps(v, sigmoid16(v)); });
}
EPHOST_VEC512 void tanh(const float* x, float* y, int64_t n) { tanh_body(x, y, n); }
EPHOST_VEC512 void erf(const float* x, float* y, int64_t n) { erf_body(x, y, n); }
EPHOST_VEC512 void gelu_erf(const float* x, float* y, int64_t n) { gelu_erf_body(x, y, n); }
EPHOST_VEC512 void layer_norm(const float* x, float* y, int64_t n, const float* g, const float* b, float eps) {
  layer_norm_body(x, y, n, g, b, eps);
}
EPHOST_VEC512 void softmax_row(const float* x, float s, const float* m, float* y, int64_t n) {
  if (n <= 0) return;
  const __m512 scale = _mm512_set1_ps(s);
  __m512 mx = _mm512_set1_ps(-__builtin_inff());
  int64_t i = 0;
  auto load = [&](int64_t k, __mmask16 mask) EPHOST_VEC512 {
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + k), scale);
    if (m) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, m + k));
    return v;
  };
  for (; i + 16 <= n; i += 16) {
    const __m512 v = load(i, 0xFFFF);
    _mm512_storeu_ps(y + i, v);
    mx = _mm512_max_ps(mx, v);
  }
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
  if (i < n) {
    const __m512 v = load(i, tail);
    _mm512_mask_storeu_ps(y + i, tail, v);
    mx = _mm512_mask_max_ps(mx, tail, mx, v);
  }
  const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 acc = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(y + i), vmax));
    _mm512_storeu_ps(y + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (i < n) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, y + i), vmax));
    _mm512_mask_storeu_ps(y + i, tail, e);
    acc = _mm512_mask_add_ps(acc, tail, acc, e);
  }
  const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / static_cast<double>(_mm512_reduce_add_ps(acc))));
  for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
  if (i < n) _mm512_mask_storeu_ps(y + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + i), inv));
}
}  // namespace avx512
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2's table with the AVX-512 transcendental loops and row reductions.
constexpr Table avx512_table = [] {
  Table t = avx2_table;
  t.sigmoid = avx512::sigmoid;
  t.tanh = avx512::tanh;
  t.swish = avx512::swish;
  t.erf = avx512::erf;
  t.gelu_erf = avx512::gelu_erf;
  t.layer_norm = avx512::layer_norm;
  t.softmax_row = avx512::softmax_row;
  return t;
}();
#endif

// Read on every call (one relaxed load), so that a cap set by a test or EPHOST_CPU_ISA takes effect.
const Table& table() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (active_isa()) {
    case Isa::kAvx512: return avx512_table;
    case Isa::kAvx2: return avx2_table;
    case Isa::kScalar: break;
  }
#endif
  return base::table;
}

}  // namespace

void binary_f32(BinOp op, const float* a, bool a_vec, const float* b, bool b_vec, float* o, int64_t n) {
  table().binary(op, a, a_vec, b, b_vec, o, n);
}
void clip_f32(const float* x, float lo, float hi, float* y, int64_t n) { table().clip(x, lo, hi, y, n); }
void hard_sigmoid_f32(const float* x, float alpha, float beta, float* y, int64_t n) {
  table().hard_sigmoid(x, alpha, beta, y, n);
}
void hard_swish_f32(const float* x, float* y, int64_t n) { table().hard_swish(x, y, n); }
void relu_f32(const float* x, float* y, int64_t n) { table().relu(x, y, n); }
void sigmoid_f32(const float* x, float* y, int64_t n) { table().sigmoid(x, y, n); }
void tanh_f32(const float* x, float* y, int64_t n) { table().tanh(x, y, n); }
void linear_f32(const float* x, float a, float b, float* y, int64_t n) { table().linear(x, a, b, y, n); }
void swish_f32(const float* x, float* y, int64_t n) { table().swish(x, y, n); }
void erf_f32(const float* x, float* y, int64_t n) { table().erf(x, y, n); }
void gelu_erf_f32(const float* x, float* y, int64_t n) { table().gelu_erf(x, y, n); }
void layer_norm_f32(const float* x, float* y, int64_t n, const float* gamma, const float* beta, float eps) {
  table().layer_norm(x, y, n, gamma, beta, eps);
}
void softmax_row_f32(const float* x, float scale, const float* mask, float* y, int64_t n) {
  const DenormalsFlushed flushed;  // masked-out scores would otherwise make every later step slow
  table().softmax_row(x, scale, mask, y, n);
}
double sum_f32(const float* x, int64_t n) { return table().sum(x, n); }

}  // namespace ephost::cpu::math
