// SequenceMap (opset 17): runs the body once per position of the input sequences. Sequence inputs
// give the body their element at that position, tensor inputs are passed whole every time; each
// body output becomes one output sequence. Elements go in and results come out as shared host
// values: nothing is copied.
#include "kernel_registry.h"

namespace ephost::cpu {

namespace {

class SequenceMapKernel : public CpuKernel {
 public:
  SequenceMapKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), body_(node.subgraph("body")) {
    if (!body_.valid()) fail_node(node, "attribute body (a graph) is required");
    if (node.num_inputs() < 1) fail_node(node, "needs an input sequence");
    if (body_.num_inputs() != node.num_inputs())
      fail_node(node, "the body takes " + std::to_string(body_.num_inputs()) + " inputs, the node has " +
                          std::to_string(node.num_inputs()));
    if (body_.num_outputs() != node.num_outputs())
      fail_node(node, "the body has " + std::to_string(body_.num_outputs()) + " outputs, the node " +
                          std::to_string(node.num_outputs()));
    for (size_t o = 0; o < node.num_outputs(); ++o) {
      // The element type an empty output sequence gets: the declared one, else the body output's.
      int32_t t = node.has_output(o) ? node.output(o).tensor_elem_type() : EPHOST_ELEMENT_UNDEFINED;
      if (t == EPHOST_ELEMENT_UNDEFINED) t = body_.output(o).elem_type();
      empty_elem_type_.push_back(t != EPHOST_ELEMENT_UNDEFINED ? t : EPHOST_ELEMENT_FLOAT);
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const size_t n_in = ctx.num_inputs();
    const size_t n_out = ctx.num_outputs();
    if (ctx.input_kind(0) != EPHOST_VALUE_SEQUENCE)
      fail(std::string("input 0 must be a sequence, found a ") + EphostValueKindName(ctx.input_kind(0)));
    std::vector<sdk::OwnedValue> inputs;
    std::vector<bool> is_sequence(n_in);
    size_t length = 0;
    for (size_t i = 0; i < n_in; ++i) {
      const int32_t kind = ctx.input_kind(i);
      if (kind != EPHOST_VALUE_SEQUENCE && kind != EPHOST_VALUE_TENSOR)
        fail("input " + std::to_string(i) + " must be a sequence or a tensor, found a " + EphostValueKindName(kind));
      inputs.push_back(ctx.input_value(i));
      is_sequence[i] = kind == EPHOST_VALUE_SEQUENCE;
      if (!is_sequence[i]) continue;
      const size_t len = inputs[i].sequence_length();
      if (i > 0 && len != length)
        fail("input sequences must have one length: input 0 has " + std::to_string(length) + " elements, input " +
             std::to_string(i) + " has " + std::to_string(len));
      length = len;
    }

    std::vector<std::vector<sdk::OwnedValue>> results(n_out);
    std::vector<sdk::OwnedValue> elements(n_in);
    std::vector<const sdk::OwnedValue*> bound(n_in);
    for (size_t k = 0; k < length; ++k) {
      for (size_t i = 0; i < n_in; ++i) {
        if (is_sequence[i]) {
          elements[i] = inputs[i].element_value(k);
          bound[i] = &elements[i];
        } else {
          bound[i] = &inputs[i];
        }
      }
      std::vector<sdk::OwnedValue> out = ctx.run_subgraph_values("body", bound, n_out);
      for (size_t o = 0; o < n_out; ++o) {
        if (out[o].kind() != EPHOST_VALUE_TENSOR)
          fail("body output " + std::to_string(o) + " must be a tensor, found a " + EphostValueKindName(out[o].kind()));
        results[o].push_back(std::move(out[o]));
      }
    }
    for (size_t o = 0; o < n_out; ++o) {
      if (!output_wanted(o)) continue;
      const int32_t type = length ? results[o][0].tensor().elem_type() : empty_elem_type_[o];
      ctx.output_sequence(o, type, length);
      for (size_t k = 0; k < length; ++k) ctx.set_output_sequence_element(o, k, results[o][k]);
    }
  }

 private:
  sdk::Graph body_;
  std::vector<int32_t> empty_elem_type_;
};

}  // namespace

void register_sequence_map_kernels(KernelRegistry& r) {
  r.add_value_kernel("SequenceMap", 17, 17, nullptr, make_factory<SequenceMapKernel>());
}

}  // namespace ephost::cpu
