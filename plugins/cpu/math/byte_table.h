// y[i] = table[x[i]]: a 256-entry byte table applied to a byte array (the int8 activations that
// fusion/qdq_unary.cpp turns into tables). On AVX-512 processors with VBMI, 64 bytes at a time with
// two vpermi2b (each looks up 64 bytes in 128 table bytes) and a select on the index's top bit;
// elsewhere the element loop (no narrower vector form beats one load per byte).
#pragma once

#include <cstdint>

namespace ephost::cpu::math {

// x and y may be the same array (an in-place lookup).
void lookup_bytes(const uint8_t table[256], const uint8_t* x, uint8_t* y, int64_t n);

// Whether lookup_bytes takes its VBMI path in this process (the AVX-512 tier is active and the
// processor has AVX-512 VBMI); tests use it to say which path they checked.
bool lookup_bytes_uses_vbmi();

}  // namespace ephost::cpu::math
