// ephost_cpu_clock: the clock a core of this machine really runs at, and the f32 FMAs per cycle it
// sustains with AVX2 and with AVX-512, as one JSON line, for benchmarks/cpu_peak.py (the peak behind
// model_bench.py's share-of-peak columns). In a VM /proc/cpuinfo reports the nominal (TSC) frequency,
// while the core boosts above it; the measurement is what the runtimes' kernels get.
//
//   ephost_cpu_clock
//   {"ghz": 3.7, "fma_per_cycle_avx2": 16.0, "fma_per_cycle_avx512": 16.0, "u8s8_per_cycle_vnni512": 64.0}
//
// The clock: a chain of dependent integer adds retires one add per cycle on every x86-64 core, so adds
// per second of the thread's CPU time are cycles per second (CPU time leaves out the time other jobs
// held the core). FMAs per cycle: twelve independent chains of vfmadd (AVX2 or AVX-512),
// enough to cover the FMA latency on two pipes; u8*s8 products per cycle: the same with AVX-512 VNNI's
// vpdpbusd (4 products per 32-bit lane). Each figure is the best of several repetitions. The
// AVX2 and AVX-512 loops are chosen at run time (target attributes, CPUID), never at build time; a
// path the CPU lacks is reported as null.
#include <immintrin.h>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr int kRepetitions = 7;

// Seconds for `iterations` x 100 dependent adds (the best of kRepetitions).
double add_chain_seconds(long iterations) {
  double best = 1e30;
  for (int r = 0; r < kRepetitions; ++r) {
    uint64_t x = 0;
    const double t0 = thread_seconds();
    for (long i = 0; i < iterations; ++i) asm volatile(".rept 100\n\taddq $1, %0\n\t.endr" : "+r"(x));
    best = std::min(best, thread_seconds() - t0);
  }
  return best;
}

// Seconds for one call of `kernel` (the best of kRepetitions); the kernel's result goes to a volatile.
volatile float sink;
double best_seconds(float (*kernel)(long), long iterations) {
  double best = 1e30;
  for (int r = 0; r < kRepetitions; ++r) {
    const double t0 = thread_seconds();
    sink = kernel(iterations);
    best = std::min(best, thread_seconds() - t0);
  }
  return best;
}

// Twelve independent accumulators in registers (an array would go through memory every iteration).
#define EPHOST_FMA_CHAINS(T, SET1, FMA, ADD, REG, INIT, B, C)                                        \
  T a0 = SET1(INIT), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, \
    a10 = a0, a11 = a0;                                                                            \
  const T b = SET1(B), c = SET1(C);                                                                \
  for (long i = 0; i < iterations; ++i) {                                                          \
    a0 = FMA(a0, b, c), a1 = FMA(a1, b, c), a2 = FMA(a2, b, c), a3 = FMA(a3, b, c);                \
    a4 = FMA(a4, b, c), a5 = FMA(a5, b, c), a6 = FMA(a6, b, c), a7 = FMA(a7, b, c);                \
    a8 = FMA(a8, b, c), a9 = FMA(a9, b, c), a10 = FMA(a10, b, c), a11 = FMA(a11, b, c);            \
    asm volatile("" : "+" REG(a0), "+" REG(a1), "+" REG(a2), "+" REG(a3), "+" REG(a4), "+" REG(a5),  \
                 "+" REG(a6), "+" REG(a7), "+" REG(a8), "+" REG(a9), "+" REG(a10), "+" REG(a11));  \
  }                                                                                                \
  T s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                         \
  s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)))

// `iterations` x 12 chains of 8-lane FMAs.
__attribute__((target("avx2,fma"))) float avx2_fma(long iterations) {
  EPHOST_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, "x", 1.0f, 0.9999f, 0.0001f);
  return _mm256_cvtss_f32(s);
}

// `iterations` x 12 chains of 16-lane FMAs.
__attribute__((target("avx512f"))) float avx512_fma(long iterations) {
  EPHOST_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, "v", 1.0f, 0.9999f, 0.0001f);
  return _mm512_cvtss_f32(s);
}

// `iterations` x 12 chains of vpdpbusd on 16 lanes (4 u8*s8 products per lane): the int8 peak.
// (acc, b, c) -> acc + b.c, as the FMA's argument order reads.
__attribute__((target("avx512f,avx512vnni"))) inline __m512i dpbusd(__m512i acc, __m512i b, __m512i c) {
  return _mm512_dpbusd_epi32(acc, b, c);
}
__attribute__((target("avx512f,avx512vnni"))) float avx512_vnni(long iterations) {
  EPHOST_FMA_CHAINS(__m512i, _mm512_set1_epi32, dpbusd, _mm512_add_epi32, "v", 0, 0x01010101, 0x01010101);
  alignas(64) int32_t lanes[16];  // (a store: GCC 12's lane-extract intrinsics warn from its own headers)
  _mm512_store_si512(lanes, s);
  return static_cast<float>(lanes[0]);
}

#undef EPHOST_FMA_CHAINS

}  // namespace

int main() {
  __builtin_cpu_init();
  const long add_iterations = 2'000'000;  // 2e8 adds: about 60 ms at 3 GHz
  const double hz = static_cast<double>(add_iterations) * 100.0 / add_chain_seconds(add_iterations);
  std::printf("{\"ghz\": %.3f", hz / 1e9);
  const long fma_iterations = 10'000'000;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    const double fmas = static_cast<double>(fma_iterations) * 12 * 8;
    std::printf(", \"fma_per_cycle_avx2\": %.2f", fmas / best_seconds(avx2_fma, fma_iterations) / hz);
  } else {
    std::printf(", \"fma_per_cycle_avx2\": null");
  }
  if (__builtin_cpu_supports("avx512f")) {
    const double fmas = static_cast<double>(fma_iterations) * 12 * 16;
    std::printf(", \"fma_per_cycle_avx512\": %.2f", fmas / best_seconds(avx512_fma, fma_iterations) / hz);
  } else {
    std::printf(", \"fma_per_cycle_avx512\": null");
  }
  if (__builtin_cpu_supports("avx512vnni")) {
    const double products = static_cast<double>(fma_iterations) * 12 * 16 * 4;
    std::printf(", \"u8s8_per_cycle_vnni512\": %.2f", products / best_seconds(avx512_vnni, fma_iterations) / hz);
  } else {
    std::printf(", \"u8s8_per_cycle_vnni512\": null");
  }
  std::printf("}\n");
  return 0;
}
