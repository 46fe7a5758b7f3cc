// Constants a kernel or a pattern can see beyond its own graph's initializers.
//
// The host folds constants, in subgraphs too (host/transform/constant_folding.cpp), and hands a QDQ
// model's dequantized weights as constants while keeping their DequantizeLinear for fusion; the plugin
// folds nothing itself. What it must resolve is scope: a body's references to the enclosing graph's
// initializers are outer-scope values, not constants of the body. constant_of() follows them through
// the parent node's implicit inputs (an LSTM inside an If reading its weights from the main graph).
#pragma once

#include "kernel_base.h"

namespace ephost::cpu {

// v's value when it is constant: a constant of its graph (an initializer, or a value the host
// precomputed), or a constant of an enclosing graph that v refers to (outer scope). An absent tensor
// (present() == false) otherwise.
sdk::Tensor constant_of(const sdk::Value& v);
// Whether constant_of(v) would find a constant, without reading its data: the host computes a
// precomputed value (a QDQ model's dequantized weight) when its data is first read, and a pattern that
// only asks must not make a float copy of weights an int8 group will fuse.
bool is_constant(const sdk::Value& v);

}  // namespace ephost::cpu
