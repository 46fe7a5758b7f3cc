// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (float, NC[D]HW).
#include "kernel_registry.h"
#include "math/pool.h"

namespace ephost::cpu {

namespace {

class PoolKernel : public CpuKernel {
 public:
  PoolKernel(const sdk::Node& node, const KernelConfig& c, bool is_max) : CpuKernel(node, c), max_(is_max) {
    p_.auto_pad = node.attr_string("auto_pad", "NOTSET");
    p_.kernel_shape = node.attr_ints("kernel_shape");
    p_.strides = node.attr_ints("strides");
    p_.pads = node.attr_ints("pads");
    p_.dilations = node.attr_ints("dilations");
    p_.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
    count_include_pad_ = node.attr_int("count_include_pad", 0) != 0;
    column_major_ = node.attr_int("storage_order", 0) != 0;
    if (p_.kernel_shape.empty()) fail_node(node, "attribute kernel_shape is required");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const math::PoolGeometry g = math::pool_geometry(p_, x.shape());
    const Shape os = g.output_shape();
    if (max_) {
      const bool ok = dispatch(Types<float, int8_t, uint8_t>{}, x.elem_type(), [&](auto tag) {
        using T = decltype(tag);
        T* y = ctx.output<T>(0, os);
        int64_t* indices = output_wanted(1) ? ctx.output<int64_t>(1, os) : nullptr;
        math::max_pool(x.data<T>(), g, y, indices, column_major_, threads);
      });
      if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    } else {
      expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
      math::average_pool(x.data<float>(), g, ctx.output<float>(0, os), count_include_pad_, threads);
    }
  }

 private:
  bool max_;
  math::PoolParams p_;
  bool count_include_pad_ = false, column_major_ = false;
};

class GlobalPoolKernel : public CpuKernel {
 public:
  GlobalPoolKernel(const sdk::Node& node, const KernelConfig& c, bool is_max) : CpuKernel(node, c), max_(is_max) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    Shape os = x.shape();
    if (os.size() < 2) fail("X must have rank >= 2 (N, C, ...), found " + math::to_string(os));
    const int64_t planes = os[0] * os[1];
    const int64_t size = math::numel(os, 2, os.size());
    for (size_t i = 2; i < os.size(); ++i) os[i] = 1;
    float* y = ctx.output<float>(0, os);
    if (max_) {
      if (size == 0 && planes > 0) fail("cannot take the max of an empty spatial extent");
      math::global_max_pool(x.data<float>(), planes, size, y, threads);
    } else {
      math::global_average_pool(x.data<float>(), planes, size, y, threads);
    }
  }

 private:
  bool max_;
};

template <typename K>
KernelFactory pool_factory(bool is_max) {
  return [is_max](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<K>(n, c, is_max);
  };
}

bool pool_supported(const sdk::Node& n) {
  const bool int8 = n.op_type() == "MaxPool" && n.opset() >= 12;
  if (!input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT}) &&
      !(int8 && input_type_in(n, 0, {EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT8})))
    return false;
  const int64_t r = n.has_input(0) ? n.input(0).rank() : -1;
  return r < 0 || (r >= 3 && r <= 5);
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  r.add("MaxPool", 1, 17, pool_supported, pool_factory<PoolKernel>(true));
  r.add("AveragePool", 1, 19, pool_supported, pool_factory<PoolKernel>(false));
  r.add("GlobalAveragePool", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), pool_factory<GlobalPoolKernel>(false));
  r.add("GlobalMaxPool", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}), pool_factory<GlobalPoolKernel>(true));
}

}  // namespace ephost::cpu
