// The CPU provider: claims every node the kernel registry can run and creates its kernels.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "fusion/graph_match.h"
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
  // Groups claimed by a pattern (fusion/graph_match.h), by their nodes, for compile().
  enum class ClaimKind { kPattern, kRegion, kInt8Trunk };
  struct Claim {
    ClaimKind kind = ClaimKind::kPattern;
    const fusion::Fusion* fusion = nullptr;  // kPattern
    sdk::Node anchor;
    // The claimed nodes' names, in the key's order: a node handle the host freed (a graph edited after
    // an earlier get_capability) can come back at the same address as another node, so the addresses
    // alone could hand a later group a stale claim's fusion.
    std::vector<std::string> names;
  };
  std::mutex mu_;
  std::map<std::vector<const EphostNode*>, Claim> claims_;

  // Claims the int8 trunks (fusion/qdq_conv_trunk.h) joining the qdq_conv pattern's groups `chains`,
  // in place of those chains' claims (`position`: each node's place in graph order; `pattern_at`: the
  // groups to offer, by first node).
  void claim_int8_trunks(const sdk::Graph& graph, const std::vector<std::vector<sdk::Node>>& chains,
                         const std::unordered_map<const EphostNode*, size_t>& position,
                         std::unordered_map<const EphostNode*, std::vector<sdk::Node>>& pattern_at);
};

}  // namespace ephost::cpu
