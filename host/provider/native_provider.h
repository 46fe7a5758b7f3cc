// The native kind of provider: an ephost plugin's own function table (ephost_plugin.h), called in
// process. The only code of the host that reads a plugin's EphostPlugin table after discovery.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/plugin_call.h"
#include "model/initializer_release.h"
#include "provider/provider.h"

namespace ephost {

class NativeProvider final : public Provider {
 public:
  // Creates the plugin's provider with provider_create, or provider_create_for_device on `device`.
  NativeProvider(const PluginRecord& record, const std::vector<std::pair<std::string, std::string>>& options,
                 const Device* device);
  ~NativeProvider() override;

  std::vector<EphostCapability::Claim> claims(const GraphView& graph, const char* occasion) const override;
  std::unique_ptr<ComputeUnit> create_kernel(const Node& node) const override;
  std::unique_ptr<ComputeUnit> compile(const GraphView& group, const std::string& fused_name) const override;
  void create_state(ComputeUnit& unit) const override;
  void compute(const ComputeUnit& unit, EphostKernelContext* context) const override;
  void run_start() const override;
  void run_end() const override;
  bool observes_runs() const override;
  bool emits_contexts() const override;
  void emit_context(const std::string& fused_name, EphostContextSink& sink) const override;
  std::optional<ContextJudgement> judge_context(const Node& context_node, const void* blob,
                                                size_t blob_size) const override;
  std::unique_ptr<ComputeUnit> load_context(const Node& context_node, const void* blob,
                                            size_t blob_size) const override;
  // The handle the plugin gets as EphostProvider*: what it names itself with in value_initializer_done.
  const void* initializer_reader() const override { return handle_; }

 private:
  class Unit;
  friend class Unit;

  // Runs one plugin call marked as `what` (which must outlive the call) and throws its failure as
  // "provider '<name>' <what>: ...".
  template <typename Fn>
  void call(const char* what, Fn&& fn) const {
    InitializerReaderScope reader(handle_);  // the initializers it is handed are noted under its name
    if (auto failure = run_plugin_call(name().c_str(), library_path(), what, std::forward<Fn>(fn)))
      throw_failure(what, *failure);
  }
  // The same, marked as `marker` (static text), with the description built only when the call fails:
  // the hot path (compute) formats nothing.
  template <typename Describe, typename Fn>
  void call_described(const char* marker, Describe&& describe, Fn&& fn) const {
    InitializerReaderScope reader(handle_);
    if (auto failure = run_plugin_call(name().c_str(), library_path(), marker, std::forward<Fn>(fn)))
      throw_failure(describe(), *failure);
  }
  [[noreturn]] void throw_failure(const std::string& what, const PluginCallFailure& failure) const;
  const Unit& own(const ComputeUnit& unit) const;

  const EphostPlugin* plugin_ = nullptr;
  EphostProvider* handle_ = nullptr;
};

}  // namespace ephost
