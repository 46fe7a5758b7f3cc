// ephost plugin SDK — Capability, where get_capability claims single nodes and fused groups.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/graph.hpp"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/status.hpp"

namespace ephost::sdk {

class Capability {
 public:
  explicit Capability(EphostCapability* c) : c_(c) {}
  void add_node(const Node& node) { check(host().capability_add_node(c_, node.get())); }
  void add_fused_group(const std::vector<Node>& nodes) {
    std::vector<const EphostNode*> raw;
    raw.reserve(nodes.size());
    for (const auto& n : nodes) raw.push_back(n.get());
    check(host().capability_add_fused_group(c_, raw.data(), raw.size()));
  }

 private:
  EphostCapability* c_;
};

}  // namespace ephost::sdk
