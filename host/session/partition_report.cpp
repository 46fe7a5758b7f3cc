// The partition report: which provider runs each node (of every graph, subgraphs included), the
// fused groups, every claim that was refused or trimmed with its reason, and what happened to each
// EPContext node (loaded, or rejected with INVALID_GRAPH and its reason, and the fallback).
#include <nlohmann/json.hpp>

#include "discovery/plugin_registry.h"
#include "session/session.h"

namespace ephost {

std::string Session::partition_report_json() const {
  using nlohmann::json;
  json report;
  json providers = json::array();
  for (const auto& p : providers_.instances)
    providers.push_back({{"name", p->name()}, {"path", p->record().path}, {"version", p->record().version}});
  report["providers"] = providers;
  json graphs = json::array();
  std::map<std::string, size_t> counts;
  // Main graph first, then subgraphs in the order the executors map yields them (sorted by name).
  std::vector<const GraphExecutor*> ordered;
  ordered.push_back(&main_executor());
  std::vector<const GraphExecutor*> subs;
  for (const auto& [g, ex] : executors_)
    if (g != graph_.get()) subs.push_back(ex.get());
  std::sort(subs.begin(), subs.end(), [](const GraphExecutor* a, const GraphExecutor* b) {
    return a->graph().name < b->graph().name;
  });
  ordered.insert(ordered.end(), subs.begin(), subs.end());
  for (const GraphExecutor* ex : ordered) {
    const GraphPartition& part = ex->partition();
    json jg;
    jg["graph"] = ex->graph().name;
    jg["parent_node"] = ex->graph().parent_node ? json(ex->graph().parent_node->name) : json(nullptr);
    json nodes = json::array();
    for (const auto& step : ex->steps()) {
      const auto& group_nodes = step->fused ? step->view->nodes : std::vector<const Node*>{step->node};
      for (const Node* n : group_nodes) {
        nodes.push_back({{"node", n->name},
                         {"op_type", n->op_type},
                         {"provider", step->provider->name()},
                         {"fused_group", step->fused ? json(step->name) : json(nullptr)}});
        counts[step->provider->name()]++;
      }
    }
    jg["nodes"] = nodes;
    json notes = json::array();
    for (const PartitionNote& note : part.notes)
      notes.push_back({{"provider", providers_.names[note.provider]},
                       {"nodes", note.nodes},
                       {"reason", note.reason},
                       {"refused", note.refused}});
    jg["refused_claims"] = notes;
    graphs.push_back(jg);
  }
  report["graphs"] = graphs;
  json contexts = json::array();
  for (const ContextDiagnostic& d : context_diagnostics_)
    contexts.push_back({{"node", d.node},
                        {"source", d.source},
                        {"provider", d.provider.empty() ? json(nullptr) : json(d.provider)},
                        {"verdict", d.verdict},
                        {"reason", d.reason},
                        {"loaded", d.loaded},
                        {"status", d.loaded ? "OK" : "INVALID_GRAPH"},
                        {"fell_back", d.fell_back},
                        {"fallback_nodes", d.fallback_nodes}});
  report["ep_contexts"] = contexts;
  report["nodes_per_provider"] = counts;
  return report.dump(2);
}

}  // namespace ephost
