// The activation functions ONNX recurrent ops (RNN, GRU, LSTM) name in their `activations`
// attribute, with the alpha/beta values they take.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ephost::cpu::math {

enum class RnnActivationKind {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus
};

struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0.f, beta = 0.f;
  // x[i] = f(x[i]) for i < n.
  void apply(float* x, int64_t n) const;
};

// True when `name` (any case, as ONNX Runtime accepts) is one of the functions above.
bool is_rnn_activation(const std::string& name);

// The functions `names` stand for, in order. Each one that takes alpha (beta) consumes the next
// value of `alphas` (`betas`), or gets its operator's default when the list has run out.
// Throws std::invalid_argument for an unknown name.
std::vector<RnnActivation> rnn_activations(const std::vector<std::string>& names, const std::vector<float>& alphas,
                                           const std::vector<float>& betas);

}  // namespace ephost::cpu::math
