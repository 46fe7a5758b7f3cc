// Packing 3x3 convolution weights into oneDNN's Winograd layouts, fast enough for session creation.
//
// oneDNN's own reorder into these layouts transforms each 16 output channels of each input channel
// as a separate task with scalar loops and two temporaries the size of the result: on ResNet-50 it
// was about 70% of session creation. Here the transform U = G w G^T is computed per input channel
// over all output channels at once and written straight into the layout the description names
// (wino_desc: the format, the transform size alpha and the channel blocking). The values equal
// oneDNN's reorder bit for bit (same products and sums in the same order); tests check that. The
// int8 layout (aaOIoi) is left to oneDNN's reorder.
#pragma once

#include <cstddef>
#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

#include "../math/dnnl_util.h"

namespace ephost::cpu::fusion {

// Buffers reused by every weight packing of one plan (grown as needed, freed with the object).
class PackBuffers {
 public:
  float* floats(int slot, size_t count);

 private:
  struct Block {
    std::unique_ptr<float[]> data;
    size_t count = 0;
  };
  Block blocks_[2];
};

// True when `want` is one of oneDNN's Winograd weight layouts.
bool is_winograd_layout(const dnnl::memory::desc& want);

// Packs OIHW float weights w [oc, ic, 3, 3] (each output channel scaled by mul[o] when mul is not
// null) into `want`, a float Winograd layout. Throws dnnl::error where oneDNN refuses.
math::WeightsMemory pack_winograd_weights(const float* w, const float* mul, int64_t oc, int64_t ic,
                                          const dnnl::memory::desc& want, PackBuffers& buffers);

// The same through oneDNN's reorder (the reference the tests compare with).
math::WeightsMemory pack_winograd_weights_dnnl(const float* w, int64_t oc, int64_t ic,
                                               const dnnl::memory::desc& want);

}  // namespace ephost::cpu::fusion
