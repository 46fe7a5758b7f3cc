// Calls between a model's local functions (ModelProto.functions), checked before anything expands or
// infers through them: onnx's checker and shape inference, and the host's function expansion, follow
// calls recursively, so a function that calls itself (directly or through others) would overflow the
// stack, and a deep enough chain of calls too.
#pragma once

#include <onnx/onnx_pb.h>

namespace ephost {

// Deepest chain of nested model-local function calls a model may use.
inline constexpr int kMaxFunctionCallDepth = 64;

// Throws INVALID_GRAPH naming the cycle ("model-local function 'local.F' calls itself: local.F ->
// local.G -> local.F") or the chain that is deeper than kMaxFunctionCallDepth. Calls are nodes whose
// (domain, op_type) names a model-local function, in a function's body or in the graphs of its nodes'
// attributes.
void check_function_calls(const onnx::ModelProto& model);

}  // namespace ephost
