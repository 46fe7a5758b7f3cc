// Floats to float8 codes (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) in vector loops: the encoder behind Cast
// from float, bit for bit what narrow_encode gives through double (round half to even; NaN, infinities,
// values past the largest finite one and signed zeros as Cast-19's table says, saturate or not).
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

// True for the four float8 types float8_encode_f32 takes.
bool is_float8_type(int32_t elem_type);
// Writes the codes of values[0, n) as elements [begin, begin + n) of `data` (one byte per element).
void float8_encode_f32(int32_t elem_type, const float* values, int64_t n, bool saturate, void* data, int64_t begin);

}  // namespace ephost::cpu::math
