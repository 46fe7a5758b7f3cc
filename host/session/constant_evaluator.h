// Constant folding needs to run a node: this evaluator runs it on the built-in CPU plugin, through a
// one-node session (optimizations off, so folding never recurses).
#pragma once

#include "session/env.h"
#include "transform/pass.h"

namespace ephost {

NodeEvaluator make_constant_evaluator(Env& env);

}  // namespace ephost
