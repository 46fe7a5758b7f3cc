#include "partition/precomputed_steps.h"

#include <fmt/format.h>

#include <optional>

#include "core/log.h"
#include "graph/graph.h"
#include "graph/graph_editor.h"

namespace ephost {

namespace {

// A step that runs one node whose read outputs are all precomputed (at least one).
bool computes_only_precomputed(const PartitionGroup& group) {
  if (group.fused || group.preloaded || group.nodes.size() != 1) return false;
  bool precomputed = false;
  for (const Value* out : group.nodes.front()->outputs) {
    if (!out) continue;
    if (out->is_graph_output) return false;
    if (out->precomputed) {
      precomputed = true;
    } else if (!out->consumers.empty()) {
      return false;
    }
  }
  return precomputed;
}

// Every precomputed output of `node` already became an initializer (an earlier partitioning did it).
bool outputs_are_initializers(const Node& node) {
  for (const Value* out : node.outputs)
    if (out && out->precomputed && !out->initializer) return false;
  return true;
}

}  // namespace

size_t drop_precomputed_steps(Graph& main, std::vector<GraphPartition>& partitions) {
  std::optional<GraphEditor> editor;  // made at the first edit: a plan made again finds the IR frozen
  size_t dropped = 0;
  for (GraphPartition& partition : partitions) {
    std::vector<PartitionGroup> kept;
    kept.reserve(partition.groups.size());
    for (PartitionGroup& group : partition.groups) {
      if (!computes_only_precomputed(group)) {
        kept.push_back(std::move(group));
        continue;
      }
      // The partition holds the node read-only; it belongs to `main`'s IR, which is still editable
      // unless a plan made again after a provider fell back finds its outputs initializers already.
      Node& node = const_cast<Node&>(*group.nodes.front());
      if (!outputs_are_initializers(node)) {
        try {
          if (!editor) editor.emplace(main);
          editor->keep_precomputed_as_initializers(node);
        } catch (const std::exception& e) {
          // Its values could not be computed: the node runs, as any other.
          log_verbose(fmt::format("partition: {} node '{}' runs: its precomputed outputs failed: {}", node.op_type,
                                  node.name, e.what()));
          kept.push_back(std::move(group));
          continue;
        }
      }
      if (log_level() <= EPHOST_LOG_VERBOSE)
        log_verbose(fmt::format("partition: {} node '{}' runs in no step: its outputs were precomputed",
                                node.op_type, node.name));
      ++dropped;
    }
    partition.groups = std::move(kept);
  }
  if (editor) editor->commit();
  return dropped;
}

}  // namespace ephost
