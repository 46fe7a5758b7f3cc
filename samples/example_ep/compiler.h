// Translates a fused group into a program (program.h). The group's nodes passed capability's
// unsupported_reason, so every node has a translation; anything else is an internal error.
#pragma once

#include "ephost/sdk/plugin.hpp"
#include "program.h"

namespace example_ep {

// Program inputs are the group's boundary inputs that are not constant initializers, in the group's
// input order; constant initializers the nodes read are copied in as weights (or folded into op
// parameters: Reshape's shape, Clip's bounds, BatchNormalization's statistics); program outputs are
// the group's outputs, in order.
Program compile_group(const ephost::sdk::Graph& group);

}  // namespace example_ep
