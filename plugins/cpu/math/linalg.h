// Small dense linear algebra on row-major square matrices.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace ephost::cpu::math {

// det(A) of an n x n matrix by LU decomposition with partial pivoting (O(n^3), stable where the
// cofactor expansion is neither), accumulated in double. `work` holds n * n doubles afterwards.
template <typename T>
double determinant(const T* a, int64_t n, std::vector<double>& work) {
  work.assign(a, a + n * n);
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(work[i * n + k]) > std::abs(work[pivot * n + k])) pivot = i;
    const double p = work[pivot * n + k];
    if (p == 0.0) return 0.0;  // singular: a whole column below the diagonal is zero
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(work[k * n + j], work[pivot * n + j]);
      det = -det;
    }
    det *= p;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = work[i * n + k] / p;
      if (f == 0.0) continue;
      double* row = &work[i * n];
      const double* prow = &work[k * n];
      for (int64_t j = k + 1; j < n; ++j) row[j] -= f * prow[j];
    }
  }
  return det;
}

}  // namespace ephost::cpu::math
