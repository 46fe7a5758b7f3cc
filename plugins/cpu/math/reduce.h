// Reductions over any set of axes (ReduceSum/Mean/Max/...), and ArgMax/ArgMin over one axis.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel.h"
#include "shape.h"

namespace ephost::cpu::math {

// x's dims merged into alternating runs of kept / reduced axes (size-1 dims dropped), which is all a
// reduction loop needs to know.
struct ReducePlan {
  struct Group {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Group> kept;     // outer kept runs (the innermost kept run may be `lanes` instead)
  std::vector<Group> reduced;  // reduced runs, outermost first
  int64_t lanes = 1;           // size of the innermost run when it is kept (contiguous output lanes)
  int64_t outputs = 1;         // numel of the result
  int64_t count = 1;           // elements reduced into each output
};

// `axes` normalised (0 <= a < rank), duplicates allowed.
ReducePlan plan_reduce(const Shape& x, const std::vector<int64_t>& axes);

// Output shape: reduced axes become 1 (keepdims) or disappear.
Shape reduce_shape(const Shape& x, const std::vector<int64_t>& axes, bool keepdims);

// y[o] = finish(fold(init, x over the reduced positions of o), count).
template <typename T, typename Acc, typename O, typename Step, typename Finish>
void reduce(const T* x, const ReducePlan& p, O* y, Acc init, Step step, Finish finish, int threads) {
  if (p.outputs == 0) return;
  const int64_t lanes = p.lanes;
  const int64_t outer = p.outputs / lanes;
  const size_t nk = p.kept.size(), nr = p.reduced.size();
  const int64_t inner_red = nr ? p.reduced.back().size : 1;
  const int64_t inner_stride = nr ? p.reduced.back().stride : 0;
  const int64_t red_rows = p.count == 0 ? 0 : nr ? p.count / inner_red : 1;
  const int64_t work = std::max<int64_t>(p.count * lanes, 1);
  parallel_for(outer, threads, std::max<int64_t>(1, kElementwiseGrain / work), [&](int64_t o0, int64_t o1) {
    std::vector<Acc> acc(lanes);
    std::vector<int64_t> idx(nr ? nr - 1 : 0);
    for (int64_t o = o0; o < o1; ++o) {
      int64_t rem = o, base = 0;
      for (size_t d = nk; d-- > 0;) {
        base += (rem % p.kept[d].size) * p.kept[d].stride;
        rem /= p.kept[d].size;
      }
      std::fill(acc.begin(), acc.end(), init);
      std::fill(idx.begin(), idx.end(), 0);
      int64_t roff = 0;
      for (int64_t rr = 0; rr < red_rows; ++rr) {
        const T* px = x + base + roff;
        if (lanes == 1) {
          Acc a = acc[0];
          for (int64_t j = 0; j < inner_red; ++j) a = step(a, px[j * inner_stride]);
          acc[0] = a;
        } else {
          for (int64_t j = 0; j < inner_red; ++j) {
            const T* q = px + j * inner_stride;
            for (int64_t l = 0; l < lanes; ++l) acc[l] = step(acc[l], q[l]);
          }
        }
        for (size_t d = idx.size(); d-- > 0;) {
          roff += p.reduced[d].stride;
          if (++idx[d] < p.reduced[d].size) break;
          roff -= p.reduced[d].stride * p.reduced[d].size;
          idx[d] = 0;
        }
      }
      for (int64_t l = 0; l < lanes; ++l) y[o * lanes + l] = finish(acc[l], p.count);
    }
  });
}

// Index of the max (or min) along the middle dim of x viewed as [outer, n, inner].
template <typename T>
void arg_reduce(const T* x, int64_t outer, int64_t n, int64_t inner, bool is_max, bool select_last, int64_t* y,
                int threads) {
  parallel_for(outer, threads, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* px = x + o * n * inner + i;
        int64_t best = 0;
        T bv = px[0];
        for (int64_t j = 1; j < n; ++j) {
          const T v = px[j * inner];
          const bool better = is_max ? (select_last ? v >= bv : v > bv) : (select_last ? v <= bv : v < bv);
          if (better) {
            bv = v;
            best = j;
          }
        }
        y[o * inner + i] = best;
      }
  });
}

}  // namespace ephost::cpu::math
