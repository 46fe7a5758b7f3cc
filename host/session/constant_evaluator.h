// Constant folding needs to run a node: this evaluator runs it on the built-in CPU plugin, through a
// one-node session (optimizations off, so folding never recurses).
#pragma once

#include "core/run_control.h"
#include "env/env.h"
#include "transform/pass.h"

namespace ephost {

// The kernels it runs stop at `deadline` (session.compile_timeout_ms of the session being created),
// (copied: the evaluator may outlive it). `env` must outlive the evaluator.
NodeEvaluator make_constant_evaluator(Env& env, const CreationDeadline& deadline = {});

}  // namespace ephost
