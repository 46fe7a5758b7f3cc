// The one door to a provider: every call the host makes into provider code after discovery goes
// through this interface, one typed method per plugin function. Each method owns its null checks for
// optional plugin functions, its version gating, its fault marking (a crash or hang inside it is
// reported naming the plugin, its library and the call: core/plugin_fault.h), its fence against C++
// exceptions thrown across the ABI, and the wording of its errors ("provider '<name>' <call>: ...").
//
// The rest of the host (partition, compile, exec, epcontext, session) holds a Provider and never knows
// which kind of provider is behind it. Two kinds today: a native plugin running in process
// (native_provider.h), and a proxy to a plugin running in a provider host process
// (isolation/isolated_provider.h, chosen by the session's provider_isolation settings). An ONNX Runtime
// plugin EP behind an adapter is a further kind of the same interface: what crosses the door is the
// host's own graph views, nodes, kernel contexts and context sinks, and what comes back is claims,
// opaque compute units and verdicts, never a plugin's function table.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin_abi/handles.h"
#include "ephost/ephost_plugin.h"
#include "graph/graph.h"

namespace ephost {

struct PluginRecord;
class Device;
class Profiler;
class Provider;

// What a provider made to run one step: a kernel for a single node (create_kernel), or a compute unit
// for a fused group (compile, load_context). Opaque to the rest of the host: it is only handed back to
// the provider that made it (Provider::compute, Provider::create_state). Destroying it gives it back to
// its plugin (kernel_release; release_state and release), so every unit must go before its provider.
class ComputeUnit {
 public:
  virtual ~ComputeUnit() = default;
  ComputeUnit(const ComputeUnit&) = delete;
  ComputeUnit& operator=(const ComputeUnit&) = delete;

  // A fused group's unit, else a single node's kernel.
  bool fused() const { return fused_; }
  // The fused group's name (fused_name at compile), or the node's name.
  const std::string& name() const { return name_; }
  // Kernel-context (input, output) positions whose output may be written into the input's buffer
  // when this step is the input's last reader (ONNX Runtime's MayInplace and Alias); usually none.
  const std::vector<std::pair<int, int>>& in_place() const { return in_place_; }

 protected:
  ComputeUnit(bool fused, std::string name) : fused_(fused), name_(std::move(name)) {}
  void set_in_place(std::vector<std::pair<int, int>> pairs) { in_place_ = std::move(pairs); }

 private:
  bool fused_;
  std::string name_;
  std::vector<std::pair<int, int>> in_place_;
};

// A provider's verdict on a cached EPContext blob (judge_context).
struct ContextJudgement {
  EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
  std::string reason;  // the field that decided, in the plugin's words; may be empty
};

class Provider {
 public:
  virtual ~Provider() = default;
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  // ---- who it is ---------------------------------------------------------------------------------------
  const std::string& name() const { return name_; }
  const PluginRecord& record() const { return record_; }
  // The device the provider runs on (plugin ABI 3), or null.
  const Device* device() const { return device_; }
  // The device whose memory the provider's kernels read and write, or null when they use host memory
  // (no device, or a device that works on host memory).
  const Device* memory_device() const;
  // "<name>" or, on a device, "<name>:<index>".
  std::string label() const;
  // The plugin's library path, for reports ("" for the built-in plugin).
  const char* library_path() const;

  // ---- partitioning (get_capability) --------------------------------------------------------------------
  // The provider's claims on `graph`: one get_capability call. Claims of nodes the provider's ABI
  // version cannot read (sequence and optional values for ABI 1) come back refused, with the reason.
  // `occasion` (static text, may be null) is named in errors, e.g. "max_coverage dry run". Throws the
  // plugin's failure; the caller decides what it costs (the partitioner: that graph, not the session).
  virtual std::vector<EphostCapability::Claim> claims(const GraphView& graph, const char* occasion = nullptr) const = 0;

  // ---- compiling (kernel_create, compile, create_state) -------------------------------------------------
  // The kernel for a node the provider claimed alone. EP_FAIL when the plugin has no kernels.
  virtual std::unique_ptr<ComputeUnit> create_kernel(const Node& node) const = 0;
  // The compute unit for a fused group the provider claimed; `group` is valid during the call only.
  // EP_FAIL when the plugin does not compile, or compiles to no compute function.
  virtual std::unique_ptr<ComputeUnit> compile(const GraphView& group, const std::string& fused_name) const = 0;
  // Gives a fused unit (compiled or loaded) its per-session state; nothing for a kernel or a unit
  // without state. Called once per unit, before its first compute.
  virtual void create_state(ComputeUnit& unit) const = 0;

  // ---- running (kernel_compute / compute, on_run_start, on_run_end) ---------------------------------------
  // Runs `unit` (made by this provider) on `context`. May be called from several threads at once.
  virtual void compute(const ComputeUnit& unit, EphostKernelContext* context) const = 0;
  // Before and after every Run of a session that uses this provider; nothing when the plugin has no
  // such function.
  virtual void run_start() const = 0;
  virtual void run_end() const = 0;
  // Whether run_start or run_end reach the plugin (it has on_run_start or on_run_end): a provider in
  // another process skips the round trip when neither does.
  virtual bool observes_runs() const = 0;
  // Waits until every piece of work the provider queued on its device is done, device-wide (ONNX Runtime
  // plugin EPs: OrtEp::Sync, API 25). The session calls it where an ONNX Runtime application calls
  // SynchronizeBoundInputs / SynchronizeBoundOutputs, which ephost's runs do for it: before a run, for the
  // providers reading an input the application handed as a device tensor, and after the run, before its
  // outputs are handed over, for the providers that produced them. `why` (static text) is named in errors.
  // Nothing for a provider whose plugin has no such function. Throws the plugin's failure naming it.
  virtual void sync(const char* why) const { (void)why; }
  // Whether sync reaches the plugin: the session skips the call (and an isolated provider the round trip)
  // otherwise.
  virtual bool syncs() const { return false; }

  // ---- EPContext (context_emit, context_judge, context_load) ----------------------------------------------
  // Whether emit_context can cache what the provider compiles.
  virtual bool emits_contexts() const = 0;
  // Writes the cached form of the fused group `fused_name` (compiled this session) into `sink`.
  virtual void emit_context(const std::string& fused_name, EphostContextSink& sink) const = 0;
  // The provider's verdict on `blob` (`blob_size` bytes, valid during the call) for EPContext node
  // `context_node`; nothing when the plugin has no judge (it would load every context of its keys).
  virtual std::optional<ContextJudgement> judge_context(const Node& context_node, const void* blob,
                                                        size_t blob_size) const = 0;
  // What the EPContext model records as its metadata entry ep_compatibility_info.<name>, when the
  // provider says it itself (ONNX Runtime plugin EPs: OrtEp::GetCompiledModelCompatibilityInfo); ""
  // when the host's description of the plugin and device is recorded instead.
  virtual std::string compiled_model_compatibility_info() const { return {}; }
  // The compute unit for a cached context judged usable (named after the node). Throws when the plugin
  // cannot load contexts ("the provider has no context_load") or fails to.
  virtual std::unique_ptr<ComputeUnit> load_context(const Node& context_node, const void* blob,
                                                    size_t blob_size) const = 0;

  // ---- profiling (session.enable_profiling) ---------------------------------------------------------------
  // The session's profile began (`profiler`, which outlives the provider's profiling): a plugin that keeps a
  // profile of its own starts it (ONNX Runtime plugin EPs: OrtEp::CreateProfiler). Nothing for the others,
  // whose spans the host records itself. Failures are logged, never thrown: profiling fails no session.
  virtual void start_profiling(Profiler& profiler) const { (void)profiler; }
  // The session's profile is about to be written: the plugin's own events are filed in it now, and its
  // profiling ends (later work is not reported by it, as in ONNX Runtime). Nothing when not started.
  virtual void end_profiling() const {}

  // ---- initializers (plugin ABI 5, model/initializer_release.h) ------------------------------------------
  // The name this provider's reads of initializers go by, as it says "done with this initializer"
  // (value_initializer_done); null for a provider that cannot say so (its steps then keep every
  // initializer they read).
  virtual const void* initializer_reader() const { return nullptr; }

 protected:
  Provider(const PluginRecord& record, const Device* device);

 private:
  const PluginRecord& record_;
  const Device* device_ = nullptr;
  std::string name_;
};

// Creates the provider of `record`'s plugin for one session, with `options` (ep.<name>.<key> entries
// and intra_op_num_threads), on `device` (one of record.devices) or, when null, without one. The kind
// of provider is chosen here (today: the plugin's native table, in process; the plugin must be loaded,
// PluginRegistry::ensure_loaded). Throws the plugin's failure naming it.
std::unique_ptr<Provider> create_provider(const PluginRecord& record,
                                          const std::vector<std::pair<std::string, std::string>>& options,
                                          const Device* device = nullptr);

}  // namespace ephost
