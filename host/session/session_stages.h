// The stages of creating a session (seed: ONNX Runtime's InferenceSession::Initialize), each a
// function with explicit inputs and outputs. Session::initialize (session.cpp) runs them in order:
//
//   build_graph           ModelProto              -> the IR (the model's one build; edited from here on)
//   create_providers      registry + options + IR -> the session's providers, in priority order
//   resolve_ep_contexts   IR of an EPContext model-> loaded contexts; rejected ones replaced in the IR by
//                                                    their source nodes
//   expand_functions      IR + providers          -> function nodes nobody claims replaced by their bodies
//   transform_graph       IR                      -> the IR edited by the graph transforms (typed locally)
//   partition_graphs      IR + providers          -> one GraphPartition per graph (main graph first); the IR
//                                                    is frozen from here (graph/graph_editor.h)
//   compile_graphs        partitions              -> kernels and compiled fused groups, per graph
//   plan_graphs           compiled graphs         -> execution order and allocation plan, per graph
//   create_executors      compiled graphs + plans -> one executor per graph
//   generate_ep_contexts  executors               -> <model>_ctx.onnx and binaries (ep.context_enable=1)
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "compile/compiled_graph.h"
#include "epcontext/context_generation.h"
#include "epcontext/context_loading.h"
#include "exec/graph_executor.h"
#include "graph/graph.h"
#include "model/model.h"
#include "plan/plan_input.h"
#include "env/env.h"
#include "provider_selection/provider_setup.h"
#include "options/session_config.h"

namespace ephost {

// How the session loads its model (and a fallback's source model).
LoadOptions model_load_options(const SessionConfig& config, bool trusted_model);

// Loads the cached contexts of the EPContext nodes of `graph`, the IR of `model` (nothing for an
// ordinary model); replaces the nodes of contexts that cannot be used by their source model's nodes in
// the IR (or fails, as configured).
ContextResolution resolve_ep_contexts(Model& model, Graph& graph, const SessionProviders& providers,
                                      const SessionConfig& config, bool trusted_model, ContextShareRegistry& shared);

// Builds the IR of `model`, once: every later stage edits it (graph/graph_editor.h) until partitioning
// freezes it. Initializer bytes then leave the proto (the IR holds them).
std::unique_ptr<Graph> build_graph(Model& model);

// Nodes no provider claims are replaced by their function bodies where their operators have one
// (edited in the IR, typed where spliced in).
void expand_functions(Model& model, std::unique_ptr<Graph>& graph, const SessionProviders& providers);

// Runs the graph transforms of config.optimization_level on the IR `main` through the graph editor
// (constant folding, of subgraphs too, evaluates nodes on the built-in CPU plugin of `env`, its kernels
// under `deadline`). After build_graph: the function bodies spliced in are transformed too (as ONNX
// Runtime inlines functions before it optimizes), and the providers were asked about the nodes as the
// model has them. Edits are typed locally: the model is not inferred again.
void transform_graph(Graph& main, const SessionConfig& config, Env& env, const CreationDeadline& deadline = {});

// Partitions the main graph (EPContext nodes preassigned to the providers that loaded them, original
// nodes of rejected contexts kept from the providers that rejected them, fused groups named for
// EPContext generation) and every subgraph. Main graph first. Providers with a reason in `left_out`
// (indexed by provider; "" or past the end: asked) are not asked, and get no EPContext node either: the
// session plans again without an isolated provider that fell back (session/provider_fallback.h).
// `replacing`: EPContext nodes preassigned as given instead (those of a provider left out, as their
// source nodes: session/context_source_fallback.h).
std::vector<GraphPartition> partition_graphs(const Graph& main, const SessionProviders& providers,
                                             const ContextResolution& contexts, const GenerationSettings& generation,
                                             const std::vector<std::string>& left_out = {},
                                             const std::vector<PartitionOptions::Preassigned>& replacing = {});

// `progress` (may be empty) is called after each step is compiled: (done, total) over all graphs.
// `deadline` is checked after each step: past it, what was compiled is released and it throws.
// `compiled` (may be empty) is called with each step once it is made, and its graph.
std::vector<std::unique_ptr<CompiledGraph>> compile_graphs(
    std::vector<GraphPartition> partitions, const SessionProviders& providers,
    const std::function<void(size_t, size_t)>& progress = {}, const CreationDeadline& deadline = {},
    const std::function<void(const Graph&, const CompiledStep&)>& compiled = {});

std::vector<GraphPlan> plan_graphs(const std::vector<std::unique_ptr<CompiledGraph>>& compiled,
                                   const SessionConfig& config);

// Fills `executors` (which the executors keep a reference to, for control-flow subgraphs).
void create_executors(std::vector<std::unique_ptr<CompiledGraph>> compiled, std::vector<GraphPlan> plans,
                      const SessionConfig& config, Profiler* profiler, ExecutorMap& executors);

}  // namespace ephost
