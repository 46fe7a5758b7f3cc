#include "provider/ort_ep_provider.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>

#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "discovery/plugin_registry.h"
#include "model/initializer_release.h"
#include "model/model.h"
#include "ort_ep/call_arena.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/kernel_context.h"
#include "ort_ep/ort_device.h"
#include "ort_ep/plugin_call.h"
#include "ort_ep/prepacked_weights.h"

namespace ephost {
namespace {

// ONNX Runtime's error codes 0..11 are ephost's (EphostStatusCode); later ones are a provider failure.
EphostStatusCode ephost_code(OrtErrorCode code) {
  return code >= ORT_OK && code <= ORT_EP_FAIL ? static_cast<EphostStatusCode>(code) : EPHOST_EP_FAIL;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const OrtRunOptions& run_options() {
  static const OrtRunOptions options;
  return options;
}

}  // namespace

// A fused group's compiled unit: the plugin's OrtNodeComputeInfo, its state, the fused node handed to
// Compile (kept: the plugin may hold its address), and the element types of its outputs (what
// KernelContext_GetOutput allocates). Given back to the plugin when destroyed.
class OrtEpProvider::Unit final : public ComputeUnit {
 public:
  Unit(const OrtEpProvider& owner, std::string name) : ComputeUnit(true, std::move(name)), owner(owner) {}
  ~Unit() override {
    ort_ep::call_plugin_void(owner.name().c_str(), owner.library_path(), "ReleaseState / ReleaseNodeComputeInfos",
                             [&] {
                               if (info && state && info->ReleaseState) info->ReleaseState(info, state);
                               if (info && owner.ep_->ReleaseNodeComputeInfos)
                                 owner.ep_->ReleaseNodeComputeInfos(owner.ep_, &info, 1);
                             });
  }

  const OrtEpProvider& owner;
  OrtNodeComputeInfo* info = nullptr;
  void* state = nullptr;
  Node fused_node;
  std::vector<int32_t> output_elem_types;
};

// A single node's kernel from the EP's registry: the OrtKernelImpl its create function made, the
// OrtKernelInfo it was made from (kept as long as the kernel, which may read it later), the element
// types of the node's outputs (what KernelContext_GetOutput allocates), and the shared pre-packed weights
// it was handed (SetSharedPrePackedWeight; kept until the kernel is released). Released through the kernel.
class OrtEpProvider::KernelUnit final : public ComputeUnit {
 public:
  KernelUnit(const OrtEpProvider& owner, const Node& node) : ComputeUnit(false, node.name), owner(owner) {}
  // The kernel definition's aliases (Alias: the output is the input's bytes) and mutable aliases
  // (MayInplace: the kernel may overwrite the input): both let the planner give the output the input's
  // buffer when this node is the input's last reader. An Alias output that did not get it is filled
  // with the input's bytes when the kernel asks for it (KernelContext_GetOutput).
  void declare_aliases(const OrtKernelDef& def) {
    std::vector<std::pair<int, int>> pairs = def.aliases;
    pairs.insert(pairs.end(), def.mutable_aliases.begin(), def.mutable_aliases.end());
    set_in_place(std::move(pairs));
    alias_outputs = def.aliases;
  }
  ~KernelUnit() override {
    if (!kernel) return;
    ort_ep::call_plugin_void(owner.name().c_str(), owner.library_path(), "OrtKernelImpl::Release", [&] {
      if (kernel->Release) kernel->Release(kernel);
    });
  }

  const OrtEpProvider& owner;
  OrtKernelInfo info;
  OrtKernelImpl* kernel = nullptr;
  std::vector<int32_t> output_elem_types;
  std::vector<std::shared_ptr<const ort_ep::SharedPrePackedWeight>> shared_weights;
  std::vector<std::pair<int, int>> alias_outputs;  // (input, output) of KernelDefBuilder_AddInputOutputAliases
};

template <typename Describe, typename Fn>
void OrtEpProvider::call(const char* what, Describe&& describe, Fn&& fn) const {
  InitializerReaderScope reader(this);  // the initializers it is handed are noted under its name
  if (auto failure = ort_ep::call_plugin(name().c_str(), library_path(), what, std::forward<Fn>(fn)))
    throw Error(ephost_code(failure->code), fmt::format("provider '{}' {}: {} ({})", name(), describe(),
                                                        failure->message, ort_ep::error_code_name(failure->code)));
}

OrtEpProvider::OrtEpProvider(const PluginRecord& record,
                             const std::vector<std::pair<std::string, std::string>>& options, const Device* device)
    : Provider(record, device), library_(*record.ort) {
  // The record is one factory's provider: its devices are that factory's.
  const std::vector<const OrtEpDevice*> devices = library_.served_devices(record.ort_factory);
  const size_t index = device ? device->index() : 0;
  if (index >= devices.size())
    fail(EPHOST_EP_FAIL, "provider '{}': its factory listed {} devices it can serve (GetSupportedDevices), none to create an EP on{}",
         name(), devices.size(), device ? fmt::format(" (device {} asked for)", device->label()) : std::string());
  ep_device_ = devices[index];
  factory_ = library_.factory_of(ep_device_);
  ep_name_ = library_.factory_name_of(ep_device_);
  // ONNX Runtime passes a plugin's options as session config entries "ep.<lowercased EP name>.<key>".
  const std::string prefix = std::string(ORT_EP_OPTION_PREFIX) + lowercase(ep_name_) + ".";
  for (const auto& [key, value] : options) {
    if (key == "intra_op_num_threads") session_options_.config.set("session.intra_op_num_threads", value);
    else if (key == "allow_spinning") session_options_.config.set("session.intra_op.allow_spinning", value);
    else if (key == "disable_prepacking") session_options_.config.set("session.disable_prepacking", value);
    else if (key == "share_prepacked_weights") share_prepacked_weights_ = value != "0";
    else if (key == kOrtWeightlessSourceModelOption) load_weightless_source_model(value);
    else if (key == "enable_weightless_mode") take_weightless_mode(value);
    else session_options_.config.set(prefix + key, value);
  }
  const std::string* no_prepacking = session_options_.config.find("session.disable_prepacking");
  prepack_weights_ = !(no_prepacking && *no_prepacking == "1");
  const OrtHardwareDevice* hardware = ep_device_->device;
  const OrtKeyValuePairs* metadata = &ep_device_->ep_metadata;
  OrtEpFactory* factory = factory_;
  OrtEp* ep = nullptr;
  call("OrtEpFactory::CreateEp", [] { return std::string("CreateEp"); }, [&] {
    return factory->CreateEp(factory, &hardware, &metadata, 1, &session_options_, ort_ep::default_logger(), &ep);
  });
  if (!ep) fail(EPHOST_EP_FAIL, "provider '{}': CreateEp succeeded but returned no OrtEp", name());
  ep_ = ep;
  try {
    take_kernel_registry();
  } catch (...) {
    release_ep();  // the destructor of a provider whose constructor failed does not run
    throw;
  }
}

// The source model of a weightless EPContext model, for SessionOptionsGetWeightlessSourceModelBuffer. One the
// host cannot read is left out (the EP sees none): the EPContext loading reports the missing source model.
void OrtEpProvider::load_weightless_source_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) bytes.clear();
  if (bytes.empty()) {
    log_warning(fmt::format("provider '{}': the source model '{}' (ep.context_source_model_path) could not be read; "
                            "the EP's SessionOptionsGetWeightlessSourceModelBuffer answers none", name(), path));
    return;
  }
  session_options_.weightless_source_model = std::move(bytes);
}

// Asks a kernel-registry EP (API 24) for its registry; fails for an EP that can run nothing.
void OrtEpProvider::take_kernel_registry() {
  if (ep_has(24) && ep_->GetKernelRegistry) {
    const OrtKernelRegistry* registry = nullptr;
    call("OrtEp::GetKernelRegistry", [] { return std::string("GetKernelRegistry"); },
         [&] { return ep_->GetKernelRegistry(ep_, &registry); });
    if (registry && !ort_ep::checked<OrtKernelRegistry>(registry, ort_ep::Magic::kKernelRegistry))
      fail(EPHOST_EP_FAIL, "provider '{}': GetKernelRegistry answered a pointer that is no registry made by "
           "OrtEpApi::CreateKernelRegistry",
           name());
    kernel_registry_ = registry;
  }
  if (!ep_has(23) || !ep_->GetCapability || (!ep_->Compile && !kernel_registry_))
    fail(EPHOST_EP_FAIL, "provider '{}': its OrtEp (built for ONNX Runtime API {}) has no GetCapability (API 23), "
         "or neither Compile (API 23) nor a kernel registry (GetKernelRegistry, API 24): it can run nothing",
         name(), ep_->ort_version_supported);
}

void OrtEpProvider::release_ep() {
  if (!ep_) return;
  release_profiler();
  OrtEpFactory* factory = factory_;
  ort_ep::call_plugin_void(name().c_str(), library_path(), "OrtEpFactory::ReleaseEp",
                           [&] { factory->ReleaseEp(factory, ep_); });
  ep_ = nullptr;
}

OrtEpProvider::~OrtEpProvider() { release_ep(); }

const OrtEpProvider::Unit& OrtEpProvider::own(const ComputeUnit& unit) const {
  if (!unit.fused())
    fail(EPHOST_FAIL, "provider '{}' was handed kernel '{}' as a fused group (internal error)", name(), unit.name());
  const auto& mine = static_cast<const Unit&>(unit);
  if (&mine.owner != this)
    fail(EPHOST_FAIL, "provider '{}' was handed compute unit '{}' of another provider (internal error)", name(),
         unit.name());
  return mine;
}

const OrtEpProvider::KernelUnit& OrtEpProvider::own_kernel(const ComputeUnit& unit) const {
  const auto* mine = unit.fused() ? nullptr : static_cast<const KernelUnit*>(&unit);
  if (!mine || &mine->owner != this)
    fail(EPHOST_FAIL, "provider '{}' was handed compute unit '{}', which is none of its kernels (internal error)",
         name(), unit.name());
  return *mine;
}

const OrtKernelRegistry::Entry* OrtEpProvider::kernel_for(const Node& node, std::string* why_not) const {
  if (!kernel_registry_) {
    *why_not = "its OrtEp has no kernel registry (OrtEp::GetKernelRegistry, API 24) to run single nodes with";
    return nullptr;
  }
  const OrtKernelRegistry::Entry* entry = ort_ep::find_kernel(*kernel_registry_, ep_name_, node, why_not);
  if (!entry || !device() || device()->host_memory_usable()) return entry;
  // On a device with memory of its own, host memory for some inputs or outputs would need copies the
  // adapter does not place per argument.
  for (const auto* types : {&entry->def.input_mem_types, &entry->def.output_mem_types})
    for (const auto& [index, type] : *types)
      if (type != OrtMemTypeDefault) {
        *why_not = fmt::format("its kernel for {} wants its {} {} in CPU memory (KernelDefBuilder_Set{}MemType), "
                               "which ephost's adapter does not provide beside device memory",
                               node.op_type, types == &entry->def.input_mem_types ? "input" : "output", index,
                               types == &entry->def.input_mem_types ? "Input" : "Output");
        return nullptr;
      }
  return entry;
}

std::vector<EphostCapability::Claim> OrtEpProvider::claims(const GraphView& graph, const char* occasion) const {
  OrtEpGraphSupportInfo info;
  info.graph = &graph;
  info.kernel_registry = kernel_registry_;
  info.ep_name = ep_name_;
  {
    ort_ep::CallArena arena;  // the graph's type infos and initializer values, for this call
    call("GetCapability",
         [&] { return occasion ? fmt::format("GetCapability ({})", occasion) : std::string("GetCapability"); },
         [&] { return ep_->GetCapability(ep_, ort_ep::to_ort(&graph), &info); });
  }
  std::vector<EphostCapability::Claim> claims;
  for (auto& c : info.claims) {
    EphostCapability::Claim claim;
    claim.fused = c.fused;
    claim.nodes = std::move(c.nodes);
    std::string why_not;
    if (!c.fused && !kernel_for(*claim.nodes.front(), &why_not))
      claim.refused = "claimed alone (EpGraphSupportInfo_AddSingleNode), but no kernel of the EP runs it: " + why_not;
    else if (c.fused && !ep_->Compile)
      claim.refused = "claimed as a fused group (EpGraphSupportInfo_AddNodesToFuse), but its OrtEp has no Compile";
    claims.push_back(std::move(claim));
  }
  return claims;
}

// The node's kernel, made as ONNX Runtime makes it: the registry's create function over an OrtKernelInfo
// of the node.
std::unique_ptr<ComputeUnit> OrtEpProvider::create_kernel(const Node& node) const {
  std::string why_not;
  const OrtKernelRegistry::Entry* entry = kernel_for(node, &why_not);
  if (!entry) fail(EPHOST_EP_FAIL, "provider '{}' has no kernel for node '{}' ({}): {}", name(), node.name,
                   node.op_type, why_not);
  auto unit = std::make_unique<KernelUnit>(*this, node);
  unit->info.node = &node;
  unit->info.ep = ep_;
  unit->info.since_version = ort_ep::node_since_version(node);
  unit->info.config = &session_options_.config;
  unit->info.default_allocator = device_allocator();
  for (const Value* v : node.outputs) unit->output_elem_types.push_back(v ? v->type.elem_type : 0);
  OrtKernelImpl* kernel = nullptr;
  InitializerStepScope step(&node);  // what its kernel pre-packs, this step is done with
  call("kernel create function",
       [&] { return fmt::format("kernel create function (KernelRegistry_AddKernel) for node '{}' ({})", node.name,
                                node.op_type); },
       [&] { return entry->create(entry->create_state, &unit->info, &kernel); });
  unit->kernel = kernel;
  unit->declare_aliases(entry->def);
  if (!kernel || !kernel->Compute)
    fail(EPHOST_EP_FAIL, "provider '{}': the kernel create function for node '{}' ({}) returned no OrtKernelImpl "
         "with a Compute",
         name(), node.name, node.op_type);
  prepack_constant_inputs(*unit, node);
  return unit;
}

// The factory's allocator of the device's own memory, or null on host memory (the CPU's serves).
OrtAllocator* OrtEpProvider::device_allocator() const {
  const auto* own = dynamic_cast<const ort_ep::OrtDevice*>(device());
  return own ? library_.allocator_of(ep_device_, own->memory_info()) : nullptr;
}

// What KernelContext_GetAllocator / GetScratchBuffer serve besides the CPU's memory: the device's own.
void OrtEpProvider::serve_device_memory(OrtKernelContext& context) const {
  if (const auto* own = dynamic_cast<const ort_ep::OrtDevice*>(device())) {
    context.device_memory = &own->memory_info();
    context.device_allocator = library_.allocator_of(ep_device_, own->memory_info());
  }
}

// Offers the new kernel each of its node's constant initializer inputs to pre-pack, as ONNX Runtime's
// session does: PrePackWeight with the CPU allocator and, in sharing mode, a cache the kernel may store the
// packed buffers in; those are then shared through the process-wide container and handed back with
// SetSharedPrePackedWeight. Not offered on a device with memory of its own (ONNX Runtime hands such a
// kernel its weight in the EP's memory; ephost copies initializers there per run) nor with
// "disable_prepacking=1". The original initializer is kept (see README: the graph keeps its initializers
// for the session; the kernel must not read a weight it packed, ONNX Runtime's rule).
void OrtEpProvider::prepack_constant_inputs(KernelUnit& unit, const Node& node) const {
  OrtKernelImpl* kernel = unit.kernel;
  if (!prepack_weights_ || !kernel->PrePackWeight || (device() && !device()->host_memory_usable())) return;
  OrtAllocator* allocator = ort_ep::cpu_allocator();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* v = node.inputs[i];
    if (!v || !v->is_constant_initializer()) continue;
    OrtValue weight;
    weight.tensor = v->initializer.get();  // borrowed for the call ("do not cache in the kernel")
    InitializerRelease* release = initializer_release_of(*v);
    if (release) release->note_handout(weight.tensor, {this, &node});
    v->initializer->ensure_data();  // freed after an earlier plan's kernels packed it: read back
    std::optional<OrtSharedPrePackedWeightCache> cache;
    if (share_prepacked_weights_) cache.emplace(allocator);
    bool is_packed = false;
    const int index = static_cast<int>(i);
    call("OrtKernelImpl::PrePackWeight",
         [&] { return fmt::format("PrePackWeight of node '{}' ({}) input {} '{}'", node.name, node.op_type, i, v->name); },
         [&] { return kernel->PrePackWeight(kernel, &weight, index, allocator, cache ? &*cache : nullptr, &is_packed); });
    // PrePack's is_packed: this kernel keeps its own form and never reads the weight again (ONNX
    // Runtime's rule), so this step is done with it (plugin ABI 5's value_initializer_done, for it).
    if (is_packed && release) release->note_done(weight.tensor, {this, &node});
    if (!is_packed || !cache || cache->buffers.empty()) continue;  // not packed (buffers freed), or packed unshared
    if (!kernel->SetSharedPrePackedWeight)
      fail(EPHOST_EP_FAIL, "provider '{}': the kernel of node '{}' ({}) stored a packed weight to share "
           "(SharedPrePackedWeightCache_StoreWeightData) but has no SetSharedPrePackedWeight to receive it",
           name(), node.name, node.op_type);
    std::shared_ptr<const ort_ep::SharedPrePackedWeight> shared = ort_ep::share_prepacked_weight(node.op_type, *cache);
    unit.shared_weights.push_back(shared);
    const void* const* buffers = shared->buffers.data();
    call("OrtKernelImpl::SetSharedPrePackedWeight",
         [&] { return fmt::format("SetSharedPrePackedWeight of node '{}' ({}) input {}", node.name, node.op_type, i); },
         [&] { return kernel->SetSharedPrePackedWeight(kernel, buffers, shared->sizes.data(), shared->sizes.size(), index); });
  }
}

std::unique_ptr<ComputeUnit> OrtEpProvider::compile(const GraphView& group, const std::string& fused_name) const {
  if (!ep_->Compile)
    fail(EPHOST_EP_FAIL, "provider '{}' cannot compile fused group '{}': its OrtEp has no Compile", name(), fused_name);
  auto unit = std::make_unique<Unit>(*this, fused_name);
  // The fused node ONNX Runtime hands Compile: named after the group, reading its inputs and writing its
  // outputs.
  Node& fused = unit->fused_node;
  fused.name = fused_name;
  fused.op_type = fused_name;
  fused.domain = "ephost.fused";
  for (const Value* v : group.inputs) fused.inputs.push_back(const_cast<Value*>(v));
  for (const Value* v : group.outputs) {
    fused.outputs.push_back(const_cast<Value*>(v));
    unit->output_elem_types.push_back(v->type.elem_type);
  }
  check_weightless_support();
  const OrtGraph* graph = ort_ep::to_ort(&group);
  const OrtNode* fused_handle = ort_ep::to_ort(&fused);
  OrtNodeComputeInfo* info = nullptr;
  OrtNode* context_node = nullptr;
  {
    ort_ep::CallArena arena;
    call("Compile",
         [&] { return fmt::format("Compile of fused group '{}' ({} nodes)", fused_name, group.nodes.size()); },
         [&] { return ep_->Compile(ep_, &graph, &fused_handle, 1, &info, &context_node); });
  }
  if (keep_context_node(fused_name, context_node) && compatibility_info_.empty()) ask_compatibility_info(group);
  unit->info = info;
  if (!info || !info->Compute)
    fail(EPHOST_EP_FAIL, "provider '{}' Compile of fused group '{}' returned no OrtNodeComputeInfo with a Compute",
         name(), fused_name);
  return unit;
}

void OrtEpProvider::create_state(ComputeUnit& unit) const {
  if (!unit.fused()) return;  // a registry kernel has no state apart from itself
  auto& mine = const_cast<Unit&>(own(unit));
  if (!mine.info->CreateState) return;
  OrtNodeComputeContext context;
  context.node_name = mine.name();
  void* state = nullptr;
  call("CreateState", [&] { return "CreateState for " + mine.name(); },
       [&] { return mine.info->CreateState(mine.info, &context, &state); });
  mine.state = state;
}

void OrtEpProvider::compute(const ComputeUnit& unit, EphostKernelContext* context) const {
  if (!profiling_.load(std::memory_order_acquire)) return run_compute(unit, context);
  const ProfiledCompute started = start_profiled_compute();
  try {
    run_compute(unit, context);
  } catch (...) {
    stop_profiled_compute(unit, started);
    throw;
  }
  stop_profiled_compute(unit, started);
}

void OrtEpProvider::run_compute(const ComputeUnit& unit, EphostKernelContext* context) const {
  if (!unit.fused()) {
    const KernelUnit& kernel = own_kernel(unit);
    OrtKernelContext kernel_context(context, &kernel.output_elem_types);
    kernel_context.alias_outputs = &kernel.alias_outputs;
    serve_device_memory(kernel_context);
    call("OrtKernelImpl::Compute", [&] { return fmt::format("Compute of node '{}'", kernel.name()); },
         [&] { return kernel.kernel->Compute(kernel.kernel, &kernel_context); });
    return;
  }
  const Unit& mine = own(unit);
  OrtKernelContext kernel_context(context, &mine.output_elem_types);
  serve_device_memory(kernel_context);
  call("Compute", [&] { return fmt::format("Compute of fused group '{}'", mine.name()); },
       [&] { return mine.info->Compute(mine.info, mine.state, &kernel_context); });
}

void OrtEpProvider::run_start() const {
  if (ep_->OnRunStart)
    call("OnRunStart", [] { return std::string("OnRunStart"); }, [&] { return ep_->OnRunStart(ep_, &run_options()); });
}

void OrtEpProvider::run_end() const {
  if (ep_->OnRunEnd)
    call("OnRunEnd", [] { return std::string("OnRunEnd"); },
         [&] { return ep_->OnRunEnd(ep_, &run_options(), /*sync_stream=*/true); });
}

bool OrtEpProvider::observes_runs() const { return ep_->OnRunStart != nullptr || ep_->OnRunEnd != nullptr; }

bool OrtEpProvider::syncs() const { return ep_has(25) && ep_->Sync != nullptr; }

void OrtEpProvider::sync(const char* why) const {
  if (!syncs()) return;
  call("OrtEp::Sync", [&] { return fmt::format("Sync ({})", why); }, [&] { return ep_->Sync(ep_); });
}

bool OrtEpProvider::keep_context_node(const std::string& fused_name, OrtNode* context_node) const {
  std::unique_ptr<OrtEditorNode> made(ort_ep::editor_node_of(context_node));
  if (!made) return false;
  for (const OrtEditorAttr& a : made->attributes)
    if (a.name == "ep_cache_context" && a.type == ORT_OP_ATTR_STRING) {
      cached_contexts_[fused_name] = a.s;
      return true;
    }
  return false;
}

void OrtEpProvider::ask_compatibility_info(const GraphView& group) const {
  if (!ep_has(23) || !ep_->GetCompiledModelCompatibilityInfo || !group.graph) return;
  const Graph* main = group.graph;
  while (main->parent_graph) main = main->parent_graph;
  if (!main->view) return;
  const char* info = nullptr;
  ort_ep::CallArena arena;
  call("GetCompiledModelCompatibilityInfo", [] { return std::string("GetCompiledModelCompatibilityInfo"); }, [&] {
    info = ep_->GetCompiledModelCompatibilityInfo(ep_, ort_ep::to_ort(main->view.get()));
    return static_cast<OrtStatus*>(nullptr);
  });
  if (info) compatibility_info_ = info;
}

// A plugin that made an EPContext node in Compile (OrtModelEditorApi::CreateNode) caches what it
// compiled: its ep_cache_context bytes become the group's context, which the host writes into the
// EPContext model as it does a native plugin's.
bool OrtEpProvider::emits_contexts() const { return !cached_contexts_.empty(); }

void OrtEpProvider::emit_context(const std::string& fused_name, EphostContextSink& sink) const {
  auto it = cached_contexts_.find(fused_name);
  if (it == cached_contexts_.end())
    fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' cannot cache fused group '{}': its Compile returned no EPContext "
         "node with an ep_cache_context string for it",
         name(), fused_name);
  sink.pieces.emplace_back(it->second.begin(), it->second.end());
  // The node's source is this EP's name, which differs from the provider's for a later factory's EP.
  sink.attributes.emplace_back("source", ep_name_);
}

// The factory's ValidateCompiledModelCompatibilityInfo on the ctx model's ep_compatibility_info.<name>
// entry, as ONNX Runtime asks it, mapped onto ephost's verdicts. Nothing when the factory has no such
// function or the model records no entry for the plugin (every context of its source key is loaded).
std::optional<ContextJudgement> OrtEpProvider::judge_context(const Node& context_node, const void*, size_t) const {
  OrtEpFactory* factory = factory_;
  if (factory->ort_version_supported < 23 || !factory->ValidateCompiledModelCompatibilityInfo) return std::nullopt;
  const Graph* graph = context_node.owner;
  while (graph && graph->parent_graph) graph = graph->parent_graph;
  if (!graph || !graph->model || !graph->model->proto) return std::nullopt;
  // ONNX Runtime keys the entry by the EP's name; ephost's generation by the provider's (the same, but for
  // the EPs of a library's later factories).
  std::string key = std::string("ep_compatibility_info.") + ep_name_;
  const std::string* info = nullptr;
  for (const auto& kv : graph->model->proto->metadata_props())
    if (kv.key() == key) info = &kv.value();
  if (!info && ep_name_ != name()) {
    key = std::string("ep_compatibility_info.") + name();
    for (const auto& kv : graph->model->proto->metadata_props())
      if (kv.key() == key) info = &kv.value();
  }
  if (!info) return std::nullopt;
  const OrtHardwareDevice* hardware = ep_device_->device;
  OrtCompiledModelCompatibility verdict = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;
  call("ValidateCompiledModelCompatibilityInfo",
       [&] { return fmt::format("ValidateCompiledModelCompatibilityInfo ('{}')", *info); },
       [&] { return factory->ValidateCompiledModelCompatibilityInfo(factory, &hardware, 1, info->c_str(), &verdict); });
  const std::string why = fmt::format("ValidateCompiledModelCompatibilityInfo on {} '{}'", key, *info);
  switch (verdict) {
    case OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION:
      return ContextJudgement{EPHOST_CONTEXT_PREFER_RECOMPILE, why + " answered EP_SUPPORTED_PREFER_RECOMPILATION"};
    case OrtCompiledModelCompatibility_EP_UNSUPPORTED:
      return ContextJudgement{EPHOST_CONTEXT_UNSUPPORTED, why + " answered EP_UNSUPPORTED"};
    case OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL:
    case OrtCompiledModelCompatibility_EP_NOT_APPLICABLE:
      return ContextJudgement{EPHOST_CONTEXT_OPTIMAL, ""};
  }
  return ContextJudgement{EPHOST_CONTEXT_UNSUPPORTED,
                          fmt::format("{} answered {}, which is no OrtCompiledModelCompatibility value", why,
                                      static_cast<int>(verdict))};
}

namespace {

// The EPContext node the plugin is shown when a cached context is loaded: `context_node`'s inputs and
// outputs, its context embedded (ep_cache_context = `blob`, embed_mode 1, main_context 1) and `source`,
// as ONNX Runtime shows a plugin the EPContext node it generated.
void embedded_context_node(const Node& context_node, const std::string& source, const void* blob, size_t blob_size,
                           onnx::NodeProto& proto, Node& node) {
  proto.set_name(context_node.name);
  proto.set_op_type("EPContext");
  proto.set_domain("com.microsoft");
  auto add = [&](const char* key) {
    auto* a = proto.add_attribute();
    a->set_name(key);
    return a;
  };
  auto* cache = add("ep_cache_context");
  cache->set_type(onnx::AttributeProto::STRING);
  cache->set_s(std::string(static_cast<const char*>(blob), blob_size));
  auto* embed = add("embed_mode");
  embed->set_type(onnx::AttributeProto::INT);
  embed->set_i(1);
  auto* main = add("main_context");
  main->set_type(onnx::AttributeProto::INT);
  main->set_i(1);
  auto* src = add("source");
  src->set_type(onnx::AttributeProto::STRING);
  src->set_s(source);
  node.index = context_node.index;
  node.name = context_node.name;
  node.op_type = proto.op_type();
  node.domain = proto.domain();
  node.inputs = context_node.inputs;
  node.outputs = context_node.outputs;
  node.owner = context_node.owner;
  node.proto = &proto;
  for (const auto& a : proto.attribute()) {
    Node::AttributeRef ref;
    ref.proto = &a;
    node.attributes.push_back(ref);
  }
}

}  // namespace

// Loads a cached context as ONNX Runtime does: the plugin claims the EPContext node (GetCapability over
// a graph of that node) and compiles it; the original graph is not compiled again.
std::unique_ptr<ComputeUnit> OrtEpProvider::load_context(const Node& context_node, const void* blob,
                                                         size_t blob_size) const {
  onnx::NodeProto proto;
  Node node;
  // The source the node was generated with (a library's factories each name their own), else this EP's.
  const onnx::AttributeProto* source = context_node.attribute("source");
  embedded_context_node(context_node, source && !source->s().empty() ? source->s() : ep_name_, blob, blob_size, proto,
                        node);
  GraphView view;
  view.name = context_node.name;
  view.graph = context_node.owner;
  view.nodes = {&node};
  for (const Value* v : node.inputs)
    if (v) view.inputs.push_back(v);
  for (const Value* v : node.outputs)
    if (v) view.outputs.push_back(v);
  const std::vector<EphostCapability::Claim> claimed = claims(view, "EPContext node");
  const bool taken = std::any_of(claimed.begin(), claimed.end(), [&](const EphostCapability::Claim& c) {
    return c.fused && c.refused.empty() && c.nodes.size() == 1 && c.nodes[0] == &node;
  });
  if (!taken)
    fail(EPHOST_INVALID_GRAPH, "provider '{}' did not claim EPContext node '{}' in GetCapability (a plugin loads "
         "its cached context by claiming the EPContext node alone, with EpGraphSupportInfo_AddNodesToFuse)",
         name(), context_node.name);
  return compile(view, context_node.name);
}

}  // namespace ephost
