// IEEE half <-> float conversion (round to nearest even), for Cast: the public ephost/ephost_half.h's,
// under the names the kernels use.
#pragma once

#include <cstdint>

#include "ephost/ephost_half.h"

namespace ephost::cpu::math {

inline float half_to_float(uint16_t h) { return EphostFloat16ToFloat(h); }
inline uint16_t float_to_half(float f) { return EphostFloatToFloat16(f); }

}  // namespace ephost::cpu::math
