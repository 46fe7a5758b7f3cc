// A session: load -> initialize (the stages of session_stages.h: providers, EPContext resolution,
// graph transforms, IR, partition, compile, plan, executors, EPContext generation) -> run (seed: ONNX
// Runtime's InferenceSession lifecycle). Immutable after creation, so Run may be called from several
// threads at once; the one change, after an isolated device provider fell back, swaps the whole plan
// between runs (session/provider_fallback.h).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime_value.h"
#include "epcontext/context_generation.h"
#include "epcontext/context_loading.h"
#include "exec/graph_executor.h"
#include "graph/graph.h"
#include "model/creation_counts.h"
#include "session/context_rebuild.h"
#include "session/context_source_fallback.h"
#include "session/provider_fallback.h"
#include "session/session_plan.h"
#include "env/env.h"
#include "provider_selection/provider_setup.h"
#include "options/session_config.h"
#include "options/session_options.h"

namespace ephost {

class Session {
 public:
  static std::unique_ptr<Session> create_from_file(Env& env, const std::string& path, const SessionOptions& options);
  static std::unique_ptr<Session> create_from_buffer(Env& env, const void* data, size_t size,
                                                     const SessionOptions& options);
  // For models the host builds itself (constant folding's one-node models): no onnx checker and no
  // shape inference at load.
  static std::unique_ptr<Session> create_trusted_from_buffer(Env& env, const void* data, size_t size,
                                                             const SessionOptions& options);
  ~Session();

  const Graph& graph() const { return *graph_; }
  Env& env() const { return env_; }
  const std::vector<Value*>& inputs() const { return inputs_; }  // what a caller feeds
  const std::vector<Value*>& outputs() const { return graph_->outputs; }

  // Runs with inputs bound by name; returns the requested outputs (all when output_names is empty).
  // Values are tensors, sequences or none, as the model declares them; inputs may be device tensors.
  // `requests` (one per requested output, or null: all in host memory) say where each output goes;
  // `stats` receives how many copies the run made between locations. `limits` (run options: the
  // caller makes them when the run starts) may stop the run early: it then throws EPHOST_CANCELLED or
  // EPHOST_DEADLINE_EXCEEDED, and the session's next run is unaffected.
  std::vector<RuntimeValue> run(const std::vector<std::string>& input_names, const std::vector<RuntimeValue>& inputs,
                                const std::vector<std::string>& output_names,
                                const OutputRequests* requests = nullptr, RunCopyStats* stats = nullptr,
                                const RunLimits* limits = nullptr) const;

  // The model's metadata as JSON (SessionGetModelMetadataJson): producer_name, producer_version,
  // domain, description (the model's doc_string), graph_name, graph_description, version
  // (model_version) and custom_metadata_map (metadata_props).
  std::string model_metadata_json() const;

  std::string partition_report_json() const;
  // Where each provider runs and, in a provider host process, how it is doing now (in providers()'s order).
  struct ProviderState {
    std::string provider;
    bool isolated = false;
    IsolatedProviderHealth health;  // for an isolated provider
  };
  std::vector<ProviderState> provider_states() const;
  // The whole-model work this session's creation did, its load included (model/creation_counts.h).
  const CreationCounts& creation_counts() const { return creation_counts_; }
  // What happened to each EPContext node of the model (empty for an ordinary model).
  const std::vector<ContextDiagnostic>& context_diagnostics() const { return context_diagnostics_; }
  // session.enable_profiling=1: writes the trace recorded so far and returns its path (later events
  // go to a new file). Throws INVALID_ARGUMENT when profiling is off.
  std::string end_profiling();

  // The background rebuild of a rejected EPContext cache (ep.context_rebuild=1), or null.
  const ContextRebuild* context_rebuild() const { return rebuild_.get(); }
  const std::vector<std::unique_ptr<Provider>>& providers() const { return providers_.instances; }
  // The current plan (session_plan.h): kept alive by the pointer even when a fallback swaps another in.
  std::shared_ptr<const SessionPlan> plan() const;
  // The current plan's executors: valid until a plan is swapped in (only after an isolated device
  // provider fell back); hold plan() to keep them.
  const GraphExecutor& main_executor() const { return plan()->executor(*graph_); }
  const ExecutorMap& executors() const { return plan()->executors; }

 private:
  Session(Env& env, const SessionOptions& options, bool trusted_model);
  void initialize(std::unique_ptr<Model> model);
  // ep.context_rebuild=1 and some cached contexts were rejected: recompile them in the background.
  void start_context_rebuild();
  // Compiles the partitions, plans them and makes their executors (the stages after partitioning);
  // `progress` (may be empty) hears each compiled step. With `free_while_compiling` (no EPContext
  // model is written from this plan), initializers every reader packed are freed as their last reader
  // is compiled (session/initializer_freeing.h).
  std::shared_ptr<SessionPlan> make_plan(std::vector<GraphPartition> partitions,
                                         const std::function<void(size_t, size_t)>& progress,
                                         const CreationDeadline& deadline, bool free_while_compiling) const;
  // Providers whose plugins keep a profile of their own file their events in profiler_ (Provider::end_profiling).
  void file_provider_profiles() const;
  // A device provider fell back (provider_fallback.h): partitions again without it and swaps the new plan in.
  void plan_again_without(const std::vector<std::string>& left_out) const;
  // partition_graphs without the providers `left_out`, their EPContext nodes replaced by source nodes.
  std::vector<GraphPartition> partition_without(const std::vector<std::string>& left_out,
                                                const GenerationSettings& generation) const;
  // make_plan at creation. When it fails because a device provider fell back meanwhile (its provider host
  // lost on every try of a compile), the graphs are partitioned again without that provider and the plan
  // made from that, as a run after a fallback does: the session is created on the providers after it.
  std::shared_ptr<SessionPlan> make_first_plan(std::vector<GraphPartition> partitions,
                                               const GenerationSettings& generation,
                                               const std::function<void(size_t, size_t)>& progress,
                                               const CreationDeadline& deadline);

  Env& env_;
  const SessionOptions options_;  // as given (the context rebuild compiles with them)
  const SessionConfig config_;
  const bool trusted_model_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Graph> graph_;  // the IR of model_ (points into it: declared after, destroyed first)
  // Before providers_: their state callbacks reach it, to the last.
  mutable ProviderFallback fallback_;
  SessionProviders providers_;
  ContextResolution contexts_;    // the EPContext nodes loaded (a new plan gets them again); no diagnostics
  // The source nodes of EPContext nodes whose isolated provider falls back (null: none loaded by one).
  // Before plan_: its steps' runner outlives them.
  std::unique_ptr<ContextSourceFallback> context_sources_;
  mutable std::mutex plan_mutex_;
  // Releases kernels and compiled groups: destroyed before providers_. Swapped under plan_mutex_.
  mutable std::shared_ptr<const SessionPlan> plan_;
  std::vector<Value*> inputs_;
  std::vector<ContextDiagnostic> context_diagnostics_;
  CreationCounts creation_counts_;
  std::string metadata_json_;  // model_metadata_json(), read at load
  std::unique_ptr<Profiler> profiler_;  // session.enable_profiling
  std::unique_ptr<ContextRebuild> rebuild_;  // destroyed first: it may still use the env
};

}  // namespace ephost
