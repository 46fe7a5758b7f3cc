#pragma once

// Which nodes a convolutional region takes (cnn_region_select.cpp), shared with the region's program
// (cnn_region_program.cpp), which refuses any node the selection would not have taken.

#include "kernel_base.h"

namespace ephost::cpu::fusion::region {

// A 4-D float value.
bool rank4(const sdk::Value& v);

// Whether `n` can run inside a region (its op, attributes and operand shapes are ones the region's
// steps implement in NHWC).
bool cnn_eligible(const sdk::Node& n);

}  // namespace ephost::cpu::fusion::region
