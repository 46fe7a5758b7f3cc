// Shape helpers shared by the pure math (no SDK types here, so the math can be unit-tested alone).
// Math functions report bad arguments by throwing std::invalid_argument; the op wrappers prefix the
// message with the op and node name.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ephost::cpu::math {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline int64_t numel(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

// Row-major element strides.
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

inline std::string to_string(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

[[noreturn]] inline void invalid(const std::string& what) { throw std::invalid_argument(what); }

// Maps a possibly negative axis into [0, rank); throws when out of range.
inline int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis") {
  if (axis < -rank || axis >= rank)
    invalid(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// A floating-point value as an int64 in [lo, hi], clamped before the cast: casting NaN, an infinity or
// a value beyond int64 is undefined behaviour. NaN becomes lo. For coordinates and counts computed from
// values a model supplies (rois, grids, scales, frequencies), which may be anything.
inline int64_t clamp_to_int64(double v, int64_t lo, int64_t hi) {
  if (!(v > static_cast<double>(lo))) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);
}

}  // namespace ephost::cpu::math
