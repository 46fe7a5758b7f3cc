#include "session/context_source_fallback.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "core/error.h"
#include "core/log.h"
#include "epcontext/context_schema.h"
#include "epcontext/source_fallback.h"
#include "graph/type_proto.h"
#include "isolation/fallback_group.h"
#include "isolation/isolated_provider.h"
#include "model/loader.h"

namespace ephost {
namespace {

// The provider that runs the source nodes: the built-in CPU plugin, as for every isolated provider's
// fallback (provider_selection/provider_setup.cpp).
constexpr const char* kCpuProvider = "cpu";

// An EPContext node's source nodes, as one fused step: the graph they were cut into, and the CPU
// plugin's kernels for them.
class SourceNodes final : public ComputeUnit {
 public:
  SourceNodes(const std::string& name, std::unique_ptr<Model> model, std::unique_ptr<Graph> graph)
      : ComputeUnit(true, name), model_(std::move(model)), graph_(std::move(graph)) {}
  ~SourceNodes() override { group.reset(); }  // the kernels before the graph they were made for

  std::unique_ptr<FallbackGroup> group;

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Graph> graph_;
};

void declare(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list, const Value& v, const Node& context) {
  onnx::ValueInfoProto& info = *list.Add();
  info.set_name(v.name);
  if (!type_proto_from_info(v.type, info.mutable_type()))
    fail(EPHOST_EP_FAIL, "EPContext node '{}': value '{}' has no tensor type the source nodes can be run with",
         context.name, v.name);
}

// A model of `partition` alone: its inputs and outputs are the EPContext node's (typed as the ctx model
// has them), its nodes and initializers the source model's.
std::string source_nodes_model(const Node& context, const SourcePartition& partition, const onnx::ModelProto& source) {
  onnx::ModelProto m;
  m.set_ir_version(source.ir_version());
  *m.mutable_opset_import() = source.opset_import();
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(context.name + "_source_nodes");
  std::set<std::string> declared;
  for (const Value* v : context.inputs)
    if (v && declared.insert(v->name).second) declare(*g.mutable_input(), *v, context);
  for (const Value* v : context.outputs)
    if (v) declare(*g.mutable_output(), *v, context);
  for (const onnx::NodeProto& n : partition.nodes) *g.add_node() = n;
  for (const onnx::TensorProto* t : partition.initializers) *g.add_initializer() = *t;
  return m.SerializeAsString();
}

}  // namespace

// Runs SourceNodes steps in the place of the CPU plugin, on its device (none): the executor hands a
// step's unit to the step's provider (exec/graph_executor.cpp), and the CPU plugin's own units are not these.
class ContextSourceFallback::Runner final : public Provider {
 public:
  explicit Runner(const Provider& cpu) : Provider(cpu.record(), cpu.device()), cpu_(cpu) {}

  const Provider& cpu() const { return cpu_; }

  std::vector<EphostCapability::Claim> claims(const GraphView&, const char*) const override { return {}; }
  std::unique_ptr<ComputeUnit> create_kernel(const Node& node) const override { refuse("create_kernel", node.name); }
  std::unique_ptr<ComputeUnit> compile(const GraphView&, const std::string& fused_name) const override {
    refuse("compile", fused_name);
  }
  void create_state(ComputeUnit&) const override {}  // the kernels are single-node: no state
  void compute(const ComputeUnit& unit, EphostKernelContext* context) const override {
    static_cast<const SourceNodes&>(unit).group->compute(context);
  }
  void run_start() const override {}  // the CPU plugin itself is among the session's providers
  void run_end() const override {}
  bool observes_runs() const override { return false; }
  bool emits_contexts() const override { return false; }
  void emit_context(const std::string& fused_name, EphostContextSink&) const override {
    refuse("context_emit", fused_name);
  }
  std::optional<ContextJudgement> judge_context(const Node& node, const void*, size_t) const override {
    refuse("context_judge", node.name);
  }
  std::unique_ptr<ComputeUnit> load_context(const Node& node, const void*, size_t) const override {
    refuse("context_load", node.name);
  }

 private:
  [[noreturn]] static void refuse(const char* call, const std::string& what) {
    fail(EPHOST_FAIL, "{} for '{}' was asked of the source nodes' runner, which only runs them (internal error)",
         call, what);
  }

  const Provider& cpu_;
};

ContextSourceFallback::ContextSourceFallback(const Model& model, const Graph& main, const ProviderSet& providers,
                                             const ContextResolution& contexts, const ContextLoadSettings& settings,
                                             ProviderFallback& fallback)
    : providers_(providers), settings_(settings) {
  std::map<size_t, std::string> blocked;  // provider -> why it cannot hand its work on
  for (const auto& [name, loaded] : contexts.loaded) {
    auto* isolated = dynamic_cast<IsolatedProvider*>(providers.instances.at(loaded.provider).get());
    const Node* node = nullptr;
    for (const auto& n : main.nodes)
      if (n->name == name && n->op_type == epctx::kOpType) node = n.get();
    if (!isolated || !node) continue;
    Entry entry;
    entry.node = node;
    entry.provider = loaded.provider;
    entry.source = find_context_source_model(*node, model, settings_);
    if (entry.source.path.empty() && !blocked.count(loaded.provider))
      blocked[loaded.provider] = fmt::format("EPContext node '{}' has no source model to run instead of its context: "
                                             "it {}",
                                             name, entry.source.missing);
    if (!isolated->values_on_device()) fallback.plan_again_for(isolated);
    entries_.push_back(std::move(entry));
  }
  for (const auto& [provider, why] : blocked) {
    auto* isolated = static_cast<IsolatedProvider*>(providers.instances[provider].get());
    isolated->set_fallback_blocked(why);
    log_info(fmt::format("provider '{}' is restarted rather than falling back: {}", isolated->name(), why));
  }
}

ContextSourceFallback::~ContextSourceFallback() = default;

std::vector<PartitionOptions::Preassigned> ContextSourceFallback::replacements(const std::vector<std::string>& left_out) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<PartitionOptions::Preassigned> out;
  for (Entry& entry : entries_) {
    if (entry.provider >= left_out.size() || left_out[entry.provider].empty()) continue;
    if (!entry.replacement.compute) entry.replacement = make_replacement(entry);
    out.push_back(entry.replacement);
  }
  return out;
}

PartitionOptions::Preassigned ContextSourceFallback::make_replacement(const Entry& entry) {
  const Node& node = *entry.node;
  const std::string& provider = providers_.names[entry.provider];
  if (entry.source.path.empty())
    fail(EPHOST_EP_FAIL, "provider '{}' fell back, but EPContext node '{}' has no source model to run instead of its "
         "context: it {}", provider, node.name, entry.source.missing);
  size_t cpu = providers_.names.size();
  for (size_t i = 0; i < providers_.names.size(); ++i)
    if (providers_.names[i] == kCpuProvider) cpu = i;
  if (cpu == providers_.names.size())
    fail(EPHOST_EP_FAIL, "provider '{}' fell back, and the source nodes of its EPContext node '{}' need the CPU "
         "plugin, which this session leaves out (session.disable_cpu_ep_fallback=1?)", provider, node.name);
  if (!runner_) runner_ = std::make_unique<Runner>(*providers_.instances[cpu]);

  auto& source = sources_[entry.source.path];
  if (!source) {
    LoadOptions load = settings_.source_load;
    load.infer_shapes = false;  // only the partition's nodes are typed, in their own model below
    source = load_model_from_file(entry.source.path, load);
  }
  const SourcePartition partition = cut_source_partition(node, *source->proto, entry.source.path);
  const std::string bytes = source_nodes_model(node, partition, *source->proto);
  LoadOptions load;
  load.run_checker = true;
  load.infer_shapes = true;
  std::unique_ptr<Model> model = load_model_from_buffer(bytes.data(), bytes.size(), load);
  std::unique_ptr<Graph> graph = build_graph_ir(*model);
  release_initializer_data(*model->proto);  // the IR holds them now

  auto view = std::make_unique<GraphView>();
  view->name = node.name;
  view->graph = graph.get();
  for (const Node* n : graph->topological_order) view->nodes.push_back(n);
  auto boundary = [&](const std::vector<Value*>& values, std::vector<const Value*>& out) {
    for (const Value* v : values) {
      if (!v) continue;
      const Value* inside = graph->find(v->name);
      if (!inside)
        fail(EPHOST_EP_FAIL, "EPContext node '{}': its source nodes in '{}' lack value '{}'", node.name,
             entry.source.path, v->name);
      out.push_back(inside);
    }
  };
  boundary(node.inputs, view->inputs);
  boundary(node.outputs, view->outputs);

  const size_t count = view->nodes.size();
  auto unit = std::make_shared<SourceNodes>(node.name, std::move(model), std::move(graph));
  unit->group = std::make_unique<FallbackGroup>(runner_->cpu(), std::move(view));
  log_warning(fmt::format("provider '{}' fell back: EPContext node '{}' runs as {} node(s) of its source model '{}' ({}) "
                          "on provider '{}'",
                          provider, node.name, count, entry.source.path, entry.source.how, kCpuProvider));
  PartitionOptions::Preassigned replacement;
  replacement.node = &node;
  replacement.provider = cpu;
  replacement.compute = std::move(unit);
  replacement.runner = runner_.get();
  return replacement;
}

}  // namespace ephost
