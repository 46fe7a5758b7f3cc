#include "epcontext/context_schema.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <mutex>

#include "core/log.h"

namespace ephost::epctx {

void register_schema() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
      if (!domains.Map().count(kDomain)) domains.AddDomainToVersion(kDomain, 1, 1);
      if (onnx::OpSchemaRegistry::Schema(kOpType, 1, kDomain)) return;
      onnx::OpSchema schema(kOpType, __FILE__, __LINE__);
      schema.SetDomain(kDomain)
          .SinceVersion(1)
          .SetDoc("A partition compiled by an execution provider, cached as that provider's context "
                  "(ONNX Runtime's EPContext design).")
          .Attr(kMainContext,
                "1: this node holds (or points at) the context with its graph; 0: its graph is in the context of "
                "another node with main_context=1",
                onnx::AttributeProto::INT, static_cast<int64_t>(1))
          .Attr(kCacheContext, "embed_mode=1: the context payload; embed_mode=0: the context file, relative to the model",
                onnx::AttributeProto::STRING, std::string())
          .Attr(kEmbedMode, "1: ep_cache_context holds the payload; 0: it holds a file path",
                onnx::AttributeProto::INT, static_cast<int64_t>(1))
          .Attr(kSdkVersion, "SDK version the context was generated with", onnx::AttributeProto::STRING,
                std::string())
          .Attr(kModelFilename, "file name of the source ONNX model", onnx::AttributeProto::STRING, std::string())
          .Attr(kHardwareArchitecture, "hardware architecture the context was compiled for",
                onnx::AttributeProto::STRING, std::string())
          .Attr(kPartitionName, "name of the partition (the graph inside the context)", onnx::AttributeProto::STRING,
                std::string())
          .Attr(kSource, "key of the execution provider that generated the node", onnx::AttributeProto::STRING,
                std::string())
          .Attr(kNotes, "provider-specific information", onnx::AttributeProto::STRING, std::string())
          .Attr(kMaxSize, "maximum size in the context, provider-specific", onnx::AttributeProto::INT,
                static_cast<int64_t>(0))
          .Input(0, "inputs", "the partition's inputs", "T", onnx::OpSchema::Variadic, false, 0)
          .Output(0, "outputs", "the partition's outputs", "T", onnx::OpSchema::Variadic, false, 1)
          .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "any tensor type");
      onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
    } catch (const std::exception& e) {
      // Without the schema onnx::checker still accepts the node (unknown domain); say why it is weaker.
      log_warning(std::string("could not register the EPContext schema with onnx: ") + e.what());
    }
  });
}

bool is_context_node(const onnx::NodeProto& node) { return node.op_type() == kOpType && node.domain() == kDomain; }

bool has_context_nodes(const onnx::GraphProto& graph) {
  for (const auto& n : graph.node())
    if (is_context_node(n)) return true;
  return false;
}

int64_t int_attribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

std::string string_attribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.s();
  return "";
}

}  // namespace ephost::epctx
