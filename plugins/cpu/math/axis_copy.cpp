#include "axis_copy.h"

#include <algorithm>
#include <cstring>

#include "parallel.h"
#include "shape.h"

namespace ephost::cpu::math {

namespace {

// Rows of at least this many bytes per thread before a copy is split across threads.
constexpr int64_t kCopyGrainBytes = 1 << 18;

// One strided copy: row o of `dst` (stride dst_row) := row o of `src` (stride src_row), `row` bytes each.
void copy_rows(const char* src, int64_t src_row, char* dst, int64_t dst_row, int64_t outer, int64_t row,
               int threads) {
  if (outer <= 0 || row <= 0) return;
  if (src_row == row && dst_row == row) {  // contiguous on both sides: one block
    std::memcpy(dst, src, static_cast<size_t>(outer * row));
    return;
  }
  parallel_for(outer, threads, std::max<int64_t>(1, kCopyGrainBytes / row), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) std::memcpy(dst + o * dst_row, src + o * src_row, static_cast<size_t>(row));
  });
}

}  // namespace

void copy_into_axis_range(const void* part, void* whole, int64_t outer, int64_t extent, int64_t start,
                          int64_t length, int64_t inner_bytes, int threads) {
  if (start < 0 || length < 0 || start + length > extent) invalid("axis range out of bounds");
  copy_rows(static_cast<const char*>(part), length * inner_bytes,
            static_cast<char*>(whole) + start * inner_bytes, extent * inner_bytes, outer, length * inner_bytes,
            threads);
}

void copy_from_axis_range(const void* whole, void* part, int64_t outer, int64_t extent, int64_t start,
                          int64_t length, int64_t inner_bytes, int threads) {
  if (start < 0 || length < 0 || start + length > extent) invalid("axis range out of bounds");
  copy_rows(static_cast<const char*>(whole) + start * inner_bytes, extent * inner_bytes, static_cast<char*>(part),
            length * inner_bytes, outer, length * inner_bytes, threads);
}

}  // namespace ephost::cpu::math
