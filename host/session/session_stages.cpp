#include "session/session_stages.h"

#include <fmt/format.h>
#include <algorithm>
#include <onnx/onnx_pb.h>

#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "epcontext/context_schema.h"
#include "model/loader.h"
#include "session/constant_evaluator.h"
#include "session/unclaimed_functions.h"
#include "transform/pass.h"

namespace ephost {

LoadOptions model_load_options(const SessionConfig& config, bool trusted_model) {
  LoadOptions lo;
  lo.external_data_folder = config.external_data_folder;
  lo.run_checker = !trusted_model;
  lo.infer_shapes = !trusted_model;
  lo.free_dimension_overrides = config.free_dimension_overrides;
  return lo;
}

ContextResolution resolve_ep_contexts(Model& model, Graph& graph, const SessionProviders& providers,
                                      const SessionConfig& config, bool trusted_model, ContextShareRegistry& shared) {
  if (!epctx::has_context_nodes(model.proto->graph())) return {};
  if (config.ep_context.enable)
    fail(EPHOST_INVALID_ARGUMENT,
         "ep.context_enable=1 on a model that already has EPContext nodes; compile the source model instead");
  const ContextLoadSettings settings =
      read_context_load_settings(config.ep_context, model_load_options(config, trusted_model));
  return resolve_contexts(model, graph, providers.instances, settings, shared);
}

std::unique_ptr<Graph> build_graph(Model& model) {
  std::unique_ptr<Graph> graph = build_graph_ir(model);
  release_initializer_data(*model.proto);
  return graph;
}

void expand_functions(Model& model, std::unique_ptr<Graph>& graph, const SessionProviders& providers) {
  if (size_t n = expand_unclaimed_functions(model, graph, capability_query(providers), providers.instances.size()))
    log_info(fmt::format("{} node(s) no provider claimed were replaced by their function bodies", n));
}

void transform_graph(Graph& main, const SessionConfig& config, Env& env, const CreationDeadline& deadline) {
  if (config.optimization_level <= 0) return;
  TransformContext context;
  context.level = config.optimization_level;
  if (env.registry().find_loaded("cpu")) {
    context.evaluate = make_constant_evaluator(env, deadline);
    context.evaluate_later = make_constant_evaluator(env, CreationDeadline{});
  }
  for (const PassResult& r : default_pipeline().run(main, context))
    if (r.rewrites) log_info(fmt::format("graph transform '{}': {} rewrite(s)", r.pass, r.rewrites));
}

namespace {

void partition_subgraphs(const Graph& graph, const std::vector<std::string>& names, const CapabilityQuery& query,
                         const PartitionOptions& options, std::vector<GraphPartition>& out) {
  for (const auto& node : graph.nodes)
    for (const auto& sub : node->subgraphs) {
      out.push_back(partition_graph(*sub.second, names, query, options));
      partition_subgraphs(*sub.second, names, query, options, out);
    }
}

}  // namespace

std::vector<GraphPartition> partition_graphs(const Graph& main, const SessionProviders& providers,
                                             const ContextResolution& contexts, const GenerationSettings& generation,
                                             const std::vector<std::string>& left_out,
                                             const std::vector<PartitionOptions::Preassigned>& replacing) {
  auto is_left_out = [&left_out](size_t provider) { return provider < left_out.size() && !left_out[provider].empty(); };
  const CapabilityQuery query = capability_query(providers);
  PartitionOptions common;
  common.left_out = left_out;  // not asked, and named apart from the providers asked
  common.unclaimed_hint = providers.cpu_fallback
                              ? "The built-in CPU plugin does not support these operators (or these types) yet."
                              : "session.disable_cpu_ep_fallback=1 keeps the built-in CPU plugin out: unset it, or "
                                "add a provider that supports these nodes.";

  PartitionOptions main_options = common;
  if (generation.enabled) main_options.fused_name_prefix = generation.node_prefix + generation.model_name + "_";
  for (const auto& n : main.nodes) {
    if (n->op_type != epctx::kOpType) continue;
    auto replaced = std::find_if(replacing.begin(), replacing.end(),
                                 [&](const PartitionOptions::Preassigned& r) { return r.node == n.get(); });
    if (replaced != replacing.end()) {
      main_options.preassigned.push_back(*replaced);
      continue;
    }
    auto it = contexts.loaded.find(n->name);
    const bool usable = it != contexts.loaded.end() && !is_left_out(it->second.provider);
    if (usable) main_options.preassigned.push_back({n.get(), it->second.provider, it->second.compute});
  }
  if (!contexts.excluded.empty()) {
    const auto* excluded = &contexts.excluded;
    main_options.excluded = [excluded](size_t provider, const Node& node) {
      auto it = excluded->find(node.name);
      return it != excluded->end() && it->second == provider;
    };
  }

  std::vector<GraphPartition> partitions;
  partitions.push_back(partition_graph(main, providers.names, query, main_options));
  partition_subgraphs(main, providers.names, query, common, partitions);
  // The providers left out were not asked: each graph's notes say why (the partition report shows them).
  for (GraphPartition& partition : partitions)
    for (size_t provider = 0; provider < left_out.size(); ++provider)
      if (is_left_out(provider)) partition.notes.push_back({provider, {}, left_out[provider], true});
  return partitions;
}

std::vector<std::unique_ptr<CompiledGraph>> compile_graphs(
    std::vector<GraphPartition> partitions, const SessionProviders& providers,
    const std::function<void(size_t, size_t)>& progress, const CreationDeadline& deadline,
    const std::function<void(const Graph&, const CompiledStep&)>& step_compiled) {
  const std::vector<Provider*> instances = providers.pointers();
  size_t total = 0, done = 0;
  for (const GraphPartition& p : partitions) total += p.groups.size();
  std::function<void()> step_done;
  if (progress || deadline.set()) {
    step_done = [&] {
      ++done;
      if (progress) progress(done, total);
      deadline.check(fmt::format("compile (after {} of {} steps)", done, total));
    };
    if (progress) progress(0, total);  // the stage begins: observers start their clocks
  }
  std::vector<std::unique_ptr<CompiledGraph>> compiled;
  for (GraphPartition& p : partitions) {
    const Graph& graph = *p.graph;
    std::function<void(const CompiledStep&)> after_step;
    if (step_done || step_compiled)
      after_step = [&](const CompiledStep& step) {
        if (step_compiled) step_compiled(graph, step);
        if (step_done) step_done();
      };
    compiled.push_back(compile_graph(graph, std::move(p), instances, after_step));
  }
  return compiled;
}

std::vector<GraphPlan> plan_graphs(const std::vector<std::unique_ptr<CompiledGraph>>& compiled,
                                   const SessionConfig& config) {
  std::vector<GraphPlan> plans;
  for (const auto& c : compiled) {
    std::vector<const Device*> step_devices;
    std::vector<std::vector<plan::InPlacePair>> step_in_place;
    for (const auto& step : c->steps()) {
      step_devices.push_back(step->provider->memory_device());
      std::vector<plan::InPlacePair>& pairs = step_in_place.emplace_back();
      if (step->unit)
        for (const auto& [input, output] : step->unit->in_place()) pairs.push_back(plan::InPlacePair{input, output});
    }
    plans.push_back(
        plan_partitioned_graph(c->graph(), c->partition(), step_devices, config.mem_reuse, step_in_place));
  }
  return plans;
}

void create_executors(std::vector<std::unique_ptr<CompiledGraph>> compiled, std::vector<GraphPlan> plans,
                      const SessionConfig& config, Profiler* profiler, ExecutorMap& executors) {
  ExecOptions exec;
  exec.profiler = profiler;
  exec.enable_mem_pattern = config.mem_pattern;
  exec.enable_mem_reuse = config.mem_reuse;
  exec.num_threads = config.threads;
  for (size_t i = 0; i < compiled.size(); ++i) {
    const Graph* graph = &compiled[i]->graph();
    executors[graph] = std::make_unique<GraphExecutor>(std::move(compiled[i]), std::move(plans[i]), exec, executors);
  }
}

}  // namespace ephost
