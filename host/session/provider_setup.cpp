#include "session/provider_setup.h"

#include <algorithm>
#include <set>

#include "abi/handles.h"
#include "core/error.h"
#include "core/log.h"

namespace ephost {
namespace {

constexpr const char* kCpuProvider = "cpu";

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<ProviderRequest> requested_providers(const PluginRegistry& registry, const SessionConfig& config) {
  std::vector<ProviderRequest> requests = config.providers;
  std::set<std::string> seen;
  for (const auto& r : requests) {
    if (!seen.insert(r.name).second)
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}' is listed twice in the session options", r.name);
    if (r.name == kCpuProvider && !config.cpu_fallback)
      fail(EPHOST_INVALID_ARGUMENT,
           "session.disable_cpu_ep_fallback=1 cannot be combined with listing the CPU provider explicitly");
  }
  if (requests.empty()) {
    for (const PluginRecord* rec : registry.loaded_by_priority())
      if (rec->name != kCpuProvider) requests.push_back({rec->name, {}});
  }
  if (config.cpu_fallback && !seen.count(kCpuProvider)) requests.push_back({kCpuProvider, {}});
  return requests;
}

[[noreturn]] void fail_unavailable(const PluginRegistry& registry, const std::string& name) {
  std::string loaded, skipped;
  for (const auto& r : registry.records()) {
    if (r->loaded)
      loaded += (loaded.empty() ? "" : ", ") + r->name;
    else if (!r->name.empty() && r->name == name)
      skipped = fmt::format(" A plugin named '{}' was found at {} but skipped: {}.", r->name, r->path, r->reason);
  }
  fail(EPHOST_INVALID_ARGUMENT, "provider '{}' is not available; loaded providers: {}.{} Plugins are searched in "
       "EPHOST_PLUGIN_PATH and the default plugin directory ('ephost plugins' lists what was found).",
       name, loaded.empty() ? "none" : loaded, skipped);
}

// ep.<name>.<key> entries naming a provider no loaded plugin offers are most likely a typo.
void warn_about_unknown_provider_options(const PluginRegistry& registry, const SessionConfig& config) {
  std::set<std::string> loaded;
  std::string names;
  for (const auto& r : registry.records())
    if (r->loaded) {
      loaded.insert(lowercase(r->name));
      names += (names.empty() ? "" : ", ") + r->name;
    }
  std::set<std::string> warned;
  for (const auto& e : config.provider_entries)
    if (!loaded.count(lowercase(e.provider)) && warned.insert(e.provider).second)
      log_warning(fmt::format("session option 'ep.{}.{}' names provider '{}', which no loaded plugin offers "
                              "(loaded providers: {}); the option is ignored",
                              e.provider, e.key, e.provider, names.empty() ? "none" : names));
}

}  // namespace

std::vector<ProviderInstance*> SessionProviders::pointers() const {
  std::vector<ProviderInstance*> out;
  for (const auto& p : instances) out.push_back(p.get());
  return out;
}

SessionProviders create_providers(const PluginRegistry& registry, const SessionConfig& config) {
  warn_about_unknown_provider_options(registry, config);
  SessionProviders providers;
  providers.cpu_fallback = config.cpu_fallback;
  const std::string threads = std::to_string(config.threads);
  for (const ProviderRequest& request : requested_providers(registry, config)) {
    const PluginRecord* rec = registry.find_loaded(request.name);
    if (!rec) fail_unavailable(registry, request.name);
    std::vector<std::pair<std::string, std::string>> opts = request.options;
    // ep.<name>.<key> session entries, as ONNX Runtime forwards plugin options (names compared
    // case-insensitively: ONNX Runtime lowercases them).
    for (const auto& e : config.provider_entries)
      if (lowercase(e.provider) == lowercase(request.name)) opts.emplace_back(e.key, e.value);
    opts.emplace_back("intra_op_num_threads", threads);
    providers.instances.push_back(std::make_unique<ProviderInstance>(*rec, opts));
    providers.names.push_back(rec->name);
  }
  return providers;
}

CapabilityQuery capability_query(const SessionProviders& providers) {
  return [&providers](size_t i, const GraphView& view) {
    EphostCapability capability;
    capability.graph = &view;
    const ProviderInstance& p = *providers.instances[i];
    // Plugins that speak ABI 1 cannot read sequence or optional values: their claims on such nodes are refused.
    capability.non_tensor_values =
        EphostPluginAbiIncludes(p.record().abi_version, EPHOST_PLUGIN_ABI_NON_TENSOR_VALUES);
    p.call("get_capability", [&] { return p.plugin().get_capability(p.handle(), to_handle(&view), &capability); });
    return std::move(capability.claims);
  };
}

}  // namespace ephost
