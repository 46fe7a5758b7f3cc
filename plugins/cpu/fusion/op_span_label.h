// What one profile span of a compiled group names (plugin ABI 4): the ONNX nodes a primitive or fused
// chain covers and their operator types. Built once when the group compiles, reported on every
// profiled run through sdk::SpanTimer, so that a run that is not profiled pays nothing for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ephost/sdk/plugin.hpp"

namespace ephost::cpu::fusion {

class OpSpanLabel {
 public:
  // Adds one ONNX node: its name (its first output's name when the node has none) and its op type.
  void add(const sdk::Node& node);
  void add(std::string node, std::string op_type);
  // Adds what `other` covers, after what this covers (a chain: the convolution, then what it absorbed).
  void append(const OpSpanLabel& other);

  // "conv1" for one node, "conv1 + bn1 + relu1" for a chain.
  std::string name() const;
  // "Conv" for one node, "Conv+BatchNormalization+Relu" for a chain.
  std::string op_type() const;
  const std::vector<std::string>& nodes() const { return nodes_; }

  // Closes the timer's current span with this label. Call after the work, and only when timer.on().
  void report(sdk::SpanTimer& timer) const;

 private:
  std::vector<std::string> nodes_;
  std::vector<std::string> op_types_;
};

// `inner`, reporting one span that names every node of `group` around each compute: for compiled
// groups that run their nodes as one piece (an elementwise chain, a matched pattern), whose time
// cannot be split by node. Not for groups that report their own spans (a convolutional region).
std::unique_ptr<sdk::CompiledGroup> with_group_span(std::unique_ptr<sdk::CompiledGroup> inner,
                                                    const sdk::Graph& group);

}  // namespace ephost::cpu::fusion
