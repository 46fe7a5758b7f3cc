// Registration of opset 27's recurrent-state operators (the short convolution and the linear attention
// of Gated DeltaNet / Mamba style models), called by kernel_registry.cpp like the functions declared in
// kernel_registry.h.
#pragma once

#include "kernel_registry.h"

namespace ephost::cpu {

void register_causal_conv_with_state_kernels(KernelRegistry& r);
void register_linear_attention_kernels(KernelRegistry& r);

}  // namespace ephost::cpu
