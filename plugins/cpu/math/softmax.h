// Softmax / LogSoftmax over the middle dim of x viewed as [outer, n, inner].
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

void softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, bool log, int threads);

}  // namespace ephost::cpu::math
