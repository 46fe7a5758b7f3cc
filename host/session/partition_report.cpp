// The partition report: which provider runs each node (of every graph, subgraphs included), the
// fused groups, every claim that was refused or trimmed with its reason, and what happened to each
// EPContext node (loaded, or rejected with INVALID_GRAPH and its reason, and the fallback).
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "discovery/plugin_registry.h"
#include "isolation/isolated_provider.h"
#include "model/initializer_release.h"
#include "session/context_source_fallback.h"
#include "session/session_plan.h"
#include "session/session.h"

namespace ephost {

namespace {

std::vector<std::string> value_names(const std::vector<Value*>& values) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (const Value* v : values) out.push_back(v ? v->name : "");
  return out;
}

// The memory patterns recorded so far (one per distinct set of input shapes, after a run): each
// block, and where and when each value lies in it (plan step positions, inclusive). What
// `ephost run --memory-svg` draws.
nlohmann::json memory_patterns_json(const GraphExecutor& ex) {
  using nlohmann::json;
  const GraphPlan& plan = ex.plan();
  auto where = [&](int32_t id) {
    const Device* d = id >= 0 && static_cast<size_t>(id) < plan.devices.size() ? plan.devices[static_cast<size_t>(id)]
                                                                                : nullptr;
    return d ? d->label() : std::string("host");
  };
  json steps = json::array();
  for (int id : plan.execution.order) steps.push_back(plan.graph.steps[static_cast<size_t>(id)].name);
  json out = json::array();
  for (const auto& [signature, pattern] : ex.memory_patterns()) {
    json blocks = json::array();
    for (const plan::MemoryBlock& b : pattern->blocks)
      blocks.push_back({{"device", where(b.device)}, {"bytes", b.bytes}, {"min_bytes", b.min_bytes}});
    json values = json::array();
    for (size_t v = 0; v < pattern->offsets.size() && v < plan.graph.values.size(); ++v) {
      if (pattern->offsets[v] < 0) continue;
      const plan::ValuePlan& vp = plan.allocation.values[v];
      values.push_back({{"value", plan.graph.values[v].name},
                        {"device", where(plan.graph.values[v].device)},
                        {"offset", pattern->offsets[v]},
                        {"bytes", pattern->sizes[v]},
                        {"first_step", vp.def_step},
                        {"last_step", vp.last_use_step}});
    }
    out.push_back({{"input_shapes", signature},
                   {"peak_bytes", pattern->peak_bytes},
                   {"blocks", blocks},
                   {"steps", steps},
                   {"values", values}});
  }
  return out;
}

// A context loaded at creation whose provider later fell back (its provider host lost too often) and which
// the current plan runs from its source model's nodes on the CPU plugin instead (session/context_source_
// fallback.h): null while the provider serves it.
nlohmann::json context_provider_fell_back(const ContextDiagnostic& d, const SessionPlan& plan, const ProviderSet& providers,
                                          const ContextSourceFallback* sources) {
  if (!d.loaded) return nullptr;
  for (size_t index = 0; index < providers.instances.size() && index < plan.left_out.size(); ++index) {
    if (providers.instances[index]->name() != d.provider || plan.left_out[index].empty()) continue;
    nlohmann::json out = {{"provider", d.provider}, {"why", plan.left_out[index]}, {"runs_on", "cpu"}};
    if (const ContextSourceModel* source = sources ? sources->source_of(d.node) : nullptr)
      out["source_model"] = source->path.empty() ? nlohmann::json(nullptr) : nlohmann::json(source->path);
    return out;
  }
  return nullptr;
}

}  // namespace

std::string Session::partition_report_json() const {
  using nlohmann::json;
  json report;
  const std::shared_ptr<const SessionPlan> current = plan();
  json providers = json::array();
  for (size_t index = 0; index < providers_.instances.size(); ++index) {
    const auto& p = providers_.instances[index];
    json jp = {{"name", p->name()}, {"path", p->record().path}, {"version", p->record().version}};
    // Plugin ABI 3: the device the provider runs on, and whether its values live in device memory.
    if (const Device* d = p->device())
      jp["device"] = {{"label", d->label()},
                      {"name", d->name()},
                      {"type", device_type_name(d->type())},
                      {"memory", d->host_memory_usable() ? "host" : "device"}};
    // Where it runs, and for a provider in a provider host process, how that process is doing now.
    if (const auto* isolated = dynamic_cast<const IsolatedProvider*>(p.get())) {
      const IsolatedProviderHealth h = isolated->health();
      jp["isolation"] = {{"mode", "process"}, {"state", isolated_provider_state_name(h.state)},
                         {"failures", h.failures}, {"last_failure", h.last_failure}, {"process_id", h.process_id},
                         // Host tensors' bytes since the session began: copied through the process's arena, or
                         // read and written in place (the application's shared tensors, CreateSharedTensor, and
                         // outputs left in shared memory the host allocated).
                         {"bytes_copied", isolated->bytes_copied()}, {"bytes_in_place", isolated->bytes_in_place()}};
      // Isolation auto: why this plugin was isolated ("isolated: crashed in process at ... in compute").
      if (!isolated->settings().reason.empty()) jp["isolation"]["reason"] = isolated->settings().reason;
      // Its values in its device's memory: the buffers the host holds ids of, and whether the session
      // planned again without it after it fell back (session/provider_fallback.h).
      // A host-memory provider is planned again without too when it held EPContext nodes
      // (session/context_source_fallback.h): then it is said as well.
      const bool left_out = index < current->left_out.size() && !current->left_out[index].empty();
      if (isolated->values_on_device()) jp["isolation"]["device_buffers"] = isolated->device_buffers_held();
      if (isolated->values_on_device() || left_out) jp["isolation"]["left_out_of_plan"] = left_out;
    } else {
      jp["isolation"] = {{"mode", "in_process"}};
    }
    providers.push_back(jp);
  }
  report["providers"] = providers;
  // Why the providers are in this order (session.ep_selection_policy).
  json selection = {{"policy", providers_.selection.policy}, {"candidates", json::array()}};
  for (const auto& c : providers_.selection.candidates) {
    json jc = {{"provider", c.provider}, {"device_type", c.device_type}, {"priority", c.priority}, {"reason", c.reason}};
    if (c.skipped) jc["skipped"] = true;
    if (c.claimed_nodes >= 0) {
      jc["claimed_nodes"] = c.claimed_nodes;
      jc["graph_nodes"] = c.graph_nodes;
    }
    selection["candidates"].push_back(jc);
  }
  report["selection"] = selection;
  size_t copies_total = 0;
  json graphs = json::array();
  std::map<std::string, size_t> counts;
  // Main graph first, then subgraphs in the order the executors map yields them (sorted by name).
  std::vector<const GraphExecutor*> ordered;
  ordered.push_back(&current->executor(*graph_));
  std::vector<const GraphExecutor*> subs;
  for (const auto& [g, ex] : current->executors)
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
                         {"inputs", value_names(n->inputs)},
                         {"outputs", value_names(n->outputs)},
                         {"provider", step->provider->name()},
                         {"device", step->provider->device() ? json(step->provider->device()->label()) : json(nullptr)},
                         {"fused_group", step->fused ? json(step->name) : json(nullptr)}});
        counts[step->provider->name()]++;
      }
    }
    jg["nodes"] = nodes;
    // Nodes that run in no step: constant folding precomputed their outputs, which the plan reads as
    // initializers (partition/precomputed_steps.h).
    json precomputed = json::array();
    for (const auto& n : ex->graph().nodes) {
      bool any = false, all = true;
      for (const Value* out : n->outputs) {
        if (!out) continue;
        any = any || (out->precomputed && out->initializer);
        all = all && (out->initializer || out->consumers.empty());
      }
      if (any && all) precomputed.push_back(n->name);
    }
    jg["precomputed"] = precomputed;
    json graph_inputs = json::array();  // what a caller feeds (initializers that are also inputs left out)
    for (const Value* v : ex->graph().inputs)
      if (!v->is_initializer()) graph_inputs.push_back(v->name);
    jg["inputs"] = graph_inputs;
    jg["outputs"] = value_names(ex->graph().outputs);
    json notes = json::array();
    for (const PartitionNote& note : part.notes)
      notes.push_back({{"provider", providers_.names[note.provider]},
                       {"nodes", note.nodes},
                       {"reason", note.reason},
                       {"refused", note.refused}});
    jg["refused_claims"] = notes;
    // Copies between locations (plugin ABI 3), one per value and destination, shared by its consumers.
    const GraphPlan& plan = ex->plan();
    json copies = json::array();
    for (const PlannedCopy& c : plan.copies) {
      const Value& v = *ex->graph().values[static_cast<size_t>(c.source)];
      const plan::PlanValue& from = plan.graph.values[static_cast<size_t>(c.source)];
      auto where = [&](int32_t id) {
        const Device* d = plan.devices[static_cast<size_t>(id)];
        return d ? d->label() : std::string("host");
      };
      copies.push_back({{"value", v.name},
                        {"from", where(from.device)},
                        {"to", where(c.device)},
                        {"when", c.step >= 0 ? "every run" : "once (constant initializer)"},
                        {"consumers", c.consumers}});
    }
    copies_total += plan.copies.size();
    jg["copies"] = copies;
    // Graph outputs made on a device go back to host memory when the run returns (unless bound there).
    json out_copies = json::array();
    for (const Value* v : ex->graph().outputs) {
      const int32_t dev = plan.graph.values[v->index].device;
      if (dev > 0) out_copies.push_back({{"value", v->name}, {"from", plan.devices[static_cast<size_t>(dev)]->label()}});
    }
    if (ex->graph().parent_node == nullptr) jg["outputs_copied_to_host"] = out_copies;
    jg["memory_patterns"] = memory_patterns_json(*ex);
    graphs.push_back(jg);
  }
  report["graphs"] = graphs;
  json contexts = json::array();
  json rebuild = nullptr;
  if (rebuild_) {
    const ContextRebuild::Status st = rebuild_->status();
    rebuild = {{"state", st.state}, {"ctx_model", st.ctx_path}};
    if (!st.reason.empty()) rebuild["reason"] = st.reason;
    if (st.state == "written") {
      rebuild["files"] = st.files;
      rebuild["seconds"] = st.seconds;
    }
  }
  for (const ContextDiagnostic& d : context_diagnostics_) {
    json entry = {{"node", d.node},
                        {"source", d.source},
                        {"provider", d.provider.empty() ? json(nullptr) : json(d.provider)},
                        {"verdict", d.verdict},
                        {"reason", d.reason},
                        {"loaded", d.loaded},
                        {"status", d.loaded ? "OK" : "INVALID_GRAPH"},
                        {"fell_back", d.fell_back},
                        {"fallback_nodes", d.fallback_nodes},
                        {"fallback_node_names", d.fallback_node_names},
                        // ep.context_rebuild=1: the background rebuild of the cache a rejected node belongs to.
                        {"rebuild", d.fell_back ? rebuild : json(nullptr)}};
    entry["provider_fell_back"] = context_provider_fell_back(d, *current, providers_, context_sources_.get());
    contexts.push_back(std::move(entry));
  }
  report["ep_contexts"] = contexts;
  report["nodes_per_provider"] = counts;
  report["copies_planned"] = copies_total;
  report["creation"] = {{"ir_builds", creation_counts_.ir_builds},
                        {"shape_inferences", creation_counts_.shape_inferences}};
  // Initializers whose bytes went once every provider reading them had packed them (plugin ABI 5), and
  // how often freed ones were read back from the model file.
  // while_compiling: how many of those the current plan freed while it was compiled (each once its last
  // reader was made, so that the host's bytes and the packed copies are never all alive at once).
  json freed = {{"count", 0}, {"bytes", 0}, {"read_back", 0}, {"while_compiling", 0}};
  if (const InitializerRelease* release = model_->initializer_release.get())
    freed = {{"count", release->released_count()}, {"bytes", release->released_bytes()},
             {"read_back", release->restores()}, {"while_compiling", current->initializers_freed_while_compiling}};
  report["freed_initializers"] = freed;
  return report.dump(2);
}

}  // namespace ephost
