// Spatial geometry of a window op (conv, pooling) padded to 3 dims with leading size-1 dims, so 1-D,
// 2-D and 3-D ops share one loop nest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ephost::cpu::math {

struct Spatial3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};

// G: any geometry with in_spatial, out_spatial, kernel, strides, dilations, pad_begin, pad_end.
template <typename G>
Spatial3 to_spatial3(const G& g) {
  Spatial3 r;
  const size_t k = g.in_spatial.size(), off = 3 - k;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= off;
    const size_t j = i - off;
    r.in[i] = real ? g.in_spatial[j] : 1;
    r.out[i] = real ? g.out_spatial[j] : 1;
    r.k[i] = real ? g.kernel[j] : 1;
    r.s[i] = real ? g.strides[j] : 1;
    r.d[i] = real ? g.dilations[j] : 1;
    r.pb[i] = real ? g.pad_begin[j] : 0;
    r.pe[i] = real ? g.pad_end[j] : 0;
  }
  return r;
}

}  // namespace ephost::cpu::math
