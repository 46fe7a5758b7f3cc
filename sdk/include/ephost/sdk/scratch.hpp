// ephost plugin SDK — a kernel's working buffers (im2col columns, widened weights, accumulators),
// bounded as the host bounds values.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
//
// Why: the host refuses to allocate one value larger than EPHOST_TENSOR_BYTES_LIMIT (when set), so
// that a model asking for a terabyte gets a clear error instead of an allocator that gives up in its
// own way (or an OOM kill after overcommit). A working buffer is not a value, and a model can make it
// far larger than every value it touches: ConvInteger with 0 output channels and pads of 2^40 has an
// empty output but a 33 TB im2col buffer (found by fuzz_model). Allocate buffers whose size a model
// controls with scratch_vector: it applies the same limit, checks the size arithmetic, and turns
// every failure into an Error that names the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

// The largest buffer, in bytes, that one value or working buffer may take: the environment variable
// EPHOST_TENSOR_BYTES_LIMIT, read once per plugin library (0 or unset: no limit). The host reads the
// same variable for the values it allocates.
inline uint64_t buffer_bytes_limit() {
  static const uint64_t limit = [] {
    const char* v = std::getenv("EPHOST_TENSOR_BYTES_LIMIT");
    return v ? static_cast<uint64_t>(std::strtoull(v, nullptr, 10)) : uint64_t{0};
  }();
  return limit;
}

namespace detail {

template <typename Factors>
std::string scratch_extent(const Factors& factors, size_t element_bytes) {
  std::string s;
  for (int64_t f : factors) s += (s.empty() ? "" : " x ") + std::to_string(f);
  return s + " values of " + std::to_string(element_bytes) + " bytes";
}

}  // namespace detail

// The byte size of a working buffer of the product of `factors` elements of `element_bytes` each.
// `factors` is any range of int64_t (a braced list, a shape). Fails with EPHOST_INVALID_ARGUMENT on a
// negative factor and with EPHOST_FAIL ("out of memory: ...", naming `what`) when the product
// overflows or exceeds `limit` (0: none). `what` names the buffer for the message ("the im2col
// buffer"). A factor of 0 makes an empty buffer, whatever the others.
template <typename Factors>
size_t scratch_bytes(const Factors& factors, size_t element_bytes, const char* what,
                     uint64_t limit = buffer_bytes_limit()) {
  uint64_t bytes = element_bytes;
  bool overflow = false;
  for (int64_t f : factors) {
    if (f < 0) fail(EPHOST_INVALID_ARGUMENT, std::string(what) + " has a negative size (" +
                                                 detail::scratch_extent(factors, element_bytes) + ")");
    if (f != 0 && bytes > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(f)) overflow = true;
    else bytes *= static_cast<uint64_t>(f);
  }
  for (int64_t f : factors)
    if (f == 0) return 0;
  if (overflow || bytes > std::numeric_limits<size_t>::max() / 2)
    fail(EPHOST_FAIL, "out of memory: " + std::string(what) + " (" + detail::scratch_extent(factors, element_bytes) +
                          ") is larger than any memory");
  if (limit && bytes > limit)
    fail(EPHOST_FAIL, "out of memory: " + std::string(what) + " of " + std::to_string(bytes) + " bytes (" +
                          detail::scratch_extent(factors, element_bytes) + ") exceeds EPHOST_TENSOR_BYTES_LIMIT (" +
                          std::to_string(limit) + " bytes)");
  return static_cast<size_t>(bytes);
}

// A value-initialised std::vector of the product of `factors` T's, for a kernel's working buffer,
// after scratch_bytes' checks; an allocation failure is an Error (EPHOST_FAIL) naming `what` and the
// size rather than a bare std::bad_alloc. The vector is the caller's, freed as usual.
template <typename T, typename Factors>
std::vector<T> scratch_vector(const Factors& factors, const char* what) {
  const size_t bytes = scratch_bytes(factors, sizeof(T), what);
  try {
    return std::vector<T>(bytes / sizeof(T));
  } catch (const std::bad_alloc&) {
    fail(EPHOST_FAIL, "out of memory: could not allocate " + std::string(what) + " of " + std::to_string(bytes) +
                          " bytes");
  }
}

// The same two, for a braced list of factors: scratch_vector<int16_t>({k, n}, "the im2col buffer").
inline size_t scratch_bytes(std::initializer_list<int64_t> factors, size_t element_bytes, const char* what,
                            uint64_t limit = buffer_bytes_limit()) {
  return scratch_bytes<std::initializer_list<int64_t>>(factors, element_bytes, what, limit);
}
template <typename T>
std::vector<T> scratch_vector(std::initializer_list<int64_t> factors, const char* what) {
  return scratch_vector<T, std::initializer_list<int64_t>>(factors, what);
}

}  // namespace ephost::sdk
