#include "rnn_activation.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "fast_math.h"
#include "shape.h"
#include "vec.h"

namespace ephost::cpu::math {

namespace {

struct Entry {
  const char* name;  // lower case
  RnnActivationKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // the defaults of the same-named ONNX operators
};

constexpr Entry kEntries[] = {
    {"relu", RnnActivationKind::kRelu, false, false, 0.f, 0.f},
    {"tanh", RnnActivationKind::kTanh, false, false, 0.f, 0.f},
    {"sigmoid", RnnActivationKind::kSigmoid, false, false, 0.f, 0.f},
    {"affine", RnnActivationKind::kAffine, true, true, 1.f, 0.f},
    {"leakyrelu", RnnActivationKind::kLeakyRelu, true, false, 0.01f, 0.f},
    {"thresholdedrelu", RnnActivationKind::kThresholdedRelu, true, false, 1.f, 0.f},
    {"scaledtanh", RnnActivationKind::kScaledTanh, true, true, 1.f, 1.f},
    {"hardsigmoid", RnnActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RnnActivationKind::kElu, true, false, 1.f, 0.f},
    {"softsign", RnnActivationKind::kSoftsign, false, false, 0.f, 0.f},
    {"softplus", RnnActivationKind::kSoftplus, false, false, 0.f, 0.f},
};

const Entry* find(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const Entry& e : kEntries)
    if (lower == e.name) return &e;
  return nullptr;
}

}  // namespace

bool is_rnn_activation(const std::string& name) { return find(name) != nullptr; }

std::vector<RnnActivation> rnn_activations(const std::vector<std::string>& names, const std::vector<float>& alphas,
                                           const std::vector<float>& betas) {
  std::vector<RnnActivation> out;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const Entry* e = find(name);
    if (!e) invalid("unknown activation function '" + name + "'");
    RnnActivation a;
    a.kind = e->kind;
    a.alpha = e->uses_alpha && next_alpha < alphas.size() ? alphas[next_alpha++] : e->alpha;
    a.beta = e->uses_beta && next_beta < betas.size() ? betas[next_beta++] : e->beta;
    out.push_back(a);
  }
  return out;
}

namespace {

// Runs a vec.h loop in place. Those loops vectorise only when input and output do not overlap (an
// in-place call fails their alias check and takes the scalar path), so each chunk is copied first.
template <typename F>
void in_place(float* x, int64_t n, F f) {
  constexpr int64_t kChunk = 512;
  float tmp[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = std::min(kChunk, n - i);
    std::copy_n(x + i, len, tmp);
    f(tmp, x + i, len);
  }
}

}  // namespace

void RnnActivation::apply(float* x, int64_t n) const {
  const float al = alpha, be = beta;
  switch (kind) {
    // The common ones go through the AVX2-dispatched loops of vec.h.
    case RnnActivationKind::kRelu: in_place(x, n, relu_f32); break;
    case RnnActivationKind::kTanh: in_place(x, n, tanh_f32); break;
    case RnnActivationKind::kSigmoid: in_place(x, n, sigmoid_f32); break;
    case RnnActivationKind::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = al * x[i] + be;
      break;
    case RnnActivationKind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.f ? x[i] : al * x[i];
      break;
    case RnnActivationKind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > al ? x[i] : 0.f;
      break;
    case RnnActivationKind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = al * fast_tanh(be * x[i]);
      break;
    case RnnActivationKind::kHardSigmoid:
      in_place(x, n, [al, be](const float* in, float* out, int64_t len) { hard_sigmoid_f32(in, al, be, out, len); });
      break;
    case RnnActivationKind::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.f ? x[i] : al * (std::exp(x[i]) - 1.f);
      break;
    case RnnActivationKind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.f + std::fabs(x[i]));
      break;
    case RnnActivationKind::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] + std::log1p(std::exp(-x[i])) : std::log1p(std::exp(x[i]));
      break;
  }
}

}  // namespace ephost::cpu::math
