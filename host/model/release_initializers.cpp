#include <onnx/onnx_pb.h>

#include "model/loader.h"

namespace ephost {
namespace {

void release_graph(onnx::GraphProto& graph) {
  for (auto& init : *graph.mutable_initializer()) {
    init.clear_raw_data();
    init.clear_float_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_double_data();
    init.clear_uint64_data();
    init.clear_string_data();
  }
  for (auto& node : *graph.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) release_graph(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) release_graph(g);
    }
}

}  // namespace

void release_initializer_data(onnx::ModelProto& model) { release_graph(*model.mutable_graph()); }

}  // namespace ephost
