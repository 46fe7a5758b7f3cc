// Fused activations as oneDNN post-ops, and the per-thread stream fused groups execute on.
#pragma once

#if defined(EPHOST_WITH_DNNL)

#include <oneapi/dnnl/dnnl.hpp>

#include "graph_match.h"

namespace ephost::cpu::fusion {

// Appends `a` to `ops` (one or two eltwise post-ops).
void append_activation(dnnl::post_ops& ops, const Activation& a);

}  // namespace ephost::cpu::fusion

#endif
