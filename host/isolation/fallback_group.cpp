#include "isolation/fallback_group.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/runtime_value.h"
#include "core/tensor.h"
#include "partition/partition.h"

namespace ephost {
namespace {

// The kernel context of one node of a fallen-back group: its inputs are the group's inputs or values
// earlier nodes made; its outputs go to the group's outputs (through the step's context) or stay here.
class NodeContext final : public EphostKernelContext {
 public:
  NodeContext(EphostKernelContext& step, const GraphView& group, const Node& node,
              std::map<const Value*, RuntimeValue>& values, const std::map<const Value*, RuntimeValue>& constants)
      : step_(step), group_(group), node_(node), values_(values), constants_(constants),
        outputs_(node.outputs.size()) {}

  size_t num_inputs() const override { return node_.inputs.size(); }
  const RuntimeValue* input(size_t index) const override {
    if (index >= node_.inputs.size()) fail(EPHOST_INVALID_ARGUMENT, "input index {} out of range", index);
    const Value* v = node_.inputs[index];
    if (!v) return nullptr;
    for (size_t i = 0; i < group_.inputs.size(); ++i)
      if (group_.inputs[i] == v) return step_.input(i);
    auto it = values_.find(v);
    if (it != values_.end()) return &it->second;
    auto constant = constants_.find(v);
    return constant == constants_.end() ? nullptr : &constant->second;
  }
  size_t num_outputs() const override { return node_.outputs.size(); }
  Tensor& allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) override {
    check(index);
    if (const int out = group_output(index); out >= 0) {
      Tensor& t = step_.allocate_output(static_cast<size_t>(out), elem_type, std::move(shape));
      outputs_[index] = Tensor::borrow(t.elem_type(), t.shape(), t.data(), t.holder());
      return outputs_[index].tensor();
    }
    outputs_[index] = Tensor::allocate(elem_type, std::move(shape));
    return outputs_[index].tensor();
  }
  Tensor* allocated_output(size_t index) override {
    return index < outputs_.size() && outputs_[index].is_tensor() ? &outputs_[index].tensor() : nullptr;
  }
  void set_output(size_t index, RuntimeValue value) override {
    check(index);
    if (const int out = group_output(index); out >= 0) step_.set_output(static_cast<size_t>(out), value);
    outputs_[index] = std::move(value);
  }
  void begin_sequence_output(size_t, int32_t, size_t) override {
    fail(EPHOST_NOT_IMPLEMENTED, "a fallen-back group cannot make sequences");
  }
  TensorSequence& sequence_output(size_t) override {
    fail(EPHOST_NOT_IMPLEMENTED, "a fallen-back group cannot make sequences");
  }
  int32_t num_threads() const override { return step_.num_threads(); }
  std::vector<RuntimeValue> run_subgraph(const std::string&, std::vector<RuntimeValue>) override {
    fail(EPHOST_NOT_IMPLEMENTED, "a fallen-back group cannot run subgraphs");
  }
  const Device* memory_device() const override { return nullptr; }
  EphostStream* stream() override { return nullptr; }
  const RunLimits* run_limits() const override { return step_.run_limits(); }

  // What the node made, kept for the nodes after it.
  void keep_outputs() {
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (node_.outputs[i] && outputs_[i].is_set()) values_[node_.outputs[i]] = std::move(outputs_[i]);
  }

 private:
  int group_output(size_t index) const {
    for (size_t i = 0; i < group_.outputs.size(); ++i)
      if (group_.outputs[i] == node_.outputs[index]) return static_cast<int>(i);
    return -1;
  }
  void check(size_t index) const {
    if (index >= outputs_.size()) fail(EPHOST_INVALID_ARGUMENT, "output index {} out of range", index);
    if (outputs_[index].is_set()) fail(EPHOST_INVALID_ARGUMENT, "output {} is already set", index);
  }

  EphostKernelContext& step_;
  const GraphView& group_;
  const Node& node_;
  std::map<const Value*, RuntimeValue>& values_;
  const std::map<const Value*, RuntimeValue>& constants_;
  std::vector<RuntimeValue> outputs_;
};

}  // namespace

FallbackGroup::FallbackGroup(const Provider& fallback, const Graph& graph, const std::vector<const Node*>& nodes,
                             bool fused, const std::string& name)
    : fallback_(fallback), fused_(fused), view_(make_group_view(graph, nodes, name)) {
  for (const Node* node : view_->nodes) kernels_.push_back(fallback_.create_kernel(*node));
}

FallbackGroup::FallbackGroup(const Provider& fallback, std::unique_ptr<GraphView> view)
    : fallback_(fallback), fused_(true), view_(std::move(view)) {
  for (const Node* node : view_->nodes) {
    kernels_.push_back(fallback_.create_kernel(*node));
    for (const Value* v : node->inputs)
      if (v && v->is_constant_initializer() &&
          std::find(view_->inputs.begin(), view_->inputs.end(), v) == view_->inputs.end())
        constants_.emplace(v, RuntimeValue(*v->constant_data()));  // read back, were it freed
  }
}

FallbackGroup::~FallbackGroup() = default;

void FallbackGroup::compute(EphostKernelContext* context) const {
  if (!fused_) return fallback_.compute(*kernels_.front(), context);
  std::map<const Value*, RuntimeValue> values;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    NodeContext node(*context, *view_, *view_->nodes[i], values, constants_);
    fallback_.compute(*kernels_[i], &node);
    node.keep_outputs();
  }
}

}  // namespace ephost
