#include "session/session.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>

#include "abi/handles.h"
#include "core/error.h"
#include "core/log.h"
#include "epcontext/context_generation.h"
#include "epcontext/context_loading.h"
#include "epcontext/context_schema.h"
#include "model/loader.h"
#include "partition/partition.h"
#include "session/constant_evaluator.h"
#include "session/unclaimed_functions.h"
#include "transform/pass.h"

namespace ephost {
namespace {

constexpr const char* kCpuProvider = "cpu";
// The plugin ABI version that brought sequence and optional values (ephost_plugin.h).
constexpr uint32_t kAbiNonTensorValues = 2;

std::string describe_value(const Value& v) {
  if (v.type.is_non_tensor()) {
    const bool optional = v.type.kind == EPHOST_VALUE_OPTIONAL;
    const bool sequence = v.type.kind == EPHOST_VALUE_SEQUENCE || v.type.optional_kind == EPHOST_VALUE_SEQUENCE;
    return fmt::format("'{}' ({}{}{})", v.name, optional ? "optional " : "", sequence ? "sequence of " : "",
                       element_type_name(v.type.tensor_elem_type));
  }
  std::string dims;
  if (v.type.has_shape) {
    dims = " [";
    for (size_t i = 0; i < v.type.dims.size(); ++i) {
      if (i) dims += ",";
      bool named = i < v.type.dim_params.size() && !v.type.dim_params[i].empty();
      dims += v.type.dims[i] >= 0 ? std::to_string(v.type.dims[i]) : (named ? v.type.dim_params[i] : "?");
    }
    dims += "]";
  }
  return fmt::format("'{}' ({}{})", v.name, element_type_name(v.type.elem_type), dims);
}

std::string list_values(const std::vector<Value*>& values) {
  std::string s;
  for (const Value* v : values) s += (s.empty() ? "" : ", ") + describe_value(*v);
  return s.empty() ? "none" : s;
}

// Provider i's claims on `view`, through its get_capability.
CapabilityQuery capability_query(const std::vector<std::unique_ptr<ProviderInstance>>& providers) {
  return [&providers](size_t i, const GraphView& view) {
    EphostCapability capability;
    capability.graph = &view;
    const ProviderInstance& p = *providers[i];
    // Plugins that speak ABI 1 cannot read sequence or optional values: their claims on such nodes are refused.
    capability.non_tensor_values = p.record().abi_version >= kAbiNonTensorValues;
    p.call("get_capability", [&] { return p.plugin().get_capability(p.handle(), to_handle(&view), &capability); });
    return std::move(capability.claims);
  };
}

LoadOptions load_options(const SessionOptions& options) {
  LoadOptions lo;
  lo.external_data_folder = options.get("session.model_external_initializers_file_folder_path");
  lo.run_checker = !options.trusted_model;
  lo.infer_shapes = !options.trusted_model;
  return lo;
}

}  // namespace

Session::Session(Env& env, const SessionOptions& options) : env_(env), options_(options) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::create_from_file(Env& env, const std::string& path, const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(env, options));
  s->initialize(load_model_from_file(path, load_options(options)));
  return s;
}

std::unique_ptr<Session> Session::create_from_buffer(Env& env, const void* data, size_t size,
                                                     const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(env, options));
  s->initialize(load_model_from_buffer(data, size, load_options(options)));
  return s;
}

void Session::initialize(std::unique_ptr<Model> model) {
  model_ = std::move(model);
  create_providers();
  const GenerationSettings generation = read_generation_settings(options_, model_->path);
  // An EPContext model: providers load their cached contexts first; what cannot be used is replaced
  // by the source model's nodes before graph transforms see the graph.
  ContextResolution contexts;
  if (epctx::has_context_nodes(model_->proto->graph())) {
    if (generation.enabled)
      fail(EPHOST_INVALID_ARGUMENT,
           "ep.context_enable=1 on a model that already has EPContext nodes; compile the source model instead");
    contexts = resolve_contexts(*model_, providers_, read_context_load_settings(options_, load_options(options_)),
                                env_);
  }
  transform(*model_);
  build_graph_ir(*model_);
  index_node_attributes(*model_->main);
  // Nodes no provider claims run as their function bodies where their ops have one (rebuilds the IR).
  if (size_t n = expand_unclaimed_functions(*model_, capability_query(providers_), providers_.size()))
    log_info(fmt::format("{} node(s) no provider claimed were replaced by their function bodies", n));
  release_initializer_data(*model_->proto);
  inputs_ = model_->main->required_inputs();

  PartitionOptions main_options;
  if (generation.enabled) main_options.fused_name_prefix = generation.node_prefix + generation.model_name + "_";
  for (const auto& n : model_->main->nodes) {
    if (n->op_type != epctx::kOpType) continue;
    auto it = contexts.loaded.find(n->name);
    if (it != contexts.loaded.end()) main_options.preassigned.push_back({n.get(), it->second.provider, it->second.compute});
  }
  if (!contexts.excluded.empty()) {
    const auto& excluded = contexts.excluded;
    main_options.excluded = [&excluded](size_t provider, const Node& node) {
      auto it = excluded.find(node.name);
      return it != excluded.end() && it->second == provider;
    };
  }
  context_diagnostics_ = std::move(contexts.diagnostics);
  partition_and_compile(*model_->main, &main_options);
  if (generation.enabled) generate_context_model(generation, *model_, main_executor(), providers_, env_);
}

void Session::transform(Model& model) {
  int level = options_.level();
  if (level <= 0) return;
  TransformContext context;
  context.level = level;
  if (env_.registry().find_loaded(kCpuProvider)) context.evaluate = make_constant_evaluator(env_);
  size_t total = 0;
  for (const PassResult& r : default_pipeline().run(*model.proto, context)) {
    if (r.rewrites) log_info(fmt::format("graph transform '{}': {} rewrite(s)", r.pass, r.rewrites));
    total += r.rewrites;
  }
  if (total) infer_model_shapes(model);
}

void Session::create_providers() {
  const PluginRegistry& registry = env_.registry();
  cpu_fallback_ = !options_.get_flag("session.disable_cpu_ep_fallback", false);
  std::vector<ProviderRequest> requests = options_.providers;
  std::set<std::string> seen;
  for (const auto& r : requests) {
    if (!seen.insert(r.name).second)
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}' is listed twice in the session options", r.name);
    if (r.name == kCpuProvider && !cpu_fallback_)
      fail(EPHOST_INVALID_ARGUMENT,
           "session.disable_cpu_ep_fallback=1 cannot be combined with listing the CPU provider explicitly");
  }
  if (requests.empty()) {
    for (const PluginRecord* rec : registry.loaded_by_priority())
      if (rec->name != kCpuProvider) requests.push_back({rec->name, {}});
  }
  if (cpu_fallback_ && !seen.count(kCpuProvider)) requests.push_back({kCpuProvider, {}});

  const std::string threads = std::to_string(options_.threads());
  for (const ProviderRequest& request : requests) {
    const PluginRecord* rec = registry.find_loaded(request.name);
    if (!rec) {
      std::string loaded, skipped;
      for (const auto& r : registry.records()) {
        if (r->loaded)
          loaded += (loaded.empty() ? "" : ", ") + r->name;
        else if (!r->name.empty() && r->name == request.name)
          skipped = fmt::format(" A plugin named '{}' was found at {} but skipped: {}.", r->name, r->path, r->reason);
      }
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}' is not available; loaded providers: {}.{} Plugins are searched in "
           "EPHOST_PLUGIN_PATH and the default plugin directory ('ephost plugins' lists what was found).",
           request.name, loaded.empty() ? "none" : loaded, skipped);
    }
    std::vector<std::pair<std::string, std::string>> opts = request.options;
    // ep.<name>.<key> session entries, as ONNX Runtime forwards plugin options (it lowercases the name).
    std::string lower = request.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const std::string& prefix : std::set<std::string>{"ep." + request.name + ".", "ep." + lower + "."})
      for (auto it = options_.config.lower_bound(prefix);
           it != options_.config.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
        opts.emplace_back(it->first.substr(prefix.size()), it->second);
    opts.emplace_back("intra_op_num_threads", threads);
    providers_.push_back(std::make_unique<ProviderInstance>(*rec, opts));
    provider_names_.push_back(rec->name);
  }
}

void Session::partition_and_compile(const Graph& graph, const PartitionOptions* main_options) {
  std::vector<ProviderInstance*> providers;
  for (auto& p : providers_) providers.push_back(p.get());
  CapabilityQuery query = capability_query(providers_);
  std::string hint = cpu_fallback_
                         ? "The built-in CPU plugin does not support these operators (or these types) yet."
                         : "session.disable_cpu_ep_fallback=1 keeps the built-in CPU plugin out: unset it, or add a "
                           "provider that supports these nodes.";
  PartitionOptions options = main_options ? *main_options : PartitionOptions{};
  options.unclaimed_hint = hint;
  GraphPartition partition = partition_graph(graph, provider_names_, query, options);
  ExecOptions exec;
  exec.enable_mem_pattern = options_.get_flag("session.enable_mem_pattern", true);
  exec.enable_mem_reuse = options_.get_flag("session.enable_mem_reuse", true);
  exec.num_threads = options_.threads();
  executors_[&graph] = std::make_unique<GraphExecutor>(graph, std::move(partition), providers, exec, executors_);
  for (const auto& node : graph.nodes)
    for (const auto& sub : node->subgraphs) partition_and_compile(*sub.second);
}

namespace {

// Throws unless `value` fits `v`'s declared type: kind, element type, and for tensors the shape.
void check_input(const Value& v, const RuntimeValue& value) {
  const TypeInfo& type = v.type;
  const int32_t kind = type.kind;
  if (!value.is_set()) fail(EPHOST_INVALID_ARGUMENT, "input {} is given no value", describe_value(v));
  if (kind == EPHOST_VALUE_UNDEFINED) return;  // no declared type (only a model built without one)
  if (kind == EPHOST_VALUE_SEQUENCE || (kind == EPHOST_VALUE_OPTIONAL && type.optional_kind == EPHOST_VALUE_SEQUENCE)) {
    if (value.is_none() && kind == EPHOST_VALUE_OPTIONAL) return;
    if (!value.is_sequence())
      fail(EPHOST_INVALID_ARGUMENT, "input '{}' is declared a {} of {} tensors, got a {}", v.name,
           kind == EPHOST_VALUE_OPTIONAL ? "optional sequence" : "sequence", element_type_name(type.tensor_elem_type),
           value.describe());
    const int32_t et = value.sequence().elem_type;
    if (type.tensor_elem_type != 0 && et != type.tensor_elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected a sequence of {} tensors, got one of {} tensors", v.name,
           element_type_name(type.tensor_elem_type), element_type_name(et));
    return;
  }
  if (kind == EPHOST_VALUE_OPTIONAL) {
    if (value.is_none()) return;
    if (!value.is_tensor() && type.optional_kind == EPHOST_VALUE_TENSOR)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}' is declared an optional {} tensor, got a {}", v.name,
           element_type_name(type.tensor_elem_type), value.describe());
    if (value.is_tensor() && type.tensor_elem_type != 0 && value.tensor().elem_type() != type.tensor_elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected element type {}, got {}", v.name,
           element_type_name(type.tensor_elem_type), element_type_name(value.tensor().elem_type()));
    return;
  }
  if (!value.is_tensor())
    fail(EPHOST_INVALID_ARGUMENT, "input {} is a tensor, got a {}", describe_value(v), value.describe());
  const Tensor& t = value.tensor();
  if (type.elem_type != 0 && t.elem_type() != type.elem_type)
    fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected element type {}, got {}", v.name,
         element_type_name(type.elem_type), element_type_name(t.elem_type()));
  if (type.has_shape) {
    if (t.shape().size() != type.dims.size())
      fail(EPHOST_INVALID_ARGUMENT, "input {}: expected rank {}, got shape {}", describe_value(v), type.dims.size(),
           shape_to_string(t.shape()));
    for (size_t d = 0; d < t.shape().size(); ++d)
      if (type.dims[d] >= 0 && type.dims[d] != t.shape()[d])
        fail(EPHOST_INVALID_ARGUMENT, "input {}: dimension {} must be {}, got shape {}", describe_value(v), d,
             type.dims[d], shape_to_string(t.shape()));
  }
}

}  // namespace

std::vector<std::pair<const Value*, RuntimeValue>> Session::bind_inputs(const std::vector<std::string>& names,
                                                                      const std::vector<RuntimeValue>& values) const {
  const Graph& g = *model_->main;
  if (names.size() != values.size())
    fail(EPHOST_INVALID_ARGUMENT, "{} input names but {} input values", names.size(), values.size());
  std::vector<const RuntimeValue*> bound(g.values.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    const Value* v = g.find(names[i]);
    if (!v || !v->is_graph_input)
      fail(EPHOST_INVALID_ARGUMENT, "unknown input '{}'; the model's inputs are: {}", names[i], list_values(inputs_));
    if (bound[v->index]) fail(EPHOST_INVALID_ARGUMENT, "input '{}' is given twice", names[i]);
    check_input(*v, values[i]);
    bound[v->index] = &values[i];
  }
  std::vector<std::pair<const Value*, RuntimeValue>> feeds;
  std::vector<std::string> missing;
  for (const Value* v : g.inputs) {
    if (bound[v->index])
      feeds.emplace_back(v, *bound[v->index]);
    else if (!v->initializer)
      missing.push_back(describe_value(*v));
  }
  if (!missing.empty()) {
    std::string m;
    for (const auto& s : missing) m += (m.empty() ? "" : ", ") + s;
    fail(EPHOST_INVALID_ARGUMENT, "missing input(s): {}", m);
  }
  return feeds;
}

std::vector<RuntimeValue> Session::run(const std::vector<std::string>& input_names,
                                       const std::vector<RuntimeValue>& inputs,
                                       const std::vector<std::string>& output_names) const {
  auto feeds = bind_inputs(input_names, inputs);
  const Graph& g = *model_->main;
  std::vector<size_t> picks;
  if (output_names.empty()) {
    for (size_t i = 0; i < g.outputs.size(); ++i) picks.push_back(i);
  } else {
    for (const std::string& name : output_names) {
      auto it = std::find_if(g.outputs.begin(), g.outputs.end(), [&](const Value* v) { return v->name == name; });
      if (it == g.outputs.end())
        fail(EPHOST_INVALID_ARGUMENT, "unknown output '{}'; the model's outputs are: {}", name, list_values(g.outputs));
      picks.push_back(static_cast<size_t>(it - g.outputs.begin()));
    }
  }
  // Every provider whose on_run_start succeeded gets its on_run_end, also when a later provider's
  // on_run_start or the run itself fails (ephost_plugin.h: "on_run_end is called even when the run
  // failed"), as ONNX Runtime does.
  std::vector<const ProviderInstance*> started;
  std::vector<RuntimeValue> all;
  try {
    for (const auto& p : providers_) {
      if (p->plugin().on_run_start) p->call("on_run_start", [&] { return p->plugin().on_run_start(p->handle()); });
      started.push_back(p.get());
    }
    all = main_executor().run(feeds, nullptr);
  } catch (...) {
    for (const ProviderInstance* p : started)
      if (p->plugin().on_run_end) {
        try {
          p->call("on_run_end", [&] { return p->plugin().on_run_end(p->handle()); });
        } catch (...) {
        }
      }
    throw;
  }
  for (const ProviderInstance* p : started)
    if (p->plugin().on_run_end) p->call("on_run_end", [&] { return p->plugin().on_run_end(p->handle()); });
  std::vector<RuntimeValue> out;
  for (size_t i : picks) out.push_back(all[i]);
  return out;
}

}  // namespace ephost
