// Exact integer matrix products for the quantized ops (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv).
//
// Operands are int16 with their zero points already subtracted: any uint8/int8 value minus a zero
// point of the same type lies in [-255, 255], so every product and every int32 sum is exact (ONNX
// defines these ops to accumulate in int32). oneDNN's int8 GEMMs do not fit: they have no u8 x u8
// form, and on CPUs without VNNI their u8 x s8 kernels may saturate intermediate 16-bit sums.
#pragma once

#include <cstdint>

#include "shape.h"

namespace ephost::cpu::math {

// y[m * ldy + n] = sum_k a[m * lda + k] * b[k * ldb + n] for m < M, n < N (y is overwritten).
void gemm_s16_s32(int64_t M, int64_t N, int64_t K, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                  int32_t* y, int64_t ldy, int threads);

}  // namespace ephost::cpu::math
