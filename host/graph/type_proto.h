// The way back from the IR's value types to ONNX's: what the graph editor, the IR writer, function
// expansion and the EPContext and restart models write for a value.
#pragma once

#include <onnx/onnx_pb.h>

#include "graph/graph.h"

namespace ephost {

// The ONNX type of `info` (what type_info_from_proto reads back), or false when the kind is unknown.
// A dimension without a value keeps its symbolic name where the IR has one.
bool type_proto_from_info(const TypeInfo& info, onnx::TypeProto* type);

}  // namespace ephost
