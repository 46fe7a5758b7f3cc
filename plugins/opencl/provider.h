// The OpenCL provider: one per session and device. It claims what it can lower (capability.h), compiles each
// group into an OpenCL program built for its device (lowering → fusion → codegen → clBuildProgram), and
// caches programs as EPContext nodes holding the program binary, the packed weights and the identity of
// the device and driver (context_format.h, compatibility.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compatibility.h"
#include "context_format.h"
#include "ephost/sdk/plugin.hpp"
#include "options.h"

namespace ephost_opencl {

class OpenclProvider : public ephost::sdk::ContextProvider {
 public:
  OpenclProvider(const ProviderOptions& options, uint32_t device);

  void get_capability(const ephost::sdk::Graph& graph, ephost::sdk::Capability& capability) override;
  std::unique_ptr<ephost::sdk::CompiledGroup> compile(const ephost::sdk::Graph& group, const std::string& fused_name) override;
  void emit_context(const std::string& fused_name, ephost::sdk::ContextSink& sink) override;
  ephost::sdk::ContextJudgement judge_context(const ephost::sdk::Node& context_node, const uint8_t* blob, size_t size) override;
  std::unique_ptr<ephost::sdk::CompiledGroup> load_context(const ephost::sdk::Node& context_node, const uint8_t* blob,
                                                           size_t size) override;

 private:
  uint32_t device_;
  Judge self_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const EncodedContext>> compiled_;
};

// The plugin's version ("MAJOR.MINOR.PATCH"), recorded in every context.
const std::string& plugin_version();

}  // namespace ephost_opencl
