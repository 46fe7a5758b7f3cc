// Numpy-style broadcasting: shape rules plus a loop driver that collapses the broadcast pattern into
// the longest possible contiguous inner loop, so that the common cases (same shape, scalar, per-channel
// [1,C,1,1], trailing-dims) all reduce to one tight vectorisable loop per row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel.h"
#include "shape.h"
#include "vec.h"

namespace ephost::cpu::math {

// The numpy result shape; throws std::invalid_argument when the shapes do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
// True when `from` broadcasts to exactly `to` (unidirectional, as for PRelu, Gemm's C or Expand).
bool broadcasts_to(const Shape& from, const Shape& to);

// The output dims with size-1 dims dropped and neighbours merged when every input stays contiguous
// across them, plus each input's element stride per merged dim (0 where it is broadcast).
struct BroadcastPlan {
  Shape dims;                                 // never empty: a scalar output has dims {1}
  std::vector<std::vector<int64_t>> strides;  // [input][dim]
  int64_t inner() const { return dims.back(); }
  int64_t rows() const { return numel(dims) / dims.back(); }
};
BroadcastPlan plan_broadcast(const std::vector<Shape>& inputs, const Shape& out);

// Walks the rows (all merged dims but the last) of a plan, keeping each input's offset.
class RowCursor {
 public:
  RowCursor(const BroadcastPlan& plan, int64_t row);
  int64_t offset(size_t input) const { return offsets_[input]; }
  void next();

 private:
  const BroadcastPlan& plan_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// out[i] = f(a[ia], b[ib]) over the broadcast of a's and b's shapes (out_shape must be that shape).
template <typename A, typename B, typename O, typename F>
void broadcast_binary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, O* out,
                      const Shape& out_shape, int threads, F f) {
  const int64_t n = numel(out_shape);
  if (n == 0) return;
  const int64_t na = numel(a_shape), nb = numel(b_shape);
  if (na == n && nb == n) {
    parallel_for(n, threads, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) out[i] = f(a[i], b[i]);
    });
    return;
  }
  if (na == n && nb == 1) {
    const B s = b[0];
    parallel_for(n, threads, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) out[i] = f(a[i], s);
    });
    return;
  }
  if (na == 1 && nb == n) {
    const A s = a[0];
    parallel_for(n, threads, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) out[i] = f(s, b[i]);
    });
    return;
  }
  const BroadcastPlan plan = plan_broadcast({a_shape, b_shape}, out_shape);
  const int64_t inner = plan.inner(), rows = plan.rows();
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back();
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    RowCursor cur(plan, r0);
    for (int64_t r = r0; r < r1; ++r, cur.next()) {
      const A* pa = a + cur.offset(0);
      const B* pb = b + cur.offset(1);
      O* po = out + r * inner;
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i], pb[i]);
      } else if (sa == 1 && sb == 0) {
        const B s = pb[0];
        for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i], s);
      } else if (sa == 0 && sb == 1) {
        const A s = pa[0];
        for (int64_t i = 0; i < inner; ++i) po[i] = f(s, pb[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i * sa], pb[i * sb]);
      }
    }
  });
}

// broadcast_binary for float Add/Sub/Mul/Div, with the row loops in math/vec.h (AVX2 where the CPU
// has it) and no per-call allocation for the common rank-2 plans ([N,C,H,W] op [1,C,1,1]).
void broadcast_arith_f32(BinOp op, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape,
                         float* out, const Shape& out_shape, int threads);

// out[i] = f(a[ia], b[ib], c[ic]) (Where, Clip with tensor bounds).
template <typename A, typename B, typename C, typename O, typename F>
void broadcast_ternary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, const C* c,
                       const Shape& c_shape, O* out, const Shape& out_shape, int threads, F f) {
  const int64_t n = numel(out_shape);
  if (n == 0) return;
  const BroadcastPlan plan = plan_broadcast({a_shape, b_shape, c_shape}, out_shape);
  const int64_t inner = plan.inner(), rows = plan.rows();
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back(), sc = plan.strides[2].back();
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    RowCursor cur(plan, r0);
    for (int64_t r = r0; r < r1; ++r, cur.next()) {
      const A* pa = a + cur.offset(0);
      const B* pb = b + cur.offset(1);
      const C* pc = c + cur.offset(2);
      O* po = out + r * inner;
      if (sa == 1 && sb == 1 && sc == 1) {
        for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i], pb[i], pc[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) po[i] = f(pa[i * sa], pb[i * sb], pc[i * sc]);
      }
    }
  });
}

// Copies `in` (shape in_shape, elements of elem_size bytes) broadcast to out_shape (Expand).
void broadcast_copy(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, size_t elem_size,
                    int threads);

}  // namespace ephost::cpu::math
