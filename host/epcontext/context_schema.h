// The EPContext operator (seed: ONNX Runtime's EPContext design): op `EPContext` in domain
// `com.microsoft`, variadic inputs and outputs, and the attributes below. The host registers the
// schema with onnx's registry, so onnx::checker validates EPContext nodes (attribute names and
// types) in the models we write and the models we load.
#pragma once

#include <cstdint>
#include <string>

namespace onnx {
class NodeProto;
class GraphProto;
}  // namespace onnx

namespace ephost::epctx {

inline constexpr const char* kOpType = "EPContext";
inline constexpr const char* kDomain = "com.microsoft";
inline constexpr int64_t kDomainVersion = 1;

// Attribute names, with the seed's meanings.
inline constexpr const char* kMainContext = "main_context";          // int, default 1
inline constexpr const char* kCacheContext = "ep_cache_context";     // string: payload or relative path
inline constexpr const char* kEmbedMode = "embed_mode";              // int, default 1
inline constexpr const char* kSdkVersion = "ep_sdk_version";         // string
inline constexpr const char* kModelFilename = "onnx_model_filename"; // string: the source model
inline constexpr const char* kHardwareArchitecture = "hardware_architecture";
inline constexpr const char* kPartitionName = "partition_name";
inline constexpr const char* kSource = "source";
inline constexpr const char* kNotes = "notes";
inline constexpr const char* kMaxSize = "max_size";                  // int, default 0

// Model metadata key prefix under which the compatibility info of each plugin is recorded, as ONNX
// Runtime 1.23 does: "ep_compatibility_info.<plugin>".
inline constexpr const char* kCompatibilityInfoPrefix = "ep_compatibility_info.";

// Registers the schema with onnx (once per process; a schema registered by someone else is kept).
void register_schema();

bool is_context_node(const onnx::NodeProto& node);
// Whether the graph (not its subgraphs) has an EPContext node.
bool has_context_nodes(const onnx::GraphProto& graph);

// Attribute getters with the schema's defaults.
int64_t int_attribute(const onnx::NodeProto& node, const char* name, int64_t fallback);
std::string string_attribute(const onnx::NodeProto& node, const char* name);

}  // namespace ephost::epctx
