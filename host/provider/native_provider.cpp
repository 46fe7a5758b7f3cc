#include "provider/native_provider.h"

#include <fmt/format.h>

#include "core/device.h"
#include "core/error.h"
#include "discovery/plugin_registry.h"

namespace ephost {

// A kernel (single node) or a compute unit (fused group, compiled or loaded) of a native plugin, with
// the state create_state made. Given back to the plugin when destroyed.
class NativeProvider::Unit final : public ComputeUnit {
 public:
  Unit(const NativeProvider& owner, const Node* node, EphostKernel* kernel)
      : ComputeUnit(false, node->name), owner(owner), node(node), kernel(kernel) {}
  Unit(const NativeProvider& owner, std::string name, const EphostComputeInfo& info)
      : ComputeUnit(true, std::move(name)), owner(owner), info(info) {}
  ~Unit() override {
    const EphostPlugin& plugin = *owner.plugin_;
    run_plugin_release(owner.name().c_str(), owner.library_path(), "release of a kernel or state", [&] {
      if (fused()) {
        if (info.release_state && state) info.release_state(info.user, state);
        if (info.release) info.release(info.user);
      } else if (kernel && plugin.kernel_release) {
        plugin.kernel_release(kernel);
      }
    });
  }

  const NativeProvider& owner;
  const Node* node = nullptr;        // kernels
  EphostKernel* kernel = nullptr;    // kernels
  EphostComputeInfo info{};          // fused groups
  void* state = nullptr;             // fused groups: what create_state made
};

NativeProvider::NativeProvider(const PluginRecord& record,
                               const std::vector<std::pair<std::string, std::string>>& options, const Device* device)
    : Provider(record, device) {
  // Lazy loading: the caller loads the plugin first (PluginRegistry::ensure_loaded); a record not loaded
  // in process has no function table to call.
  if (!record.in_process.load(std::memory_order_acquire) || !record.plugin)
    fail(EPHOST_EP_FAIL, "provider '{}': its plugin library {} is not loaded (internal error: ensure_loaded was not "
         "called)", name(), record.path);
  plugin_ = record.plugin;
  std::vector<const char*> keys, values;
  for (const auto& kv : options) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  EphostProvider* handle = nullptr;
  if (device) {
    if (!EphostPluginAbiIncludes(record.abi_version, EPHOST_PLUGIN_ABI_DEVICES) || !plugin_->provider_create_for_device)
      fail(EPHOST_EP_FAIL, "provider '{}': a provider on device {} needs provider_create_for_device (plugin ABI 3), "
           "which the plugin lacks", name(), device->label());
    call("provider_create_for_device", [&] {
      return plugin_->provider_create_for_device(device->index(), keys.data(), values.data(), keys.size(), &handle);
    });
  } else {
    call("provider_create", [&] { return plugin_->provider_create(keys.data(), values.data(), keys.size(), &handle); });
  }
  if (!handle) fail(EPHOST_EP_FAIL, "provider '{}': provider_create succeeded but returned no provider", name());
  handle_ = handle;
  add_live_initializer_reader(handle_);  // it may say it is done with initializers until released
}

NativeProvider::~NativeProvider() {
  if (!handle_) return;
  remove_live_initializer_reader(handle_);
  run_plugin_release(name().c_str(), library_path(), "provider_release", [&] { plugin_->provider_release(handle_); });
}

void NativeProvider::throw_failure(const std::string& what, const PluginCallFailure& failure) const {
  switch (failure.kind) {
    case PluginCallFailure::Kind::kStatus:
      throw Error(failure.code, fmt::format("provider '{}' {}: {}", name(), what, failure.detail));
    case PluginCallFailure::Kind::kNotAStatus:
      fail(EPHOST_EP_FAIL, "provider '{}' {}: returned {}, which is not a status created by status_create (or was "
           "released already)", name(), what, failure.detail);
    case PluginCallFailure::Kind::kThrew:
      break;
  }
  throw Error(EPHOST_RUNTIME_EXCEPTION,
              fmt::format("provider '{}' {} threw a C++ exception across the plugin ABI: {}", name(), what,
                          failure.detail));
}

const NativeProvider::Unit& NativeProvider::own(const ComputeUnit& unit) const {
  const auto& native = static_cast<const Unit&>(unit);
  if (&native.owner != this)
    fail(EPHOST_FAIL, "provider '{}' was handed compute unit '{}' of another provider (internal error)", name(),
         unit.name());
  return native;
}

std::vector<EphostCapability::Claim> NativeProvider::claims(const GraphView& graph, const char* occasion) const {
  EphostCapability capability;
  capability.graph = &graph;
  // Plugins that speak ABI 1 cannot read sequence or optional values: their claims on such nodes are refused.
  capability.non_tensor_values = EphostPluginAbiIncludes(record().abi_version, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES);
  const std::string what = occasion ? fmt::format("get_capability ({})", occasion) : std::string("get_capability");
  call(what.c_str(), [&] { return plugin_->get_capability(handle_, to_handle(&graph), &capability); });
  return std::move(capability.claims);
}

std::unique_ptr<ComputeUnit> NativeProvider::create_kernel(const Node& node) const {
  if (!plugin_->kernel_create || !plugin_->kernel_compute)
    fail(EPHOST_EP_FAIL, "provider '{}' claimed node '{}' as a single node but has no kernel_create", name(),
         node.name);
  const std::string what = fmt::format("kernel_create for node '{}' ({})", node.name, node.op_type);
  EphostKernel* kernel = nullptr;
  InitializerStepScope step(&node);  // what it says it is done with here, it is done with for this step
  call(what.c_str(), [&] { return plugin_->kernel_create(handle_, to_handle(&node), &kernel); });
  return std::make_unique<Unit>(*this, &node, kernel);
}

std::unique_ptr<ComputeUnit> NativeProvider::compile(const GraphView& group, const std::string& fused_name) const {
  if (!plugin_->compile)
    fail(EPHOST_EP_FAIL, "provider '{}' claimed fused group '{}' but has no compile", name(), fused_name);
  const std::string what = fmt::format("compile of fused group '{}' ({} nodes)", fused_name, group.nodes.size());
  EphostComputeInfo info{};
  info.struct_size = sizeof(EphostComputeInfo);
  InitializerStepScope step(&group);  // what it says it is done with here, it is done with for this step
  call(what.c_str(), [&] { return plugin_->compile(handle_, to_handle(&group), fused_name.c_str(), &info); });
  // Owned from here: a unit without a compute function is still given back to the plugin.
  auto unit = std::make_unique<Unit>(*this, fused_name, info);
  if (!info.compute) fail(EPHOST_EP_FAIL, "provider '{}' {} returned no compute function", name(), what);
  return unit;
}

void NativeProvider::create_state(ComputeUnit& unit) const {
  auto& native = const_cast<Unit&>(own(unit));
  if (!native.fused() || !native.info.create_state) return;
  const std::string what = "create_state for " + native.name();
  void* state = nullptr;
  call(what.c_str(), [&] { return native.info.create_state(native.info.user, &state); });
  native.state = state;
}

void NativeProvider::compute(const ComputeUnit& unit, EphostKernelContext* context) const {
  const Unit& native = own(unit);
  // Both are reported as happening in "compute" should they crash or hang.
  if (native.fused()) {
    call_described("compute", [&] { return fmt::format("compute of fused group '{}'", native.name()); },
                   [&] { return native.info.compute(native.info.user, native.state, context); });
  } else {
    call_described("compute",
                   [&] { return fmt::format("kernel for node '{}' ({})", native.node->name, native.node->op_type); },
                   [&] { return plugin_->kernel_compute(native.kernel, context); });
  }
}

void NativeProvider::run_start() const {
  if (plugin_->on_run_start) call("on_run_start", [&] { return plugin_->on_run_start(handle_); });
}

void NativeProvider::run_end() const {
  if (plugin_->on_run_end) call("on_run_end", [&] { return plugin_->on_run_end(handle_); });
}

bool NativeProvider::observes_runs() const { return plugin_->on_run_start || plugin_->on_run_end; }

bool NativeProvider::emits_contexts() const { return plugin_->context_emit != nullptr; }

void NativeProvider::emit_context(const std::string& fused_name, EphostContextSink& sink) const {
  if (!plugin_->context_emit)
    fail(EPHOST_NOT_IMPLEMENTED, "provider '{}' cannot cache fused group '{}': it has no context_emit", name(),
         fused_name);
  const std::string what = fmt::format("context_emit for '{}'", fused_name);
  call(what.c_str(), [&] { return plugin_->context_emit(handle_, fused_name.c_str(), &sink); });
}

std::optional<ContextJudgement> NativeProvider::judge_context(const Node& context_node, const void* blob,
                                                              size_t blob_size) const {
  if (!plugin_->context_judge) return std::nullopt;
  EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
  const char* why = nullptr;
  call("context_judge", [&] {
    return plugin_->context_judge(handle_, to_handle(&context_node), blob, blob_size, &verdict, &why);
  });
  return ContextJudgement{verdict, why ? why : ""};
}

std::unique_ptr<ComputeUnit> NativeProvider::load_context(const Node& context_node, const void* blob,
                                                          size_t blob_size) const {
  if (!plugin_->context_load) fail(EPHOST_NOT_IMPLEMENTED, "the provider has no context_load");
  EphostComputeInfo info{};
  info.struct_size = sizeof(EphostComputeInfo);
  call("context_load",
       [&] { return plugin_->context_load(handle_, to_handle(&context_node), blob, blob_size, &info); });
  auto unit = std::make_unique<Unit>(*this, context_node.name, info);
  if (!info.compute) fail(EPHOST_EP_FAIL, "context_load returned no compute function");
  return unit;
}

}  // namespace ephost
