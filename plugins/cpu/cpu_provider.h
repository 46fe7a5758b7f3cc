// The CPU provider: claims every node the kernel registry can run and creates its kernels.
#pragma once

#include <memory>
#include <string>

#include "kernel_base.h"

namespace ephost::cpu {

class CpuProvider : public sdk::Provider {
 public:
  explicit CpuProvider(const sdk::Options& options);
  void get_capability(const sdk::Graph& graph, sdk::Capability& capability) override;
  std::unique_ptr<sdk::Kernel> create_kernel(const sdk::Node& node) override;
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Graph& group, const std::string& fused_name) override;

 private:
  KernelConfig config_;
};

}  // namespace ephost::cpu
