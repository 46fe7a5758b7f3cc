// Counter-based random numbers for the random ops (RandomUniform/Normal(Like), Bernoulli,
// Multinomial, training Dropout).
//
// Value i of a draw is a function of the draw's 64-bit key and i only (the SplitMix64 sequence of the
// key, read at position i), so a tensor fills in parallel and gives the same values on any number of
// threads. A kernel derives one key per run from its seed and a run counter: a session seeded alike
// reproduces the same sequence of runs, and each run draws fresh values.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>

namespace ephost::cpu::math {

// SplitMix64's output function: a bijective 64-bit mixer with full avalanche.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform01(uint64_t key, uint64_t i) {
  return static_cast<double>(mix64(key + (i + 1) * 0x9e3779b97f4a7c15ull) >> 11) * 0x1.0p-53;
}

// Standard normal by Box-Muller: elements 2p and 2p + 1 are the cosine and sine halves of pair p.
inline double normal01(uint64_t key, uint64_t i) {
  const uint64_t pair = i / 2;
  const double u1 = 1.0 - uniform01(key, 2 * pair);  // (0, 1]: log is finite
  const double u2 = uniform01(key, 2 * pair + 1);
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 6.283185307179586 * u2;
  return (i & 1) ? r * std::sin(angle) : r * std::cos(angle);
}

// One key per run: from the op's `seed` attribute when it has one (so that runs are reproducible;
// `seed` is the attribute's bits, a float's or an int's), otherwise from the system's entropy source.
// Thread-safe.
class RandomKeys {
 public:
  RandomKeys(bool has_seed, uint64_t seed) {
    if (has_seed) {
      base_ = mix64(seed);
    } else {
      std::random_device rd;
      base_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    }
  }
  uint64_t next() { return mix64(base_ ^ mix64(runs_.fetch_add(1, std::memory_order_relaxed))); }

 private:
  uint64_t base_ = 0;
  std::atomic<uint64_t> runs_{0};
};

}  // namespace ephost::cpu::math
