// Schemas and inference pieces that several opsets share: an operator whose later version changes
// little (a new mode, new element types) is written once, parameterized by its version.
#pragma once

#include <onnx/defs/schema.h>

#include "opsets/schema_util.h"

namespace ephost::opsets {

// Pad-18 (axes input) and Pad-19 (adds the wrap mode): opset18.cpp.
onnx::OpSchema pad_schema(int since);
// Resize-18 (antialias, axes, keep_aspect_ratio_policy) and Resize-19 (half_pixel_symmetric): opset18.cpp.
onnx::OpSchema resize_schema(int since);
// A Reduce* operator with axes as an optional input (18), over `types` (20 adds bool to ReduceMax and
// ReduceMin), with an optional static function body.
onnx::OpSchema reduce_schema(int since, const char* name, const char* what, const TypeList& types, const char* body);

// Attention-23 and Attention-24 (adds nonpad_kv_seqlen): opset23.cpp.
onnx::OpSchema attention_schema(int since);
// Attention's function body (attention_body.cpp): false when the inputs' ranks are unknown.
bool attention_body(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema, onnx::FunctionProto& body);

// Output shape of a pooling operator over X [N, C, D1, ...]: kernel_shape, strides, dilations, pads,
// auto_pad and ceil_mode (a window that would start in the end padding is dropped). `op` names the
// operator in messages.
void pool_shape_inference(onnx::InferenceContext& ctx, const char* op);

}  // namespace ephost::opsets
