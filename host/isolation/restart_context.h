// What a restarted provider host loads instead of compiling a group again (isolated_provider.h): the
// context the plugin emitted for the group (context_emit, when the session generated an EPContext
// cache), as a one-node EPContext model, the form a ctx model with an embedded context gives it
// (embed_mode 1, the plugin's bytes as a raw context). The group's constant initializers are the
// plugin's own inside the context: the node reads the group's other inputs only, as a ctx model's
// node does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

struct EphostContextSink;

namespace ephost {
struct PluginRecord;
}

namespace ephost::isolation {

// A fused group's inputs and outputs as its EPContext node has them: the inputs that are no constant
// initializer (with their index among the group's inputs), and every output.
struct ContextSignature {
  std::vector<size_t> input_indices;
  std::vector<std::pair<std::string, TypeInfo>> inputs, outputs;
};
ContextSignature context_signature(const GraphView& group);

struct RestartContext {
  std::string model;  // a serialized ModelProto: one EPContext node named after the group
  std::string blob;   // what context_load is handed: the emitted pieces, concatenated
};

// The context of group `fused_name` as `sink` holds it (emitted by `record`'s plugin), for a provider
// host process to load. `opsets`: the source model's opset imports (domain, version).
RestartContext restart_context(const ContextSignature& signature, const std::string& fused_name,
                               const EphostContextSink& sink, const PluginRecord& record,
                               const std::vector<std::pair<std::string, int64_t>>& opsets);

}  // namespace ephost::isolation
