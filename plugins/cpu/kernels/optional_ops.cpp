// Optional values: Optional, OptionalHasElement, OptionalGetElement. At run time an optional that
// holds something is that tensor or sequence itself, and an empty one is "none"; so these ops only
// look at the kind of their input and pass the value on without copying.
#include "kernel_registry.h"

namespace ephost::cpu {

namespace {

// Optional(input?): the input, or none when it is absent (the type attribute only matters statically).
class OptionalKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    if (ctx.input_kind(0) == EPHOST_VALUE_UNDEFINED)
      ctx.output_none(0);
    else
      ctx.set_output(0, ctx.input_value(0));
  }
};

// OptionalHasElement: false for none (and, from opset 18, for an absent input); true otherwise.
class OptionalHasElementKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const int32_t kind = ctx.input_kind(0);
    if (kind == EPHOST_VALUE_UNDEFINED && opset() < 18) fail("required input 0 (input) is missing");
    ctx.output<bool>(0, {})[0] = kind == EPHOST_VALUE_TENSOR || kind == EPHOST_VALUE_SEQUENCE;
  }
};

// OptionalGetElement: what the optional holds; an error for none. From opset 18 a plain tensor or
// sequence input is returned as is.
class OptionalGetElementKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const int32_t kind = ctx.input_kind(0);
    if (kind == EPHOST_VALUE_UNDEFINED) fail("required input 0 (input) is missing");
    if (kind == EPHOST_VALUE_NONE) fail("the optional input is empty: it has no element to get");
    ctx.set_output(0, ctx.input_value(0));
  }
};

}  // namespace

void register_optional_kernels(KernelRegistry& r) {
  r.add_value_kernel("Optional", 15, 18, nullptr, make_factory<OptionalKernel>());
  r.add_value_kernel("OptionalHasElement", 15, 18, nullptr, make_factory<OptionalHasElementKernel>());
  r.add_value_kernel("OptionalGetElement", 15, 18, nullptr, make_factory<OptionalGetElementKernel>());
}

}  // namespace ephost::cpu
