// The example EP's provider: claims groups (capability), compiles them into programs (compiler),
// runs them (interpreter/runner), and caches them as EPContext nodes (emit / judge / load).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "compatibility.h"
#include "ephost/sdk/plugin.hpp"
#include "program_format.h"

namespace example_ep {

// Provider options (session entries ep.example.<key>):
//   claim             comma-separated op types to claim (default: every supported one; "" claims nothing)
//   compile_delay_ms  make every compile take this much longer (default 0): stands in for a real
//                     vendor compiler's minutes, to try what an application does meanwhile (tests of
//                     the EPContext rebuild use it)
struct ProviderOptions {
  std::set<std::string> claim;
  int compile_delay_ms = 0;

  static ProviderOptions parse(const ephost::sdk::Options& options);
};

class ExampleProvider : public ephost::sdk::ContextProvider {
 public:
  // `self` is the identity of this build (SDK version, hardware architecture), written into every
  // program it compiles and required of every context it loads.
  ExampleProvider(ProviderOptions options, BuildIdentity self);

  void get_capability(const ephost::sdk::Graph& graph, ephost::sdk::Capability& capability) override;
  std::unique_ptr<ephost::sdk::CompiledGroup> compile(const ephost::sdk::Graph& group,
                                                       const std::string& fused_name) override;

  void emit_context(const std::string& fused_name, ephost::sdk::ContextSink& sink) override;
  ephost::sdk::ContextJudgement judge_context(const ephost::sdk::Node& context_node, const uint8_t* blob,
                                              size_t size) override;
  std::unique_ptr<ephost::sdk::CompiledGroup> load_context(const ephost::sdk::Node& context_node, const uint8_t* blob,
                                                           size_t size) override;

 private:
  ProviderOptions options_;
  BuildIdentity self_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const EncodedProgram>> compiled_;  // by fused_name, for emit_context
};

}  // namespace example_ep
