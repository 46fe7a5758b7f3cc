// Portable vector code without intrinsics: a vector type of eight floats (GCC/Clang vector extension;
// one AVX register, or two SSE registers on the baseline), and multiversioning of hot loops on x86-64.
#pragma once

#include <cstring>

namespace example_ep {

typedef float Vec8 __attribute__((vector_size(32)));

// Unaligned load and store (the compiler turns the memcpy into one vector move).
#define EXAMPLE_EP_LOAD8(v, p) std::memcpy(&(v), (p), sizeof(Vec8))
#define EXAMPLE_EP_STORE8(p, v) std::memcpy((p), &(v), sizeof(Vec8))

// On x86-64 a function marked with this is compiled twice, for AVX2+FMA (x86-64-v3) and for the
// baseline, and the loader picks the one the machine supports (GCC function multiversioning): one
// binary that is fast on current machines and still runs everywhere.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EXAMPLE_EP_MULTIVERSION __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define EXAMPLE_EP_MULTIVERSION
#endif

}  // namespace example_ep
