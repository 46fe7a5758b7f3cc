// ephost plugin SDK — what a plugin implements: a Provider per session, answering get_capability and
// making a Kernel per claimed node or a CompiledGroup per fused group; and its Options.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ephost/sdk/capability.hpp"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/kernel_context.hpp"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

// A node's kernel. compute() may run concurrently from several threads: keep it const in spirit.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelContext& context) = 0;
};

// A compiled fused group. State is per session: create_state once, compute per run.
class CompiledGroup {
 public:
  virtual ~CompiledGroup() = default;
  virtual void* create_state() { return nullptr; }
  virtual void release_state(void*) {}
  virtual void compute(void* state, KernelContext& context) = 0;
};

using Options = std::vector<std::pair<std::string, std::string>>;

inline std::string option(const Options& options, const std::string& key, const std::string& def) {
  for (const auto& kv : options)
    if (kv.first == key) return kv.second;
  return def;
}

class Provider {
 public:
  virtual ~Provider() = default;
  virtual void get_capability(const Graph& graph, Capability& capability) = 0;
  virtual std::unique_ptr<Kernel> create_kernel(const Node& node) {
    fail(EPHOST_NOT_IMPLEMENTED, "provider has no kernel for node '" + node.name() + "'");
  }
  virtual std::unique_ptr<CompiledGroup> compile(const Graph& group, const std::string& fused_name) {
    (void)group;
    fail(EPHOST_NOT_IMPLEMENTED, "provider cannot compile fused group '" + fused_name + "'");
  }
  virtual void on_run_start() {}
  virtual void on_run_end() {}
};

}  // namespace ephost::sdk
