#include "graph/precomputed_value.h"

#include "core/error.h"

namespace ephost {

std::shared_ptr<Tensor> PrecomputedNode::output(size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!done_) {
    outputs_ = compute_();
    done_ = true;
    compute_ = nullptr;  // what it held (the inputs, the node) is no longer needed
  }
  if (index >= outputs_.size() || !outputs_[index])
    fail(EPHOST_FAIL, "precomputed value: output {} of its node was not computed", index);
  return outputs_[index];
}

bool PrecomputedNode::computed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::shared_ptr<Tensor> PrecomputedValue::data() const { return node_->output(index_); }

}  // namespace ephost
