#include "session/session.h"

#include <chrono>
#include <optional>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/log.h"
#include "ephost/ephost_session_options_keys.h"
#include "graph/graph_editor.h"
#include "isolation/isolated_provider.h"
#include "model/loader.h"
#include "model/tensor_proto.h"
#include "partition/precomputed_steps.h"
#include "session/initializer_freeing.h"
#include "session/provider_sync.h"
#include "session/run_inputs.h"
#include "session/session_stages.h"

namespace ephost {
namespace {

// "provider 'a' fell back (...)" for each provider a plan leaves out.
std::string left_out_summary(const std::vector<std::string>& left_out) {
  std::string out;
  for (const std::string& why : left_out)
    if (!why.empty()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

std::string read_model_metadata_json(const onnx::ModelProto& proto) {
  nlohmann::json custom = nlohmann::json::object();
  for (const auto& entry : proto.metadata_props()) custom[entry.key()] = entry.value();
  const nlohmann::json metadata = {
      {"producer_name", proto.producer_name()},   {"producer_version", proto.producer_version()},
      {"domain", proto.domain()},                 {"description", proto.doc_string()},
      {"graph_name", proto.graph().name()},       {"graph_description", proto.graph().doc_string()},
      {"version", proto.model_version()},         {"custom_metadata_map", custom}};
  // Model text need not be valid UTF-8: replaced rather than refused.
  return metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The application's initializers (SessionOptions::initializers) into the model, before anything
// reads its initializers: replacing one of the same type and shape, or making a graph input constant.
void add_initializers(onnx::ModelProto& model, const std::vector<std::pair<std::string, Tensor>>& added) {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const auto& [name, tensor] : added) {
    auto describe = [](int32_t type, const std::vector<int64_t>& dims) {
      return fmt::format("{} {}", element_type_name(type), shape_to_string(dims));
    };
    const std::string given = describe(tensor.elem_type(), tensor.shape());
    onnx::TensorProto* target = nullptr;
    for (onnx::TensorProto& init : *graph.mutable_initializer())
      if (init.name() == name) target = &init;
    if (target) {
      const std::vector<int64_t> dims(target->dims().begin(), target->dims().end());
      if (target->data_type() != tensor.elem_type() || dims != tensor.shape())
        fail(EPHOST_INVALID_ARGUMENT, "add_initializer '{}': the model's initializer is {}, the value given is {}: "
             "give a value of the same type and shape", name, describe(target->data_type(), dims), given);
      tensor_to_proto(tensor, name, target);
      continue;
    }
    const onnx::ValueInfoProto* input = nullptr;
    for (const onnx::ValueInfoProto& in : graph.input())
      if (in.name() == name) input = &in;
    if (!input) {
      std::string known;
      for (const onnx::TensorProto& init : graph.initializer()) known += (known.empty() ? "" : ", ") + init.name();
      for (const onnx::ValueInfoProto& in : graph.input()) known += (known.empty() ? "" : ", ") + in.name();
      fail(EPHOST_INVALID_ARGUMENT, "add_initializer '{}': the model has no initializer or input of that name "
           "(it has: {})", name, known.empty() ? "none" : known);
    }
    if (input->type().has_tensor_type()) {
      const auto& declared = input->type().tensor_type();
      bool fits = declared.elem_type() == tensor.elem_type();
      if (fits && declared.has_shape()) {
        fits = static_cast<size_t>(declared.shape().dim_size()) == tensor.shape().size();
        for (int d = 0; fits && d < declared.shape().dim_size(); ++d)
          if (declared.shape().dim(d).has_dim_value())
            fits = declared.shape().dim(d).dim_value() == tensor.shape()[static_cast<size_t>(d)];
      }
      if (!fits)
        fail(EPHOST_INVALID_ARGUMENT, "add_initializer '{}': the value given is {}, which input '{}' does not "
             "take: give a value of its declared type and shape", name, given, name);
    }
    tensor_to_proto(tensor, name, graph.add_initializer());
  }
}

}  // namespace

Session::Session(Env& env, const SessionOptions& options, bool trusted_model)
    : env_(env), options_(options), config_(parse_session_config(options)), trusted_model_(trusted_model) {
  if (config_.profiling) profiler_ = std::make_unique<Profiler>(config_.profile_prefix);
}

Session::~Session() {
  rebuild_.reset();
  plan_.reset();  // before the trace is written: nothing records after this
  if (profiler_) file_provider_profiles();
  if (profiler_ && profiler_->event_count() > 0) {
    try {
      log_info("profiling trace written to " + profiler_->write());
    } catch (const std::exception& e) {
      log_warning(std::string("profiling trace not written: ") + e.what());
    }
  }
}

std::string Session::end_profiling() {
  if (!profiler_)
    fail(EPHOST_INVALID_ARGUMENT, "profiling is off: set session.enable_profiling=1 before creating the session");
  file_provider_profiles();
  return profiler_->write();
}

void Session::file_provider_profiles() const {
  for (const auto& provider : providers_.instances) provider->end_profiling();
}

std::unique_ptr<Session> Session::create_from_file(Env& env, const std::string& path, const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(env, options, false));
  CountCreationWork count(s->creation_counts_);
  s->initialize(load_model_from_file(path, model_load_options(s->config_, false)));
  return s;
}

std::unique_ptr<Session> Session::create_from_buffer(Env& env, const void* data, size_t size,
                                                     const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(env, options, false));
  CountCreationWork count(s->creation_counts_);
  s->initialize(load_model_from_buffer(data, size, model_load_options(s->config_, false)));
  return s;
}

std::unique_ptr<Session> Session::create_trusted_from_buffer(Env& env, const void* data, size_t size,
                                                             const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(env, options, true));
  CountCreationWork count(s->creation_counts_);
  s->initialize(load_model_from_buffer(data, size, model_load_options(s->config_, true)));
  return s;
}

void Session::initialize(std::unique_ptr<Model> model) {
  Profiler* p = profiler_.get();
  auto creation = profile(p, "session", "session creation", {{"model", model->path}});
  // session.compile_timeout_ms: checked after each stage, after each compiled step, and by the kernels
  // constant folding runs. The model's loading (before this) is bounded by its size.
  const CreationDeadline deadline(std::chrono::milliseconds(config_.compile_timeout_ms));
  model_ = std::move(model);
  add_initializers(*model_->proto, options_.initializers);
  metadata_json_ = read_model_metadata_json(*model_->proto);
  // Checked before anything is compiled, so that a mistake costs nothing.
  const GenerationSettings generation = read_generation_settings(config_.ep_context, model_->path);

  {
    auto span = profile(p, "session", "build graph");
    graph_ = build_graph(*model_);
    std::vector<std::string> added;
    for (const auto& [name, tensor] : options_.initializers) added.push_back(name);
    if (!config_.keep_initializers)
      track_initializers_from_file(*model_, *graph_, model_load_options(config_, trusted_model_), added);
  }
  deadline.check("build graph");
  {
    auto span = profile(p, "session", "create providers");
    providers_ = create_providers(env_.registry(), config_, *graph_);
    if (p)
      for (const auto& provider : providers_.instances) provider->start_profiling(*p);
  }
  fallback_.watch(providers_, options_.provider_state);
  deadline.check("create providers");
  {
    auto span = profile(p, "session", "resolve EPContext nodes");
    contexts_ = resolve_ep_contexts(*model_, *graph_, providers_, config_, trusted_model_, env_.context_share());
    if (!contexts_.loaded.empty())
      context_sources_ = std::make_unique<ContextSourceFallback>(
          *model_, *graph_, providers_, contexts_,
          read_context_load_settings(config_.ep_context, model_load_options(config_, trusted_model_)), fallback_);
  }
  deadline.check("resolve EPContext nodes");
  {
    auto span = profile(p, "session", "expand functions");
    expand_functions(*model_, graph_, providers_);
  }
  deadline.check("expand functions");
  {
    auto span = profile(p, "session", "graph transforms");
    transform_graph(*graph_, config_, env_, deadline);
  }
  deadline.check("graph transforms");
  inputs_ = graph_->required_inputs();
  std::vector<GraphPartition> partitions;
  {
    auto span = profile(p, "session", "partition");
    partitions = partition_graphs(*graph_, providers_, contexts_, generation);
    drop_precomputed_steps(*graph_, partitions);
  }
  freeze(*graph_);  // from here concurrent Runs read the IR: no edit may change it
  deadline.check("partition");
  std::function<void(size_t, size_t)> progress;
  if (options_.progress)
    progress = [this](size_t done, size_t total) { options_.progress("compile", done, total, options_.progress_user); };
  std::shared_ptr<SessionPlan> first_plan = make_first_plan(std::move(partitions), generation, progress, deadline);
  plan_ = first_plan;
  context_diagnostics_ = std::move(contexts_.diagnostics);
  contexts_.diagnostics.clear();
  if (generation.enabled) {
    auto span = profile(p, "session", "generate EPContext model");
    generate_context_model(generation, *model_, main_executor(), providers_.instances, env_.context_share());
  }
  // After the EPContext model was written from them: no writing in flight needs the bytes.
  free_done_initializers(*graph_, *first_plan);
  if (config_.ep_context.rebuild) start_context_rebuild();
  log_verbose(fmt::format("session creation: {} IR build(s), {} whole-model shape inference(s)",
                        creation_counts_.ir_builds, creation_counts_.shape_inferences));
}

std::shared_ptr<SessionPlan> Session::make_plan(std::vector<GraphPartition> partitions,
                                               const std::function<void(size_t, size_t)>& progress,
                                               const CreationDeadline& deadline, bool free_while_compiling) const {
  Profiler* p = profiler_.get();
  std::vector<std::unique_ptr<CompiledGraph>> compiled;
  size_t freed_while_compiling = 0;
  {
    auto span = profile(p, "session", "compile");
    std::optional<FreeingWhileCompiling> freeing;
    std::function<void(const Graph&, const CompiledStep&)> step_compiled;
    if (free_while_compiling) {
      freeing.emplace(*graph_, partitions);
      step_compiled = [&](const Graph& graph, const CompiledStep& step) { freeing->step_compiled(graph, step); };
    }
    compiled = compile_graphs(std::move(partitions), providers_, progress, deadline, step_compiled);
    if (freeing && freeing->freed_count() > 0) {
      freed_while_compiling = freeing->freed_count();
      log_info(fmt::format("freed {} initializer(s), {:.1f} MB, while compiling, as the steps reading them packed them",
                           freed_while_compiling, static_cast<double>(freeing->freed_bytes()) / (1024.0 * 1024.0)));
    }
  }
  std::vector<GraphPlan> plans;
  {
    auto span = profile(p, "session", "plan");
    plans = plan_graphs(compiled, config_);
  }
  deadline.check("plan");
  auto plan = std::make_shared<SessionPlan>();
  {
    auto span = profile(p, "session", "create executors");
    create_executors(std::move(compiled), std::move(plans), config_, p, plan->executors);
  }
  plan->initializers_freed_while_compiling = freed_while_compiling;
  return plan;
}

std::shared_ptr<SessionPlan> Session::make_first_plan(std::vector<GraphPartition> partitions,
                                                     const GenerationSettings& generation,
                                                     const std::function<void(size_t, size_t)>& progress,
                                                     const CreationDeadline& deadline) {
  try {
    // An EPContext model is written from this plan's initializers: they are freed after that.
    return make_plan(std::move(partitions), progress, deadline, !generation.enabled);
  } catch (const std::exception&) {
    // Any other failure is the session's: a device provider that fell back is left out instead.
    if (!fallback_.pending()) throw;
  }
  std::shared_ptr<SessionPlan> plan;
  fallback_.plan_again_if_pending(providers_, [&](const std::vector<std::string>& left_out) {
    auto span = profile(profiler_.get(), "session", "plan again after a provider fell back");
    try {
      plan = make_plan(partition_without(left_out, generation), progress, deadline, !generation.enabled);
    } catch (const std::exception& e) {
      fail(EPHOST_EP_FAIL, "{}; planning the session without it failed: {}", left_out_summary(left_out), e.what());
    }
    plan->left_out = left_out;
    log_warning(fmt::format("{} (while the session was created)", left_out_summary(left_out)));
  });
  if (!plan) fail(EPHOST_FAIL, "a provider fell back while the session was created, but no plan was made (internal error)");
  return plan;
}

std::shared_ptr<const SessionPlan> Session::plan() const {
  std::lock_guard<std::mutex> lock(plan_mutex_);
  return plan_;
}

std::vector<GraphPartition> Session::partition_without(const std::vector<std::string>& left_out,
                                                       const GenerationSettings& generation) const {
  std::vector<PartitionOptions::Preassigned> replacing;
  if (context_sources_) replacing = context_sources_->replacements(left_out);
  std::vector<GraphPartition> partitions =
      partition_graphs(*graph_, providers_, contexts_, generation, left_out, replacing);
  drop_precomputed_steps(*graph_, partitions);  // those whose outputs became initializers at creation
  return partitions;
}

void Session::plan_again_without(const std::vector<std::string>& left_out) const {
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<SessionPlan> next;
  try {
    auto span = profile(profiler_.get(), "session", "plan again after a provider fell back");
    // No progress reports: the application's callback belongs to the session's creation.
    // Freed after the plan, as before: this is a run-time re-plan (the peak that matters is creation's).
    next = make_plan(partition_without(left_out, GenerationSettings{}), {}, {}, false);
    free_done_initializers(*graph_, *next);  // what the providers now reading them packed again
  } catch (const std::exception& e) {
    fail(EPHOST_EP_FAIL, "{}; planning the session again without it failed: {}", left_out_summary(left_out), e.what());
  }
  next->left_out = left_out;
  std::shared_ptr<const SessionPlan> old;
  {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    old = std::move(plan_);
    plan_ = std::move(next);
  }
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  log_warning(fmt::format("{} (planned again in {:.1f} ms)", left_out_summary(left_out), ms));
  // `old` goes here, or with the last run still on it.
}

void Session::start_context_rebuild() {
  const ContextDiagnostic* rejected = nullptr;
  for (const ContextDiagnostic& d : context_diagnostics_)
    if (d.fell_back && !d.source_model.empty()) rejected = &d;
  if (!rejected) return;
  if (model_->path.empty()) {
    log_warning("ep.context_rebuild=1: the ctx model came from a buffer; the rebuild needs a ctx model file");
    return;
  }
  SessionOptions options = options_;
  // The compile session makes an ordinary model's contexts: nothing of loading, sharing or rebuilding.
  for (const char* key : {kEphostSessionOptionsEpContextRebuild, kEphostSessionOptionsShareEpContexts,
                          kEphostSessionOptionsStopShareEpContexts, kEphostSessionOptionsEpContextSourceModelPath,
                          kEphostSessionOptionsEnableProfiling})
    options.config.erase(key);
  // The caller's progress callback belongs to this session's creation (its `user` may be gone by
  // now): the background compile reports nothing.
  options.progress = nullptr;
  options.progress_user = nullptr;
  options.provider_state = nullptr;
  rebuild_ = std::make_unique<ContextRebuild>(env_, std::move(options), model_->path, rejected->source_model,
                                              rejected->embed_mode == 1);
}

std::string Session::model_metadata_json() const { return metadata_json_; }

std::vector<Session::ProviderState> Session::provider_states() const {
  std::vector<ProviderState> out;
  for (const auto& p : providers_.instances) {
    ProviderState state;
    state.provider = p->name();
    if (const auto* isolated = dynamic_cast<const IsolatedProvider*>(p.get())) {
      state.isolated = true;
      state.health = isolated->health();
    }
    out.push_back(std::move(state));
  }
  return out;
}

std::vector<RuntimeValue> Session::run(const std::vector<std::string>& input_names,
                                       const std::vector<RuntimeValue>& inputs,
                                       const std::vector<std::string>& output_names, const OutputRequests* requests,
                                       RunCopyStats* stats, const RunLimits* limits) const {
  if (limits) limits->check();
  if (fallback_.pending())
    fallback_.plan_again_if_pending(providers_, [this](const std::vector<std::string>& left_out) {
      plan_again_without(left_out);
    });
  const std::shared_ptr<const SessionPlan> plan = this->plan();  // kept until this run returns
  const auto feeds = bind_run_inputs(*graph_, input_names, inputs, model_->overridden_dimensions);
  const std::vector<size_t> picks = pick_run_outputs(*graph_, output_names);
  OutputRequests by_output;
  if (requests) {
    if (requests->size() != picks.size())
      fail(EPHOST_INVALID_ARGUMENT, "{} output requests for {} outputs", requests->size(), picks.size());
    by_output.resize(graph_->outputs.size());
    for (size_t i = 0; i < picks.size(); ++i) by_output[picks[i]] = (*requests)[i];
  }
  // on_run_end is called for every provider whose on_run_start succeeded, whatever happens after.
  const auto& providers = providers_.instances;
  size_t started = 0;
  auto end_started = [&](bool rethrow_errors) {
    for (size_t i = 0; i < started; ++i) {
      try {
        providers[i]->run_end();
      } catch (...) {
        if (rethrow_errors) throw;
      }
    }
  };
  auto span = profile(profiler_.get(), "session", "model run");
  std::vector<RuntimeValue> all;
  try {
    for (; started < providers.size(); ++started) providers[started]->run_start();
    const GraphExecutor& executor = plan->executor(*graph_);
    sync_device_input_readers(executor, feeds);
    all = executor.run(feeds, nullptr, by_output, stats, limits);
    std::vector<const Value*> handed_over;
    for (size_t i : picks) handed_over.push_back(graph_->outputs[i]);
    sync_output_writers(executor, handed_over);
  } catch (...) {
    end_started(false);
    throw;
  }
  end_started(true);
  std::vector<RuntimeValue> out;
  for (size_t i : picks) out.push_back(all[i]);
  return out;
}

}  // namespace ephost
