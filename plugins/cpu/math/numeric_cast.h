// Conversions between the numeric element types that are defined for every value, for Cast and for
// constant folding (which must give what a run gives).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace ephost::cpu::math {

// Float to integer. A C++ cast of NaN or of a value outside the target's range is undefined behaviour
// (UBSan's float-cast-overflow) and ONNX leaves the result unspecified, so this follows numpy's astype,
// which ONNX's reference Cast uses: truncate toward zero into int64, then take that modulo a narrower
// type (-1.0 to uint8 is 255). NaN gives 0; values beyond int64 (infinities too) saturate at the
// target's own bounds, and uint64 keeps [2^63, 2^64).
template <typename D, typename S>
inline D float_to_integer(S s) {
  static_assert(std::is_floating_point_v<S> && std::is_integral_v<D> && !std::is_same_v<D, bool>);
  if (s != s) return D(0);
  if (s <= S(-9223372036854775808.0)) return std::numeric_limits<D>::min();
  if constexpr (std::is_same_v<D, uint64_t>) {
    if (s >= S(18446744073709551616.0)) return std::numeric_limits<D>::max();
    if (s >= S(9223372036854775808.0)) return static_cast<uint64_t>(s);
  } else {
    if (s >= S(9223372036854775808.0)) return std::numeric_limits<D>::max();
  }
  return static_cast<D>(static_cast<int64_t>(s));
}

// static_cast, except float to integer (float_to_integer) and anything to bool (nonzero, NaN included).
template <typename D, typename S>
inline D numeric_cast(S s) {
  if constexpr (std::is_same_v<D, bool>) return s != S(0);
  else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) return float_to_integer<D>(s);
  else return static_cast<D>(s);
}

}  // namespace ephost::cpu::math
