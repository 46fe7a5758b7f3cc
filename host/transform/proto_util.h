// Helpers for working on GraphProtos (internal to host/transform and the EPContext fallback).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_set>

namespace ephost {
namespace transform_detail {

inline bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Names that `g` (and its subgraphs) reads but does not define itself: its outer-scope reads.
void collect_outer_reads(const onnx::GraphProto& g, std::unordered_set<std::string>* out);

}  // namespace transform_detail
}  // namespace ephost
