// Fused activations as oneDNN post-ops, and the per-thread stream fused groups execute on.
#pragma once

#if defined(EPHOST_WITH_DNNL)

#include <oneapi/dnnl/dnnl.hpp>

#include <vector>

#include "graph_match.h"

namespace ephost::cpu::fusion {

// Appends `a` to `ops` (one or two eltwise post-ops).
void append_activation(dnnl::post_ops& ops, const Activation& a);

// Whether a chain of activations can be one list of post-ops. oneDNN 2.6's brgemm kernels (brgconv,
// brg matmul) give every eltwise post-op of one algorithm the parameters of the first: Linear(1.25, 0)
// then Linear(1, -0.3) computes the first twice. So an algorithm may repeat only with equal parameters.
bool post_ops_supported(const std::vector<Activation>& acts);

}  // namespace ephost::cpu::fusion

#endif
