// The ONNX Runtime kind of provider: an ONNX Runtime plugin EP (host/ort_ep/) behind the one door. It
// creates the plugin's OrtEp with CreateEp (options as "ep.<name>.<key>" session config entries, as ONNX
// Runtime passes them), asks GetCapability over an OrtGraph view of the graph (fused groups from
// EpGraphSupportInfo_AddNodesToFuse), compiles each fused group with Compile, and runs its
// OrtNodeComputeInfo (CreateState / Compute / ReleaseState) over an OrtKernelContext on the executor's
// values. A kernel-registry EP (API 24, OrtEp::GetKernelRegistry) claims nodes one by one
// (EpGraphSupportInfo_AddSingleNode): each claimed node is matched against its registry (operator, domain,
// since-version range, type constraints: ort_ep/kernel_registry.h), the claim refused with the reason when
// no kernel fits, and the node's kernel made by the registered create function from an OrtKernelInfo view
// of the node and run with OrtKernelImpl::Compute over the same OrtKernelContext. The EP is created by the factory that listed the provider's device (a library may have several,
// library.h). The only code of the host that calls an OrtEp or OrtEpFactory after discovery.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ort_ep/kernel_registry.h"
#include "ort_ep/library.h"
#include "ort_ep/ort_objects.h"
#include "provider/provider.h"

namespace ephost {

// The option the session hands an ONNX Runtime plugin EP's provider (in process) when it names
// ep.context_source_model_path: the file whose bytes SessionOptionsGetWeightlessSourceModelBuffer answers.
inline constexpr const char* kOrtWeightlessSourceModelOption = "context_source_model_path";

class OrtEpProvider final : public Provider {
 public:
  // `record` must be an ONNX Runtime plugin EP loaded in process (record.ort set). `device`: one of
  // record.devices (its index is the factory's EP device), or null for the first EP device.
  OrtEpProvider(const PluginRecord& record, const std::vector<std::pair<std::string, std::string>>& options,
                const Device* device);
  ~OrtEpProvider() override;

  std::vector<EphostCapability::Claim> claims(const GraphView& graph, const char* occasion) const override;
  std::unique_ptr<ComputeUnit> create_kernel(const Node& node) const override;
  std::unique_ptr<ComputeUnit> compile(const GraphView& group, const std::string& fused_name) const override;
  void create_state(ComputeUnit& unit) const override;
  void compute(const ComputeUnit& unit, EphostKernelContext* context) const override;
  void run_start() const override;
  void run_end() const override;
  bool observes_runs() const override;
  // OrtEp::Sync (API 25), when the EP has it.
  void sync(const char* why) const override;
  bool syncs() const override;
  bool emits_contexts() const override;
  void emit_context(const std::string& fused_name, EphostContextSink& sink) const override;
  std::optional<ContextJudgement> judge_context(const Node& context_node, const void* blob,
                                                size_t blob_size) const override;
  std::unique_ptr<ComputeUnit> load_context(const Node& context_node, const void* blob,
                                            size_t blob_size) const override;
  std::string compiled_model_compatibility_info() const override { return compatibility_info_; }
  // OrtEp::CreateProfiler (API 25): StartProfiling now, StartEvent / StopEvent around each compute, and at
  // end_profiling the events EndProfiling adds, filed in the session's profile under their category
  // ("session", "node", "kernel", "api") with their names, times and arguments, plus "provider".
  void start_profiling(Profiler& profiler) const override;
  void end_profiling() const override;
  // Itself: its kernels that pre-pack a weight (PrePack's is_packed) are done with it.
  const void* initializer_reader() const override { return this; }

 private:
  class Unit;
  class KernelUnit;
  friend class Unit;
  friend class KernelUnit;

  // Runs one plugin call marked `what` (static text); throws "provider '<name>' <describe()>: ..." on failure.
  template <typename Describe, typename Fn>
  void call(const char* what, Describe&& describe, Fn&& fn) const;
  void take_kernel_registry();
  // ep.<name>.enable_weightless_mode (ONNX Runtime's "ep.enable_weightless_mode"): "0", "1" (EXTERNAL_ONLY)
  // or "2" (ALL), else INVALID_ARGUMENT; a mode the EP device's metadata does not list fails with EP_FAIL
  // before the EP is created. The EP sees the mode and the deprecated "ep.enable_weightless" switch.
  void take_weightless_mode(const std::string& value);
  // Before each Compile for a session that wants a weightless mode: the EP's GetWeightlessSupport (API 29)
  // must include it (EP_FAIL naming what it answered; NOT_IMPLEMENTED without the function).
  void check_weightless_support() const;
  void load_weightless_source_model(const std::string& path);
  // One compute, without profiling.
  void run_compute(const ComputeUnit& unit, EphostKernelContext* context) const;
  // While the EP profiles, each compute lies between its profiler's StartEvent and StopEvent (one correlation
  // id); StopEvent is handed the host's event for it (category NODE, the unit's name, its times).
  struct ProfiledCompute {
    uint64_t correlation_id = 0;
    std::chrono::steady_clock::time_point start;
  };
  ProfiledCompute start_profiled_compute() const;
  void stop_profiled_compute(const ComputeUnit& unit, const ProfiledCompute& started) const;
  void release_profiler();
  void release_ep();
  const Unit& own(const ComputeUnit& unit) const;
  const KernelUnit& own_kernel(const ComputeUnit& unit) const;
  // The registry kernel that runs `node`, or null with the reason (no registry, no kernel fits, a kernel
  // wanting CPU memory on a device with memory of its own).
  const OrtKernelRegistry::Entry* kernel_for(const Node& node, std::string* why_not) const;
  // Pre-packs `unit`'s constant initializer inputs (OrtKernelImpl::PrePackWeight), sharing what the kernel
  // stores to share (SetSharedPrePackedWeight).
  void prepack_constant_inputs(KernelUnit& unit, const Node& node) const;
  // The factory's allocator of the device's own memory (null on host memory), and the kernel context's
  // view of it (KernelContext_GetAllocator / GetScratchBuffer).
  OrtAllocator* device_allocator() const;
  void serve_device_memory(OrtKernelContext& context) const;
  // Whether the OrtEp struct has the members added at API `version`.
  bool ep_has(uint32_t version) const { return ep_->ort_version_supported >= version; }

  // The EPContext node Compile made for `fused_name`, given back; keeps its ep_cache_context bytes
  // (true when it had them).
  bool keep_context_node(const std::string& fused_name, OrtNode* context_node) const;
  // Asks OrtEp::GetCompiledModelCompatibilityInfo about the model `group` belongs to.
  void ask_compatibility_info(const GraphView& group) const;

  const ort_ep::OrtEpLibrary& library_;
  const OrtEpDevice* ep_device_ = nullptr;
  // The factory that listed ep_device_ (of a library with several factories, not always the first), and
  // its name: the EP's name as ONNX Runtime knows it (option prefix, EPContext source, compatibility key).
  OrtEpFactory* factory_ = nullptr;
  std::string ep_name_;
  OrtSessionOptions session_options_;
  // Pre-packing of kernel-registry EPs' weights: on unless "disable_prepacking=1" (ONNX Runtime's
  // session.disable_prepacking); shared across kernels and sessions unless "share_prepacked_weights=0".
  bool prepack_weights_ = true;
  // The weightless EPContext mode the session asked of the EP (OrtWeightlessSupport NONE, EXTERNAL_ONLY or ALL).
  OrtWeightlessSupport weightless_mode_ = OrtWeightlessSupport_NONE;
  bool share_prepacked_weights_ = true;
  OrtEp* ep_ = nullptr;
  // The EP's kernel registry (OrtEp::GetKernelRegistry, API 24), null for a compiling EP. The EP's.
  const OrtKernelRegistry* kernel_registry_ = nullptr;
  // What the plugin's EPContext nodes cached, by fused group (its ep_cache_context attribute): what
  // emit_context hands the host. Filled by compile (the host compiles before it generates contexts).
  mutable std::map<std::string, std::string> cached_contexts_;
  // OrtEp::GetCompiledModelCompatibilityInfo's answer for the model compiled, asked after the first
  // Compile that made an EPContext node ("" when the plugin has none or said nothing).
  mutable std::string compatibility_info_;
  // The EP's profiler while the session profiles (start_profiling .. end_profiling), the session's profile,
  // and the correlation ids handed to StartEvent / StopEvent. Released with the EP.
  mutable OrtEpProfilerImpl* profiler_impl_ = nullptr;
  mutable Profiler* profiler_ = nullptr;
  mutable std::atomic<bool> profiling_{false};
  mutable std::atomic<uint64_t> next_correlation_id_{1};
};

}  // namespace ephost
