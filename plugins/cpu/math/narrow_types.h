// The element types of ONNX opsets 19 to 25 that the C++ types cannot hold: the float8 family
// (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, and the packed integers int4, uint4, int2 and
// uint2. Each element decodes exactly to a double; a double encodes with the rounding, saturation and
// NaN/Inf rules of ONNX's Cast (opsets 19 to 25). Packed types keep the first element in the least
// significant bits of a byte, as ONNX stores them.
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

// True for the types above (EphostElementType 17 to 26).
bool is_narrow_type(int32_t elem_type);
// True for int4, uint4, int2 and uint2 (integers: Cast rounds half to even and clamps to the range).
bool is_narrow_integer(int32_t elem_type);
// Elements per byte: 2 for the 4-bit types, 4 for the 2-bit types, 1 otherwise.
int elements_per_byte(int32_t elem_type);

// How a cast to float8e8m0 rounds a value between two powers of 2 (Cast-24's round_mode).
enum class E8m0Rounding { kUp, kDown, kNearest };
// "up", "down" or "nearest"; false for anything else.
bool parse_e8m0_rounding(const char* text, E8m0Rounding* out);

struct NarrowEncoding {
  // Cast's saturate (opset 19 on): out-of-range values and infinities become the largest finite
  // value instead of NaN (e4m3fn, both fnuz, e8m0) or infinity (e5m2). float4e2m1, which has neither,
  // always saturates (and a NaN becomes +6, as ONNX's reference does); the integers always clamp.
  bool saturate = true;
  E8m0Rounding e8m0_rounding = E8m0Rounding::kUp;
};

// The value of the 4-bit (or 8-bit, 2-bit) code `code` of `elem_type`, exactly.
double narrow_decode_one(int32_t elem_type, uint8_t code);
// The code of `value` in `elem_type`.
uint8_t narrow_encode_one(int32_t elem_type, double value, const NarrowEncoding& how);

// Elements [begin, begin + n) of tensor data `data` of a narrow type, as doubles.
void narrow_decode(int32_t elem_type, const void* data, int64_t begin, int64_t n, double* out);
// Writes `n` values as elements [begin, begin + n) of `data`. For packed types `begin` must be a
// multiple of elements_per_byte; the bytes it covers are overwritten whole, the bits past the last
// element of a final partial byte set to 0 (as ONNX pads). Callers writing from several threads give
// each a range that starts and ends on a byte boundary (or at the end of the tensor).
void narrow_encode(int32_t elem_type, const double* values, int64_t n, void* data, int64_t begin,
                   const NarrowEncoding& how);

// For the data-movement kernels (Transpose, Pad) and constant folding, which move packed elements as
// one code per byte: the codes of elements [0, n) of packed tensor data `data`, one per byte (for the
// 8-bit types a copy), and the inverse, which writes ONNX's layout with the bits past the last element
// of a final partial byte set to 0.
void narrow_unpack_codes(int32_t elem_type, const void* data, int64_t n, uint8_t* codes);
void narrow_pack_codes(int32_t elem_type, const uint8_t* codes, int64_t n, void* data);

// Writes `n` floats as elements [begin, begin + n) of int4, uint4, int2 or uint2 data: bit for bit what
// narrow_encode gives for the same values as doubles (NaN to 0, clamped to the type's range, rounded half
// to even), in vector loops (isa.h tiers; narrow_int_encode.cpp). `begin` must be a multiple of
// elements_per_byte; the bytes covered are overwritten whole, as narrow_encode does.
void narrow_encode_integer_f32(int32_t elem_type, const float* values, int64_t n, void* data, int64_t begin);

}  // namespace ephost::cpu::math
