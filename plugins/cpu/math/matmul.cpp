#include "matmul.h"

#include <algorithm>

#include "broadcast.h"

namespace ephost::cpu::math {

Shape matmul_output_shape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    invalid("inputs must have rank >= 1, found shapes " + to_string(a) + " and " + to_string(b));
  const Shape A = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape B = b.size() == 1 ? Shape{b[0], 1} : b;
  if (A.back() != B[B.size() - 2])
    invalid("inner dimensions differ: " + to_string(a) + " x " + to_string(b));
  Shape out = broadcast_shapes(Shape(A.begin(), A.end() - 2), Shape(B.begin(), B.end() - 2));
  if (a.size() > 1) out.push_back(A[A.size() - 2]);
  if (b.size() > 1) out.push_back(B.back());
  return out;
}

Shape gemm_output_shape(const GemmParams& p, const Shape& a, const Shape& b) {
  if (a.size() != 2 || b.size() != 2)
    invalid("A and B must be 2-D, found shapes " + to_string(a) + " and " + to_string(b));
  const int64_t M = p.trans_a ? a[1] : a[0], Ka = p.trans_a ? a[0] : a[1];
  const int64_t Kb = p.trans_b ? b[1] : b[0], N = p.trans_b ? b[0] : b[1];
  if (Ka != Kb)
    invalid("inner dimensions differ: A " + to_string(a) + (p.trans_a ? " (transposed)" : "") + ", B " +
            to_string(b) + (p.trans_b ? " (transposed)" : ""));
  return {M, N};
}

}  // namespace ephost::cpu::math
