// Integer arithmetic that wraps modulo 2^bits, as ONNX Runtime's and numpy's integer operators behave on
// two's-complement machines, instead of C++'s undefined signed overflow (and the promotion to int that
// makes even uint16 * uint16 overflow a signed int). For floating-point types these are the plain
// operators. Found by the edge sweep (tests/fuzz/edge_sweep.py): int64 Mul, ReduceProd and
// ReduceSumSquare overflowed under UBSan on inputs of a few bytes per element.
#pragma once

#include <type_traits>

namespace ephost::cpu::math {

template <typename T>
using WrapUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
constexpr bool kWraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
constexpr T wrapping_add(T a, T b) {
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapUnsigned<T>>(a) + static_cast<WrapUnsigned<T>>(b));
  else return a + b;
}

template <typename T>
constexpr T wrapping_sub(T a, T b) {
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapUnsigned<T>>(a) - static_cast<WrapUnsigned<T>>(b));
  else return a - b;
}

template <typename T>
constexpr T wrapping_mul(T a, T b) {
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapUnsigned<T>>(a) * static_cast<WrapUnsigned<T>>(b));
  else return a * b;
}

// -x; the most negative value stays itself, as in two's complement.
template <typename T>
constexpr T wrapping_neg(T a) {
  if constexpr (kWraps<T>) return static_cast<T>(WrapUnsigned<T>(0) - static_cast<WrapUnsigned<T>>(a));
  else return -a;
}

}  // namespace ephost::cpu::math
