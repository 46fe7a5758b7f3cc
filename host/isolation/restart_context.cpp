#include "isolation/restart_context.h"

#include <onnx/onnx_pb.h>

#include "plugin_abi/handles.h"
#include "core/error.h"
#include "discovery/plugin_record.h"
#include "epcontext/context_schema.h"
#include "graph/type_proto.h"

namespace ephost::isolation {
namespace {

// A tensor's element type and shape (groups that cross to a provider host compute on tensors only).
void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list, const std::string& name,
               const TypeInfo& type) {
  onnx::ValueInfoProto& v = *list.Add();
  v.set_name(name);
  type_proto_from_info(type, v.mutable_type());
}

void set_attribute(onnx::NodeProto& node, const char* name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

void set_attribute(onnx::NodeProto& node, const char* name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

const std::string* attribute_of(const EphostContextSink& sink, const std::string& key) {
  for (const auto& kv : sink.attributes)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

}  // namespace

ContextSignature context_signature(const GraphView& group) {
  ContextSignature s;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    const Value* v = group.inputs[i];
    if (v->is_constant_initializer()) continue;
    s.input_indices.push_back(i);
    s.inputs.emplace_back(v->name, v->type);
  }
  for (const Value* v : group.outputs) s.outputs.emplace_back(v->name, v->type);
  return s;
}

RestartContext restart_context(const ContextSignature& signature, const std::string& fused_name,
                               const EphostContextSink& sink, const PluginRecord& record,
                               const std::vector<std::pair<std::string, int64_t>>& opsets) {
  RestartContext out;
  for (const auto& piece : sink.pieces) out.blob.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  onnx::ModelProto model;
  model.set_ir_version(8);
  for (const auto& [domain, version] : opsets) {
    if (domain == epctx::kDomain) continue;
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  auto* op = model.add_opset_import();
  op->set_domain(epctx::kDomain);
  op->set_version(epctx::kDomainVersion);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(fused_name + "_restart");
  onnx::NodeProto& node = *graph.add_node();
  node.set_op_type(epctx::kOpType);
  node.set_domain(epctx::kDomain);
  node.set_name(fused_name);
  for (const auto& [name, type] : signature.inputs) {
    node.add_input(name);
    add_value(*graph.mutable_input(), name, type);
  }
  for (const auto& [name, type] : signature.outputs) {
    node.add_output(name);
    add_value(*graph.mutable_output(), name, type);
  }
  // The attributes the session's generation writes for an embedded context (context_generation.cpp).
  set_attribute(node, epctx::kMainContext, int64_t{1});
  set_attribute(node, epctx::kEmbedMode, int64_t{1});
  set_attribute(node, epctx::kCacheContext, out.blob);
  const std::string* sdk = attribute_of(sink, epctx::kSdkVersion);
  set_attribute(node, epctx::kSdkVersion, sdk ? *sdk : record.sdk_version);
  const std::string* arch = attribute_of(sink, epctx::kHardwareArchitecture);
  set_attribute(node, epctx::kHardwareArchitecture, arch ? *arch : record.hardware_architecture);
  set_attribute(node, epctx::kPartitionName, fused_name);
  // The source the plugin gave its context (an ONNX Runtime plugin EP names its own EP), else the record's key.
  const std::string* source = attribute_of(sink, epctx::kSource);
  set_attribute(node, epctx::kSource,
                source ? *source
                       : record.context_source_keys.empty() ? record.name : record.context_source_keys.front());
  if (!model.SerializeToString(&out.model))
    fail(EPHOST_EP_FAIL, "isolated provider: the context of group '{}' cannot be serialized (over 2 GiB?)", fused_name);
  return out;
}

}  // namespace ephost::isolation
