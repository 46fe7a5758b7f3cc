// MatMul and Gemm (float), computed by oneDNN through math::MatMulRunner / math::GemmRunner.
#include <memory>

#include "constant_lookup.h"
#include "kernel_registry.h"
#include "math/broadcast.h"
#include "math/matmul.h"

namespace ephost::cpu {

namespace {

// Weights from a constant initializer, for the runners to reorder once.
const float* constant_input(const sdk::Node& node, size_t i, Shape* shape) {
  if (!node.has_input(i) || !is_constant(node.input(i))) return nullptr;
  const sdk::Tensor t = constant_of(node.input(i));
  if (t.elem_type() != EPHOST_ELEMENT_FLOAT) return nullptr;
  *shape = t.shape();
  return t.data<float>();
}

class MatMulKernel : public CpuKernel {
 public:
  MatMulKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    runner_ = std::make_unique<math::MatMulRunner>(constant_input(node, 1, &constant_b_shape_));
    const Shape as = static_shape(node.input(0));
    if (!as.empty() && !constant_b_shape_.empty()) {
      try {
        runner_->prepare(as, constant_b_shape_, c.default_threads);
      } catch (const std::exception&) {
        // Shapes that do not multiply fail at run time, with the node's name.
      }
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    expect_type(a, {EPHOST_ELEMENT_FLOAT}, "A");
    expect_type(b, {EPHOST_ELEMENT_FLOAT}, "B");
    const Shape as = a.shape(), bs = b.shape();
    if (!constant_b_shape_.empty() && bs != constant_b_shape_) fail("B does not match its constant initializer");
    float* y = ctx.output<float>(0, math::matmul_output_shape(as, bs));
    runner_->run(a.data<float>(), as, b.data<float>(), bs, y, threads);
  }

 private:
  Shape constant_b_shape_;
  std::unique_ptr<math::MatMulRunner> runner_;
};

class GemmKernel : public CpuKernel {
 public:
  GemmKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    p_.trans_a = node.attr_int("transA", 0) != 0;
    p_.trans_b = node.attr_int("transB", 0) != 0;
    p_.alpha = node.attr_float("alpha", 1.f);
    p_.beta = node.attr_float("beta", 1.f);
    runner_ = std::make_unique<math::GemmRunner>(p_, constant_input(node, 1, &constant_b_shape_));
    const Shape as = static_shape(node.input(0));
    if (!as.empty() && !constant_b_shape_.empty()) {
      try {
        runner_->prepare(as, constant_b_shape_, node.has_input(2), c.default_threads);
      } catch (const std::exception&) {
      }
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B"), c = ctx.input(2);
    expect_type(a, {EPHOST_ELEMENT_FLOAT}, "A");
    expect_type(b, {EPHOST_ELEMENT_FLOAT}, "B");
    if (c.present()) expect_type(c, {EPHOST_ELEMENT_FLOAT}, "C");
    const Shape as = a.shape(), bs = b.shape();
    if (!constant_b_shape_.empty() && bs != constant_b_shape_) fail("B does not match its constant initializer");
    const Shape os = math::gemm_output_shape(p_, as, bs);
    const Shape cs = c.present() ? c.shape() : Shape{};
    if (c.present() && !math::broadcasts_to(cs, os))
      fail("C of shape " + math::to_string(cs) + " does not broadcast to the result " + math::to_string(os));
    float* y = ctx.output<float>(0, os);
    runner_->run(a.data<float>(), as, b.data<float>(), bs, c.present() ? c.data<float>() : nullptr, cs, y, threads);
  }

 private:
  math::GemmParams p_;
  Shape constant_b_shape_;
  std::unique_ptr<math::GemmRunner> runner_;
};

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  r.add("MatMul", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1}), make_factory<MatMulKernel>());
  r.add("Gemm", 1, 17, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1, 2}), make_factory<GemmKernel>());
}

}  // namespace ephost::cpu
