// Conv and ConvTranspose (float), computed by oneDNN through math::ConvRunner.
#include <memory>

#include "constant_lookup.h"
#include "kernel_registry.h"
#include "kernels/conv_attributes.h"
#include "math/conv.h"

namespace ephost::cpu {

namespace {

math::ConvLayout layout_of(const std::string& s) {
  if (s == "plain") return math::ConvLayout::kPlain;
  if (s == "blocked") return math::ConvLayout::kBlocked;
  return math::ConvLayout::kAuto;
}

class ConvKernel : public CpuKernel {
 public:
  ConvKernel(const sdk::Node& node, const KernelConfig& c, bool transposed)
      : CpuKernel(node, c), transposed_(transposed), p_(conv_attributes(node, transposed)) {
    // Weights from a constant initializer stay valid for the session: oneDNN gets its preferred
    // layout of them once instead of on every run.
    const float* constant_w = nullptr;
    if (node.has_input(1) && is_constant(node.input(1))) {
      const sdk::Tensor w = constant_of(node.input(1));
      if (w.elem_type() != EPHOST_ELEMENT_FLOAT) fail_node(node, std::string("W must be float, found ") + type_name(w.elem_type()));
      constant_w = w.data<float>();
      constant_w_shape_ = w.shape();
    }
    runner_ = std::make_unique<math::ConvRunner>(transposed, layout_of(c.conv_layout), constant_w);
    const Shape xs = static_shape(node.input(0));
    if (!xs.empty() && constant_w != nullptr) {
      try {
        const math::ConvGeometry g = transposed ? math::conv_transpose_geometry(p_, xs, constant_w_shape_)
                                                : math::conv_geometry(p_, xs, constant_w_shape_);
        runner_->implementation(g, node.has_input(2), c.default_threads);
      } catch (const std::exception&) {
      }
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), w = required(ctx, 1, "W"), b = ctx.input(2);
    expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X");
    expect_type(w, {EPHOST_ELEMENT_FLOAT}, "W");
    const Shape ws = w.shape();
    if (!constant_w_shape_.empty() && ws != constant_w_shape_)
      fail("W has shape " + math::to_string(ws) + " but the constant initializer has " +
           math::to_string(constant_w_shape_));
    const math::ConvGeometry g =
        transposed_ ? math::conv_transpose_geometry(p_, x.shape(), ws) : math::conv_geometry(p_, x.shape(), ws);
    const float* bias = nullptr;
    if (b.present()) {
      expect_type(b, {EPHOST_ELEMENT_FLOAT}, "B");
      if (b.rank() != 1 || b.dim(0) != g.out_channels)
        fail("B must have shape [" + std::to_string(g.out_channels) + "], found " + math::to_string(b.shape()));
      bias = b.data<float>();
    }
    float* y = ctx.output<float>(0, g.output_shape());
    runner_->run(g, x.data<float>(), w.data<float>(), bias, y, threads);
  }

 private:
  bool transposed_;
  math::ConvParams p_;
  Shape constant_w_shape_;
  std::unique_ptr<math::ConvRunner> runner_;
};

bool conv_supported(const sdk::Node& n) {
  for (size_t i = 0; i < 3; ++i)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT})) return false;
  // oneDNN handles 1 to 3 spatial dims.
  const int64_t r = n.has_input(0) ? n.input(0).rank() : -1;
  return r < 0 || (r >= 3 && r <= 5);
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  r.add("Conv", 1, 17, conv_supported, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<ConvKernel>(n, c, false);
  });
  r.add("ConvTranspose", 1, 17, conv_supported,
        [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
          return std::make_unique<ConvKernel>(n, c, true);
        });
}

}  // namespace ephost::cpu
