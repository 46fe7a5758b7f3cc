// If: runs the chosen branch through the host and hands its results on as the node's outputs
// (tensors, sequences or optionals; nothing is copied: subgraph results own their memory).
#include "kernel_registry.h"
#include "value_util.h"

namespace ephost::cpu {

namespace {

class IfKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor cond = required(ctx, 0, "cond");
    const char* branch = bool_of(cond, "cond") ? "then_branch" : "else_branch";
    const size_t n = ctx.num_outputs();
    std::vector<sdk::OwnedValue> results = ctx.run_subgraph_values(branch, {}, n);
    for (size_t i = 0; i < n; ++i)
      if (output_wanted(i)) ctx.set_output(i, results[i]);
  }
};

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  r.add_value_kernel("If", 1, 17, inputs_of({EPHOST_ELEMENT_BOOL}), make_factory<IfKernel>());
}

}  // namespace ephost::cpu
