// Optimizer update rules of domain ai.onnx.preview.training (opset 1): Adagrad, Adam and Momentum
// (standard and Nesterov). Inputs are the learning rate R, the update count T, then n tensors to
// optimize X, their gradients G and the optimizer's state (H for Adagrad; V for Momentum; V, H for
// Adam), each group of n in that order; outputs are the new X and the new state, grouped alike.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Rule { kAdagrad, kAdam, kMomentum, kNesterov };

// Tensors per optimized value: X, G and the state tensors.
size_t group_size(Rule r) { return r == Rule::kAdam ? 4 : 3; }

class OptimizerKernel : public CpuKernel {
 public:
  OptimizerKernel(const sdk::Node& node, const KernelConfig& c, Rule rule)
      : CpuKernel(node, c), rule_(rule), norm_(node.attr_float("norm_coefficient", 0.f)) {
    if (rule == Rule::kAdagrad) {
      decay_ = node.attr_float("decay_factor", 0.f);
      epsilon_ = node.attr_float("epsilon", 1e-6f);
    } else if (rule == Rule::kAdam) {
      alpha_ = node.attr_float("alpha", 0.9f);
      beta_ = node.attr_float("beta", 0.999f);
      epsilon_ = node.attr_float("epsilon", 1e-6f);
      norm_post_ = node.attr_float("norm_coefficient_post", 0.f);
    } else {
      for (const char* a : {"alpha", "beta", "norm_coefficient"})
        if (!node.has_attr(a)) fail_node(node, std::string("attribute '") + a + "' is required");
      alpha_ = node.attr_float("alpha", 0.f);
      beta_ = node.attr_float("beta", 0.f);
    }
    const size_t k = group_size(rule), in = node.num_inputs();
    if (in < 2 + k || (in - 2) % k != 0)
      fail_node(node, "expects R, T and " + std::to_string(k) + " tensors per optimized value, found " +
                          std::to_string(in) + " inputs");
    groups_ = (in - 2) / k;
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const double r = scalar_of(required(ctx, 0, "R"), "R");
    const sdk::Tensor t_in = required(ctx, 1, "T");
    expect_type(t_in, {EPHOST_ELEMENT_INT64}, "T");
    if (t_in.size() != 1) fail("T must be a scalar");
    const int64_t t = t_in.data<int64_t>()[0];
    const size_t k = group_size(rule_);
    for (size_t g = 0; g < groups_; ++g) {
      sdk::Tensor in[4];
      for (size_t j = 0; j < k; ++j) {
        in[j] = required(ctx, 2 + j * groups_ + g, "X, G or state");
        if (in[j].elem_type() != in[0].elem_type() || in[j].shape() != in[0].shape())
          fail("the tensors of optimized value " + std::to_string(g) + " must share X's type and shape");
      }
      const bool ok = dispatch(FloatTypes{}, in[0].elem_type(), [&](auto tag) {
        using T = decltype(tag);
        update<T>(ctx, g, in, r, t, threads);
      });
      if (!ok) fail(std::string("X must be float or double, found ") + type_name(in[0].elem_type()));
    }
  }

 private:
  template <typename T>
  void update(sdk::KernelContext& ctx, size_t g, const sdk::Tensor* in, double r, int64_t t, int threads) {
    const Shape s = in[0].shape();
    const int64_t n = in[0].size();
    const T* x = in[0].data<T>();
    const T* grad = in[1].data<T>();
    // An output the node leaves out still has to be computed for the others: it goes to scratch.
    std::vector<T> scratch[3];
    auto output = [&](size_t slot) {
      const size_t index = slot * groups_ + g;
      if (output_wanted(index)) return ctx.output<T>(index, s);
      scratch[slot].resize(static_cast<size_t>(n));
      return scratch[slot].data();
    };
    T* x_new = output(0);
    const T norm = static_cast<T>(norm_);
    auto each = [&](auto body) {
      math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) body(i, norm * x[i] + grad[i]);  // gradient plus the L2 term
      });
    };
    switch (rule_) {
      case Rule::kAdagrad: {
        const T* h = in[2].data<T>();
        T* h_new = output(1);
        const T rate = static_cast<T>(r / (1.0 + static_cast<double>(t) * decay_)), eps = static_cast<T>(epsilon_);
        each([&](int64_t i, T gr) {
          h_new[i] = h[i] + gr * gr;
          x_new[i] = x[i] - rate * gr / (std::sqrt(h_new[i]) + eps);
        });
        break;
      }
      case Rule::kAdam: {
        const T* v = in[2].data<T>();
        const T* h = in[3].data<T>();
        T* v_new = output(1);
        T* h_new = output(2);
        // Bias correction of both moments from the second update on.
        const double corrected = t > 0 ? r * std::sqrt(1.0 - std::pow(beta_, static_cast<double>(t))) /
                                             (1.0 - std::pow(alpha_, static_cast<double>(t)))
                                       : r;
        const T rate = static_cast<T>(corrected), a = static_cast<T>(alpha_), b = static_cast<T>(beta_);
        const T eps = static_cast<T>(epsilon_), keep = static_cast<T>(1.0 - norm_post_);
        each([&](int64_t i, T gr) {
          v_new[i] = a * v[i] + (T(1) - a) * gr;
          h_new[i] = b * h[i] + (T(1) - b) * (gr * gr);
          x_new[i] = keep * (x[i] - rate * (v_new[i] / (std::sqrt(h_new[i]) + eps)));
        });
        break;
      }
      case Rule::kMomentum:
      case Rule::kNesterov: {
        const T* v = in[2].data<T>();
        T* v_new = output(1);
        // The gradient's coefficient is 1 at the first update.
        const T a = static_cast<T>(alpha_), b = static_cast<T>(t > 0 ? beta_ : 1.0), rate = static_cast<T>(r);
        const bool nesterov = rule_ == Rule::kNesterov;
        each([&](int64_t i, T gr) {
          v_new[i] = a * v[i] + b * gr;
          x_new[i] = x[i] - rate * (nesterov ? gr + a * v_new[i] : v_new[i]);
        });
        break;
      }
    }
  }

  Rule rule_;
  double norm_, decay_ = 0, epsilon_ = 0, alpha_ = 0, beta_ = 0, norm_post_ = 0;
  size_t groups_ = 0;
};

bool optimizer_supported(const sdk::Node& n) {
  if (!input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}) || !input_type_in(n, 1, {EPHOST_ELEMENT_INT64}))
    return false;
  for (size_t i = 2; i < n.num_inputs(); ++i)
    if (!input_type_in(n, i, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE})) return false;
  if (n.op_type() == "Momentum") {
    const std::string mode = n.attr_string("mode", "");
    if (mode != "standard" && mode != "nesterov") return false;
  }
  return true;
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& r) {
  for (const char* op : {"Adagrad", "Adam", "Momentum"})
    r.add(KernelDef{kTrainingDomain, op, 1, 1, optimizer_supported,
                    [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
                      Rule rule = Rule::kAdagrad;
                      if (n.op_type() == "Adam") rule = Rule::kAdam;
                      else if (n.op_type() == "Momentum")
                        rule = n.attr_string("mode", "") == "nesterov" ? Rule::kNesterov : Rule::kMomentum;
                      return std::make_unique<OptimizerKernel>(n, c, rule);
                    }});
}

}  // namespace ephost::cpu
