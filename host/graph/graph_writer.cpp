#include "graph/graph_writer.h"

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "graph/graph_editor.h"
#include "model/tensor_proto.h"

namespace ephost {

void write_graph_proto(const Graph& graph, onnx::GraphProto* out) {
  out->Clear();
  out->set_name(graph.name);
  if (graph.proto) {
    if (graph.proto->has_doc_string()) out->set_doc_string(graph.proto->doc_string());
    *out->mutable_input() = graph.proto->input();
    *out->mutable_output() = graph.proto->output();
    *out->mutable_quantization_annotation() = graph.proto->quantization_annotation();
  }
  // A precomputed value that became an initializer after partitioning keeps its producer: written as
  // what the node makes, so that every name is defined once (the model as loaded).
  for (const Value* v : graph.initializers)
    if (!v->producer) {
      v->initializer->ensure_data();
      tensor_to_proto(*v->initializer, v->name, out->add_initializer());
    }
  for (const auto& node : graph.nodes) {
    onnx::NodeProto& copy = *out->add_node();
    if (node->proto) copy = *node->proto;
    copy.set_name(node->name);
    for (auto& a : *copy.mutable_attribute())
      if (a.has_g())
        if (const Graph* sub = node->subgraph(a.name())) write_graph_proto(*sub, a.mutable_g());
    for (const Value* o : node->outputs) {
      if (!o || o->is_graph_output) continue;
      onnx::TypeProto type;
      if (!type_proto_from_info(o->type, &type)) continue;
      onnx::ValueInfoProto& vi = *out->add_value_info();
      vi.set_name(o->name);
      *vi.mutable_type() = std::move(type);
    }
  }
}

void write_model_proto(const Graph& main, onnx::ModelProto* out) {
  if (!main.model || !main.model->proto)
    fail(EPHOST_INVALID_ARGUMENT, "write_model_proto: graph '{}' was not built from a model", main.name);
  const onnx::ModelProto& source = *main.model->proto;
  out->Clear();
  // Every field but the graph, which the IR supersedes (copying it only to overwrite it would be waste).
  out->set_ir_version(source.ir_version());
  *out->mutable_opset_import() = source.opset_import();
  if (source.has_producer_name()) out->set_producer_name(source.producer_name());
  if (source.has_producer_version()) out->set_producer_version(source.producer_version());
  if (source.has_domain()) out->set_domain(source.domain());
  if (source.has_model_version()) out->set_model_version(source.model_version());
  if (source.has_doc_string()) out->set_doc_string(source.doc_string());
  *out->mutable_metadata_props() = source.metadata_props();
  *out->mutable_training_info() = source.training_info();
  *out->mutable_functions() = source.functions();
  write_graph_proto(main, out->mutable_graph());
}

}  // namespace ephost
