// A node output the host can compute from constants, computed on first request and then kept.
//
// Constant folding precomputes a QDQ model's DequantizeLinear of a quantized weight (and what reads it)
// but keeps the node, so that a provider can fuse it and run the product in int8 on the quantized
// values (transform/constant_folding.cpp). Computing the float values at once would cost a float copy
// of every int8 weight at session creation, which an int8 group never reads. So the value is only
// described (Value::precomputed) and its data made when someone asks for it: a provider reading it as
// a constant (value_initializer_data), or partitioning, for a node claimed on its own
// (partition/precomputed_steps.h). The outputs of one node are computed together, once.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/tensor.h"

namespace ephost {

// The outputs of one node, computed together the first time any of them is asked for.
class PrecomputedNode {
 public:
  // Computes every output of the node (one per output slot, null where omitted or unread); throws
  // when it cannot. Called at most once successfully.
  using Compute = std::function<std::vector<std::shared_ptr<Tensor>>()>;
  explicit PrecomputedNode(Compute compute) : compute_(std::move(compute)) {}
  // Outputs already known (the node was evaluated when it was recorded).
  explicit PrecomputedNode(std::vector<std::shared_ptr<Tensor>> outputs) : outputs_(std::move(outputs)), done_(true) {}

  // Output `index`, computing them all on the first call (thread-safe; a failure is thrown again on
  // every call: the same inputs fail the same way).
  std::shared_ptr<Tensor> output(size_t index);
  // Whether the outputs were computed (no computation happens).
  bool computed() const;

 private:
  mutable std::mutex mu_;
  Compute compute_;
  std::vector<std::shared_ptr<Tensor>> outputs_;
  bool done_ = false;
};

// One output of a PrecomputedNode.
class PrecomputedValue {
 public:
  PrecomputedValue(std::shared_ptr<PrecomputedNode> node, size_t index) : node_(std::move(node)), index_(index) {}
  // The data, computed on first request (see PrecomputedNode::output); never null (throws instead).
  std::shared_ptr<Tensor> data() const;
  bool computed() const { return node_->computed(); }

 private:
  std::shared_ptr<PrecomputedNode> node_;
  size_t index_ = 0;
};

}  // namespace ephost
