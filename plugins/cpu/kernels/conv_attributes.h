// The attributes every convolution-shaped op shares (Conv, ConvTranspose, ConvInteger, QLinearConv),
// read once from a node into math::ConvParams.
#pragma once

#include "ephost/sdk/plugin.hpp"
#include "math/conv.h"

namespace ephost::cpu {

// auto_pad, group, kernel_shape, strides, dilations, pads; with `transposed` also output_padding and
// output_shape (ConvTranspose).
inline math::ConvParams conv_attributes(const sdk::Node& node, bool transposed = false) {
  math::ConvParams p;
  p.auto_pad = node.attr_string("auto_pad", "NOTSET");
  p.group = node.attr_int("group", 1);
  p.kernel_shape = node.attr_ints("kernel_shape");
  p.strides = node.attr_ints("strides");
  p.dilations = node.attr_ints("dilations");
  p.pads = node.attr_ints("pads");
  if (transposed) {
    p.output_padding = node.attr_ints("output_padding");
    p.output_shape = node.attr_ints("output_shape");
  }
  return p;
}

}  // namespace ephost::cpu
