#if defined(EPHOST_WITH_DNNL)

#include "dnnl_post_ops.h"

namespace ephost::cpu::fusion {

void append_activation(dnnl::post_ops& ops, const Activation& a) {
  using alg = dnnl::algorithm;
  switch (a.kind) {
    case Activation::kNone: return;
    case Activation::kRelu: return ops.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f);
    case Activation::kLeakyRelu: return ops.append_eltwise(1.f, alg::eltwise_relu, a.alpha, 0.f);
    case Activation::kSigmoid: return ops.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f);
    case Activation::kTanh: return ops.append_eltwise(1.f, alg::eltwise_tanh, 0.f, 0.f);
    case Activation::kClip: return ops.append_eltwise(1.f, alg::eltwise_clip_v2, a.alpha, a.beta);
    case Activation::kHardSigmoid:
      ops.append_eltwise(1.f, alg::eltwise_linear, a.alpha, a.beta);
      return ops.append_eltwise(1.f, alg::eltwise_clip_v2, 0.f, 1.f);
    case Activation::kHardSwish: return ops.append_eltwise(1.f, alg::eltwise_hardswish, 0.f, 0.f);
    case Activation::kSwish: return ops.append_eltwise(1.f, alg::eltwise_swish, a.alpha, 0.f);
    case Activation::kGeluErf: return ops.append_eltwise(1.f, alg::eltwise_gelu_erf, 0.f, 0.f);
    case Activation::kGeluTanh: return ops.append_eltwise(1.f, alg::eltwise_gelu_tanh, 0.f, 0.f);
    case Activation::kLinear: return ops.append_eltwise(1.f, alg::eltwise_linear, a.alpha, a.beta);
  }
}

bool post_ops_supported(const std::vector<Activation>& acts) {
  dnnl::post_ops ops;
  for (const Activation& a : acts) append_activation(ops, a);
  struct Entry {
    dnnl::algorithm alg;
    float alpha, beta;
  };
  std::vector<Entry> seen;
  for (int i = 0; i < ops.len(); ++i) {
    float scale = 0, alpha = 0, beta = 0;
    dnnl::algorithm alg;
    ops.get_params_eltwise(i, scale, alg, alpha, beta);
    for (const Entry& e : seen)
      if (e.alg == alg && (e.alpha != alpha || e.beta != beta)) return false;
    seen.push_back({alg, alpha, beta});
  }
  return true;
}

}  // namespace ephost::cpu::fusion

#endif
