// If: runs the chosen branch through the host and copies its results to the node's outputs.
#include <cstring>

#include "kernel_registry.h"

namespace ephost::cpu {

namespace {

class IfKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor cond = required(ctx, 0, "cond");
    expect_type(cond, {EPHOST_ELEMENT_BOOL}, "cond");
    if (cond.size() != 1) fail("cond must have exactly one element, found shape " + math::to_string(cond.shape()));
    const char* branch = cond.data<uint8_t>()[0] ? "then_branch" : "else_branch";
    const size_t n = ctx.num_outputs();
    std::vector<sdk::OwnedValue> results = ctx.run_subgraph(branch, {}, n);
    for (size_t i = 0; i < n; ++i) {
      const sdk::Tensor t = results[i].tensor();
      if (t.elem_type() == EPHOST_ELEMENT_STRING) {
        const char* const* src = t.data<const char*>();
        const char** dst = static_cast<const char**>(ctx.output_raw(i, t.elem_type(), t.shape()));
        for (int64_t j = 0; j < t.size(); ++j) dst[j] = ctx.output_string(i, src[j] ? src[j] : "");
        continue;
      }
      void* y = ctx.output_raw(i, t.elem_type(), t.shape());
      const size_t bytes = static_cast<size_t>(t.size()) * sdk::element_size(t.elem_type());
      if (bytes) std::memcpy(y, t.raw(), bytes);
    }
  }
};

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  r.add("If", 1, 21, inputs_of({EPHOST_ELEMENT_BOOL}), make_factory<IfKernel>());
}

}  // namespace ephost::cpu
