#include "op_span_label.h"

namespace ephost::cpu::fusion {

void OpSpanLabel::add(const sdk::Node& node) {
  std::string name = node.name();
  if (name.empty() && node.has_output(0)) name = node.output(0).name();
  add(std::move(name), node.op_type());
}

void OpSpanLabel::add(std::string node, std::string op_type) {
  nodes_.push_back(std::move(node));
  op_types_.push_back(std::move(op_type));
}

void OpSpanLabel::append(const OpSpanLabel& other) {
  nodes_.insert(nodes_.end(), other.nodes_.begin(), other.nodes_.end());
  op_types_.insert(op_types_.end(), other.op_types_.begin(), other.op_types_.end());
}

std::string OpSpanLabel::name() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) out += (i ? " + " : "") + nodes_[i];
  return out;
}

std::string OpSpanLabel::op_type() const {
  std::string out;
  for (size_t i = 0; i < op_types_.size(); ++i) out += (i ? "+" : "") + op_types_[i];
  return out;
}

void OpSpanLabel::report(sdk::SpanTimer& timer) const { timer.close(name(), op_type(), nodes_); }

namespace {

class GroupSpan final : public sdk::CompiledGroup {
 public:
  GroupSpan(std::unique_ptr<sdk::CompiledGroup> inner, OpSpanLabel label)
      : inner_(std::move(inner)), label_(std::move(label)) {}
  void* create_state() override { return inner_->create_state(); }
  void release_state(void* state) override { inner_->release_state(state); }
  void compute(void* state, sdk::KernelContext& ctx) override {
    sdk::SpanTimer spans(ctx);
    inner_->compute(state, ctx);
    if (spans.on()) label_.report(spans);
  }

 private:
  std::unique_ptr<sdk::CompiledGroup> inner_;
  OpSpanLabel label_;
};

}  // namespace

std::unique_ptr<sdk::CompiledGroup> with_group_span(std::unique_ptr<sdk::CompiledGroup> inner,
                                                    const sdk::Graph& group) {
  OpSpanLabel label;
  for (const sdk::Node& node : group.nodes()) label.add(node);
  return std::make_unique<GroupSpan>(std::move(inner), std::move(label));
}

}  // namespace ephost::cpu::fusion
