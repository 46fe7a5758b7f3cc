// Loop (opsets 1 to 21): runs the body subgraph while the trip count and the condition allow.
// Loop-carried values (tensors, sequences or optionals) go from one iteration's outputs to the next
// one's inputs as host values, without copying; scan outputs are kept per iteration and stacked
// along a new first axis at the end (one copy). Outer-scope values are bound by the host.
#include <limits>

#include "kernel_registry.h"
#include "value_util.h"

namespace ephost::cpu {

namespace {

class LoopKernel : public CpuKernel {
 public:
  LoopKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), body_(node.subgraph("body")) {
    if (!body_.valid()) fail_node(node, "attribute body (a graph) is required");
    if (node.num_inputs() < 2) fail_node(node, "needs inputs M and cond (either may be empty)");
    carried_ = node.num_inputs() - 2;
    const size_t body_outputs = body_.num_outputs();
    if (body_.num_inputs() != carried_ + 2)
      fail_node(node, "the body takes " + std::to_string(body_.num_inputs()) + " inputs; with " +
                          std::to_string(carried_) + " loop-carried values it must take " +
                          std::to_string(carried_ + 2) + " (iteration number, condition, the values)");
    if (body_outputs < carried_ + 1)
      fail_node(node, "the body has " + std::to_string(body_outputs) + " outputs; it must have at least " +
                          std::to_string(carried_ + 1) + " (condition and the loop-carried values)");
    scans_ = body_outputs - 1 - carried_;
    if (node.num_outputs() > carried_ + scans_)
      fail_node(node, "has " + std::to_string(node.num_outputs()) + " outputs but the body gives only " +
                          std::to_string(carried_ + scans_));
    for (size_t k = 0; k < scans_; ++k) {
      const sdk::Value out = body_.output(1 + carried_ + k);
      scan_empty_shape_.push_back(empty_stacked_shape(out, 0));
      scan_elem_type_.push_back(out.elem_type() != EPHOST_ELEMENT_UNDEFINED ? out.elem_type() : EPHOST_ELEMENT_FLOAT);
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor m = ctx.input(0);
    const sdk::Tensor c = ctx.input(1);
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (m.present()) {
      if (m.size() != 1) fail("M must have exactly one element, found shape " + math::to_string(m.shape()));
      trips = ints_of(m, "M")[0];
    }
    // Without a cond input the loop is a for loop: the body's condition output is ignored.
    const bool has_cond = c.present();
    bool cond = has_cond ? bool_of(c, "cond") : true;

    std::vector<sdk::OwnedValue> carried;
    for (size_t j = 0; j < carried_; ++j) {
      if (ctx.input_kind(2 + j) == EPHOST_VALUE_UNDEFINED)
        fail("loop-carried input " + std::to_string(j) + " is missing");
      carried.push_back(ctx.input_value(2 + j));
    }
    std::vector<std::vector<sdk::OwnedValue>> scans(scans_);
    std::vector<const sdk::OwnedValue*> inputs(carried_ + 2);
    for (int64_t i = 0; i < trips && cond; ++i) {
      ctx.check_run();  // a huge trip count ends when the run is stopped (terminate, deadline)
      const sdk::OwnedValue iteration = int64_scalar_value(i);
      const sdk::OwnedValue condition = bool_scalar_value(cond);
      inputs[0] = &iteration;
      inputs[1] = &condition;
      for (size_t j = 0; j < carried_; ++j) inputs[2 + j] = &carried[j];
      std::vector<sdk::OwnedValue> out = ctx.run_subgraph_values("body", inputs, 1 + carried_ + scans_);
      if (has_cond) cond = bool_of(out[0].tensor(), "the body's condition output");
      for (size_t j = 0; j < carried_; ++j) carried[j] = std::move(out[1 + j]);
      for (size_t k = 0; k < scans_; ++k) scans[k].push_back(std::move(out[1 + carried_ + k]));
    }

    for (size_t j = 0; j < carried_; ++j)
      if (output_wanted(j)) ctx.set_output(j, carried[j]);
    for (size_t k = 0; k < scans_; ++k) {
      if (!output_wanted(carried_ + k)) continue;
      std::vector<sdk::Tensor> parts;
      parts.reserve(scans[k].size());
      for (const sdk::OwnedValue& v : scans[k]) {
        if (v.kind() != EPHOST_VALUE_TENSOR)
          fail("scan output " + std::to_string(k) + " must be a tensor in every iteration, found a " +
               EphostValueKindName(v.kind()));
        parts.push_back(v.tensor());
      }
      write_stacked_output(ctx, carried_ + k, parts, 0, false, scan_elem_type_[k], scan_empty_shape_[k], threads);
    }
  }

 private:
  sdk::Graph body_;
  size_t carried_ = 0;
  size_t scans_ = 0;
  std::vector<Shape> scan_empty_shape_;
  std::vector<int32_t> scan_elem_type_;
};

}  // namespace

void register_loop_kernels(KernelRegistry& r) {
  r.add_value_kernel("Loop", 1, 17, inputs_of({EPHOST_ELEMENT_INT64, EPHOST_ELEMENT_INT32}, {0}),
                     make_factory<LoopKernel>());
}

}  // namespace ephost::cpu
