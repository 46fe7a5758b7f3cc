#include "session/unclaimed_functions.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <unordered_set>

#include "plugin_abi/handles.h"
#include "core/error.h"
#include "core/log.h"
#include "transform/function_expansion.h"

namespace ephost {

namespace {

// Bodies nest (a body's op may itself be a function nobody claims) but never deeply; more rounds than
// this means a function that reaches itself.
constexpr int kMaxRounds = 16;

using HasBody = std::function<bool(const Node&)>;

// Adds to `out` the nodes of `graph` (and its subgraphs) that have a function body (`has_body`) and
// that no provider claims.
void collect_unclaimed(const Graph& graph, const HasBody& has_body, const CapabilityQuery& query,
                       size_t provider_count, std::vector<Node*>* out) {
  std::vector<Node*> candidates;
  for (const auto& node : graph.nodes)
    if (has_body(*node)) candidates.push_back(node.get());
  if (!candidates.empty()) {
    std::unordered_set<const Node*> claimed;
    for (size_t i = 0; i < provider_count; ++i) {
      try {
        for (const auto& claim : query(i, *graph.view)) claimed.insert(claim.nodes.begin(), claim.nodes.end());
      } catch (const std::exception&) {
        // The partitioner asks again, and reports the failure there.
      }
    }
    for (Node* node : candidates)
      if (!claimed.count(node)) {
        log_info(fmt::format("no provider claimed node '{}' ({}) of graph '{}': running its function body instead",
                             node->name, node->op_type, graph.name));
        out->push_back(node);
      }
  }
  for (const auto& node : graph.nodes)
    for (const auto& sub : node->subgraphs) collect_unclaimed(*sub.second, has_body, query, provider_count, out);
}

}  // namespace

size_t expand_unclaimed_functions(Model& model, std::unique_ptr<Graph>& graph, const CapabilityQuery& query,
                                  size_t provider_count) {
  // Which nodes have a function body is function_expansion.h's to say; collect_unclaimed only asks about claims.
  const HasBody has_body = [&model](const Node& node) {
    return node.proto && has_function_body(model, *node.proto);
  };
  size_t total = 0;
  std::unique_ptr<FunctionBodies> bodies;  // made on the first round that expands: most models have none
  for (int round = 0;; ++round) {
    std::vector<Node*> unclaimed;
    collect_unclaimed(*graph, has_body, query, provider_count, &unclaimed);
    if (unclaimed.empty()) return total;
    if (round == kMaxRounds)
      fail(EPHOST_INVALID_GRAPH,
           "function expansion did not finish after {} rounds: {} node(s) still need their function bodies (does a "
           "function's body use the function itself?)",
           kMaxRounds, unclaimed.size());
    if (!bodies) bodies = std::make_unique<FunctionBodies>(model);
    total += expand_function_nodes(*bodies, *graph, unclaimed);  // in the IR, typed where spliced in
  }
}

}  // namespace ephost
