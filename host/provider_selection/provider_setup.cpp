#include "provider_selection/provider_setup.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "plugin_abi/handles.h"
#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "graph/graph.h"
#include "core/plugin_fault.h"
#include "isolation/fault_memory.h"
#include "isolation/isolated_provider.h"
#include "isolation/isolation_options.h"
#include "provider/ort_ep_provider.h"

namespace ephost {
namespace {

constexpr const char* kCpuProvider = "cpu";

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Checks the user's list: no provider twice, no CPU plugin listed with CPU fallback disabled.
void check_requests(const std::vector<ProviderRequest>& requests, const SessionConfig& config) {
  std::set<std::string> seen;
  for (const auto& r : requests) {
    if (!seen.insert(r.name).second)
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}' is listed twice in the session options", r.name);
    if (r.name == kCpuProvider && !config.cpu_fallback)
      fail(EPHOST_INVALID_ARGUMENT,
           "session.disable_cpu_ep_fallback=1 cannot be combined with listing the CPU provider explicitly");
  }
}

int32_t preferred_device_type(SelectionPolicy policy) {
  switch (policy) {
    case SelectionPolicy::kPreferCpu: return EPHOST_DEVICE_CPU;
    case SelectionPolicy::kPreferGpu: return EPHOST_DEVICE_GPU;
    case SelectionPolicy::kPreferNpu: return EPHOST_DEVICE_NPU;
    default: return -1;
  }
}

// The device a provider of `rec` runs on: the one the request names, else the first of the type the
// policy prefers, else device 0; null for a plugin without devices.
const Device* choose_device(const PluginRecord& rec, int64_t requested, SelectionPolicy policy) {
  if (requested >= 0) {
    if (rec.devices.empty())
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}:{}': plugin '{}' drives no device of its own", rec.name, requested,
           rec.name);
    if (static_cast<size_t>(requested) >= rec.devices.size())
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}:{}': plugin '{}' has {} device(s) ({}:0..{}:{}; 'ephost plugins' lists them)",
           rec.name, requested, rec.name, rec.devices.size(), rec.name, rec.name, rec.devices.size() - 1);
    return rec.devices[static_cast<size_t>(requested)].get();
  }
  if (rec.devices.empty()) return nullptr;
  const int32_t preferred = preferred_device_type(policy);
  for (const auto& d : rec.devices)
    if (d->type() == preferred) return d.get();
  return rec.devices.front().get();
}

// The device type a candidate stands for: its device's, else the plugin's own.
std::string candidate_type(const PluginRecord& rec, const Device* device) {
  return device ? device_type_name(device->type()) : rec.device_type;
}

// Nodes of the main graph a provider would take: every node it claims, alone or in a group.
int64_t dry_run_claims(const Provider& p, const Graph& graph, std::string* error) {
  std::vector<EphostCapability::Claim> claims;
  try {
    claims = p.claims(*graph.view, "max_coverage dry run");
  } catch (const std::exception& e) {
    *error = e.what();
    return 0;
  }
  std::set<const Node*> claimed;
  for (const auto& claim : claims)
    if (claim.refused.empty()) claimed.insert(claim.nodes.begin(), claim.nodes.end());
  return static_cast<int64_t>(claimed.size());
}

[[noreturn]] void fail_unavailable(const PluginRegistry& registry, const std::string& name) {
  std::string loaded, skipped;
  for (const auto& r : registry.records()) {
    if (r->loaded)
      loaded += (loaded.empty() ? "" : ", ") + r->name;
    else if (!r->name.empty() && r->name == name)
      skipped = fmt::format(" A plugin named '{}' was found at {} but skipped: {}.", r->name, r->path, r->skip_reason());
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

struct Candidate {
  const PluginRecord* record = nullptr;
  const Device* device = nullptr;
  std::vector<std::pair<std::string, std::string>> options;
  IsolationSettings isolation;
  // Out of process: the device's index in the plugin's own order (what its probe saw), -1 for none.
  int64_t device_index = -1;
};

// Whether the candidate's provider runs in a provider host process: its isolation says so, and it is not
// the built-in CPU plugin (the host's own code). Native plugins and ONNX Runtime plugin EPs (one provider
// per factory) alike.
bool runs_isolated(const Candidate& c) {
  return !c.record->builtin && c.isolation.mode == IsolationMode::kProcess;
}

// The device of an isolated provider, chosen as choose_device does but from the devices the plugin's
// probe saw: the plugin is not loaded in this process. -1: none.
int64_t choose_probed_device(const PluginRecord& rec, int64_t requested, SelectionPolicy policy) {
  if (requested >= 0) {
    if (static_cast<size_t>(requested) >= rec.probed_devices.size())
      fail(EPHOST_INVALID_ARGUMENT, "provider '{}:{}': plugin '{}' has {} device(s) ('ephost plugins' lists them)",
           rec.name, requested, rec.name, rec.probed_devices.size());
    return requested;
  }
  if (rec.probed_devices.empty()) return -1;
  const char* preferred = device_type_name(preferred_device_type(policy));
  for (size_t i = 0; i < rec.probed_devices.size(); ++i)
    if (rec.probed_devices[i].type == preferred) return static_cast<int64_t>(i);
  return 0;
}

// The candidate's provider: in a provider host process (runs_isolated), else in process.
// An isolated provider shares the provider host process of its plugin with the env's other sessions
// (the env known by its registry).
std::unique_ptr<Provider> make_provider(const PluginRegistry& registry, const Candidate& c) {
  if (runs_isolated(c))
    return std::make_unique<IsolatedProvider>(&registry, *c.record, c.options, c.device_index, c.isolation,
                                              isolation::default_provider_host_path());
  return create_provider(*c.record, c.options, c.device);
}

// auto: a plugin that crashed or hung in process before (isolation/fault_memory.h) runs isolated, and
// its report says why.
bool remember_faults(const PluginRegistry& registry, const PluginRecord& rec, IsolationSettings& settings) {
  // Its own faults and its library's: a sibling factory's crash is that factory's alone.
  const std::vector<std::string> plugins = {rec.name, std::filesystem::path(rec.path).filename().string(),
                                            std::filesystem::path(rec.canonical_path).filename().string()};
  const std::optional<RememberedFault> fault = remembered_fault(
      plugin_fault_journal_path(registry.scan_settings().registry_file), rec.canonical_path, plugins);
  if (!fault) return false;
  settings.mode = IsolationMode::kProcess;
  settings.reason = "isolated: " + describe_remembered_fault(*fault);
  log_info(fmt::format("provider '{}' runs in a provider host process (isolation auto): it {}", rec.name,
                       describe_remembered_fault(*fault)));
  return true;
}

// A candidate for `rec` with its provider options, the isolation entries taken out of them, and its
// device (`requested`: the index the user named, -1 for the policy's choice). Only a candidate that
// runs in process has its plugin loaded here (lazy loading); false when that load failed (the record
// says why).
bool make_candidate(const PluginRegistry& registry, const SessionConfig& config, const PluginRecord* rec,
                    int64_t requested, std::vector<std::pair<std::string, std::string>> options, Candidate& c) {
  c = Candidate{rec, nullptr, std::move(options), {}, -1};
  c.isolation = take_isolation_settings(c.options, config.provider_isolation, rec->name);
  // An ONNX Runtime plugin EP, in process or in its provider host, reads the source model of a weightless
  // EPContext model from its session options (OrtEpApi::SessionOptionsGetWeightlessSourceModelBuffer): the
  // adapter loads what ep.context_source_model_path names (ort_ep_provider.h). Whether the record is one may
  // not be known before it is loaded (lazy loading, isolation): create_provider leaves the option out for a
  // native plugin.
  if (!rec->builtin && !config.ep_context.source_model_path.empty())
    c.options.emplace_back(kOrtWeightlessSourceModelOption, config.ep_context.source_model_path);
  const bool remembered =
      !rec->builtin && c.isolation.mode == IsolationMode::kAuto && remember_faults(registry, *rec, c.isolation);
  if (!rec->builtin && c.isolation.mode == IsolationMode::kProcess) {
    c.device_index = choose_probed_device(*rec, requested, config.selection_policy);
    const std::string why_not = IsolatedProvider::cannot_serve(*rec, c.device_index);
    if (!remembered || why_not.empty()) return true;
    // auto chose isolation, which this device cannot have: it stays in process, as auto's default, and
    // says why (asked for explicitly, `process` fails instead).
    log_warning(fmt::format("provider '{}' stays in process although it {}: provider '{}' {}", rec->name,
                            c.isolation.reason.substr(10), rec->name, why_not));
    c.isolation.mode = IsolationMode::kInProcess;
    c.isolation.reason = "in process: " + c.isolation.reason.substr(10) + ", but a provider host cannot serve it";
  }
  if (!registry.ensure_loaded(*rec)) return false;
  c.device = choose_device(*rec, requested, config.selection_policy);
  return true;
}

// Creates a provider the policy chose, or returns null having said why it was not: a broken plugin the
// user did not ask for costs its own nodes, never the session.
std::unique_ptr<Provider> create_chosen_provider(const PluginRegistry& registry, const Candidate& c,
                                                 const std::string& policy, ProviderSelection::Candidate& report) {
  try {
    return make_provider(registry, c);
  } catch (const std::exception& e) {
    report.skipped = true;
    report.reason = fmt::format("skipped: its provider could not be created ({})", e.what());
    log_warning(fmt::format("provider '{}' ({}) was chosen by {} but could not be created, so the session goes on "
                            "without it: {}",
                            report.provider, c.record->path.empty() ? "built in" : c.record->path,
                            policy.empty() ? "default priority" : "selection policy '" + policy + "'", e.what()));
    return nullptr;
  }
}

std::vector<std::pair<std::string, std::string>> provider_options(const SessionConfig& config,
                                                                  const std::string& name,
                                                                  std::vector<std::pair<std::string, std::string>> opts) {
  // ep.<name>.<key> session entries, as ONNX Runtime forwards plugin options (names compared
  // case-insensitively: ONNX Runtime lowercases them).
  for (const auto& e : config.provider_entries)
    if (lowercase(e.provider) == lowercase(name)) opts.emplace_back(e.key, e.value);
  opts.emplace_back("intra_op_num_threads", std::to_string(config.threads));
  // Only when not the default, so that a plugin that refuses options it does not know is untouched.
  if (!config.allow_spinning) opts.emplace_back("allow_spinning", "0");
  return opts;
}

// Orders `candidates` (already by default priority) as the policy says and records why.
void apply_policy(const PluginRegistry& registry, const SessionConfig& config, const Graph& graph,
                  std::vector<Candidate>& candidates,
                  std::vector<std::unique_ptr<Provider>>& created, ProviderSelection& selection) {
  selection.policy = selection_policy_name(config.selection_policy);
  std::vector<ProviderSelection::Candidate> report(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    report[i].provider = c.device ? c.device->label() : c.record->name;
    report[i].device_type = candidate_type(*c.record, c.device);
    report[i].priority = c.record->default_priority;
  }
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;

  if (config.selection_policy == SelectionPolicy::kMaxCoverage) {
    // The dry run: every candidate is created (kept for the session) and asked about the main graph,
    // the session's own IR (not a copy built for the purpose).
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      created[i] = create_chosen_provider(registry, c, selection.policy, report[i]);
      if (!created[i]) continue;
      std::string error;
      report[i].claimed_nodes = dry_run_claims(*created[i], graph, &error);
      report[i].graph_nodes = graph.nodes.size();
      report[i].reason = error.empty() ? fmt::format("would take {} of {} nodes", report[i].claimed_nodes,
                                                     graph.nodes.size())
                                       : "its get_capability failed in the dry run (" + error + "): 0 nodes";
    }
    // Candidates that could not be created rank last: they take no nodes.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (report[a].claimed_nodes != report[b].claimed_nodes) return report[a].claimed_nodes > report[b].claimed_nodes;
      return report[a].priority > report[b].priority;
    });
    for (size_t pos = 0; pos < order.size(); ++pos) {
      ProviderSelection::Candidate& r = report[order[pos]];
      if (r.skipped) continue;
      r.reason += pos == 0 ? ": the most" : "";
      if (pos > 0 && report[order[pos - 1]].claimed_nodes == r.claimed_nodes)
        r.reason += fmt::format(", as many as '{}': after it by default priority ({} <= {})",
                                report[order[pos - 1]].provider, r.priority, report[order[pos - 1]].priority);
    }
  } else if (preferred_device_type(config.selection_policy) >= 0) {
    const std::string wanted = device_type_name(preferred_device_type(config.selection_policy));
    std::stable_partition(order.begin(), order.end(), [&](size_t i) { return report[i].device_type == wanted; });
    for (auto& r : report)
      r.reason = r.device_type == wanted
                     ? fmt::format("a {} provider ({}): first, by default priority {}", wanted, selection.policy, r.priority)
                     : fmt::format("not a {} provider ({}): after those, by default priority {}", wanted, r.device_type,
                                   r.priority);
  } else {
    for (auto& r : report) r.reason = fmt::format("by default priority {}", r.priority);
  }

  std::vector<Candidate> ordered;
  std::vector<std::unique_ptr<Provider>> ordered_created;
  for (size_t i : order) {
    ordered.push_back(std::move(candidates[i]));
    ordered_created.push_back(std::move(created[i]));
    selection.candidates.push_back(std::move(report[i]));
  }
  candidates = std::move(ordered);
  created = std::move(ordered_created);
}

}  // namespace

SessionProviders create_providers(const PluginRegistry& registry, const SessionConfig& config, const Graph& main) {
  warn_about_unknown_provider_options(registry, config);
  check_requests(config.providers, config);
  SessionProviders providers;
  providers.cpu_fallback = config.cpu_fallback;

  std::vector<Candidate> candidates;
  std::set<std::string> listed;
  for (const ProviderRequest& request : config.providers) {
    const PluginRecord* rec = registry.find_loaded(request.name);
    // Lazy loading: a listed plugin that runs in process is loaded now. One that drops out at that load
    // (changed on disk and probed badly, dlopen failing now...) is unavailable, as one skipped at
    // discovery is: the user asked for it by name.
    Candidate c;
    if (!rec || !make_candidate(registry, config, rec, request.device, provider_options(config, rec->name,
                                                                                        request.options), c))
      fail_unavailable(registry, request.name);
    listed.insert(rec->name);
    candidates.push_back(std::move(c));
  }
  std::vector<std::unique_ptr<Provider>> created(candidates.size());
  if (config.providers.empty()) {
    for (const PluginRecord* rec : registry.loaded_by_priority()) {
      // Lazy loading: a plugin that drops out when loaded now is left out (logged, and named in the
      // discovery report); its nodes go to the plugins after it and the CPU plugin.
      Candidate c;
      if (rec->name != kCpuProvider && make_candidate(registry, config, rec, -1, provider_options(config, rec->name, {}), c))
        candidates.push_back(std::move(c));
    }
    created.resize(candidates.size());
    apply_policy(registry, config, main, candidates, created, providers.selection);
  } else {
    providers.selection.policy = "listed";
  }
  if (config.cpu_fallback && !listed.count(kCpuProvider)) {
    const PluginRecord* cpu = registry.find_loaded(kCpuProvider);
    Candidate c;
    if (!cpu || !make_candidate(registry, config, cpu, -1, provider_options(config, kCpuProvider, {}), c))
      fail_unavailable(registry, kCpuProvider);
    candidates.push_back(std::move(c));
    created.emplace_back();
  }
  // The policy's candidates come first, in the order of selection.candidates; then the CPU plugin.
  const size_t chosen_by_policy = config.providers.empty() ? providers.selection.candidates.size() : 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (i < chosen_by_policy) {
      ProviderSelection::Candidate& report = providers.selection.candidates[i];
      if (report.skipped) continue;  // its creation failed in the max_coverage dry run already
      if (!created[i]) created[i] = create_chosen_provider(registry, c, providers.selection.policy, report);
      if (!created[i]) continue;
    } else if (!created[i]) {
      created[i] = make_provider(registry, c);
    }
    providers.names.push_back(c.record->name);
    providers.instances.push_back(std::move(created[i]));
  }
  // An isolated provider that fails too often hands its work to the CPU plugin.
  Provider* cpu = nullptr;
  for (size_t i = 0; i < providers.names.size(); ++i)
    if (providers.names[i] == kCpuProvider) cpu = providers.instances[i].get();
  for (auto& p : providers.instances)
    if (auto* isolated = dynamic_cast<IsolatedProvider*>(p.get())) isolated->set_fallback(cpu);
  return providers;
}

}  // namespace ephost
