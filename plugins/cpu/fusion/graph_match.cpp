#include "graph_match.h"

#include "constant_lookup.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "math/fast_math.h"
#include "math/vec.h"

namespace ephost::cpu::fusion {

bool is_op(const sdk::Node& n, const char* op) {
  if (!n.valid()) return false;
  const std::string d = n.domain();
  return (d.empty() || d == "ai.onnx") && n.op_type() == op && n.num_outputs() >= 1 && n.has_output(0);
}

bool is_float(const sdk::Value& v) { return v.valid() && v.elem_type() == EPHOST_ELEMENT_FLOAT; }

std::vector<sdk::Node> inner_consumers(const sdk::Value& v) {
  if (!v.valid() || v.is_graph_output()) return {};
  return v.consumers();
}

sdk::Node sole_consumer(const sdk::Value& v) {
  const std::vector<sdk::Node> c = inner_consumers(v);
  return c.size() == 1 ? c[0] : sdk::Node();
}

bool read_only_by(const sdk::Value& v, const sdk::Node& reader) {
  const sdk::Node c = sole_consumer(v);
  return c.valid() && reader.valid() && c.id() == reader.id();
}

bool scalar_constant(const sdk::Value& v, float* out) {
  if (!is_float(v) || !is_constant(v)) return false;
  const sdk::Tensor t = constant_of(v);
  if (t.size() != 1) return false;
  *out = t.data<float>()[0];
  return true;
}

int other_input(const sdk::Node& n, const std::string& name) {
  if (n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1)) return -1;
  const bool a = n.input(0).name() == name, b = n.input(1).name() == name;
  if (a == b) return -1;
  return a ? 1 : 0;
}

std::vector<int64_t> reduce_axes(const sdk::Node& n, bool* ok) {
  *ok = true;
  if (n.has_attr("axes")) return n.attr_ints("axes");
  if (n.has_input(1)) {
    const sdk::Value a = n.input(1);
    if (!is_constant(a) || a.elem_type() != EPHOST_ELEMENT_INT64) {
      *ok = false;
      return {};
    }
    const sdk::Tensor t = constant_of(a);
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
  }
  return {};
}

std::vector<int64_t> dims_of(const sdk::Value& v) { return v.valid() ? v.dims() : std::vector<int64_t>{}; }

int group_input(const sdk::Graph& group, const std::string& name) {
  for (size_t i = 0; i < group.num_inputs(); ++i)
    if (group.input(i).name() == name) return static_cast<int>(i);
  return -1;
}

int group_output(const sdk::Graph& group, const std::string& name) {
  for (size_t i = 0; i < group.num_outputs(); ++i)
    if (group.output(i).name() == name) return static_cast<int>(i);
  return -1;
}

namespace {

bool near(float a, float b) { return std::fabs(a - b) <= 1e-5f * std::max(1.f, std::fabs(b)); }

// Binary node n = op(v, constant c) with v named `name` (either order for Mul/Add); c returned.
bool binary_with_scalar(const sdk::Node& n, const char* op, const std::string& name, float* c, bool commutative) {
  if (!is_op(n, op) || !is_float(n.output(0))) return false;
  const int k = other_input(n, name);
  if (k < 0 || (!commutative && k != 1)) return false;
  return scalar_constant(n.input(static_cast<size_t>(k)), c);
}

// Mul whose inputs are the values named a and b (either order).
bool mul_of(const sdk::Node& n, const std::string& a, const std::string& b) {
  if (!is_op(n, "Mul") || n.num_inputs() != 2) return false;
  const std::string x = n.input(0).name(), y = n.input(1).name();
  return (x == a && y == b) || (x == b && y == a);
}

bool all_ok(const std::vector<sdk::Node>& nodes, const Available& ok) {
  for (const sdk::Node& n : nodes)
    if (!ok(n)) return false;
  return true;
}

// Decomposed GELU starting at v (whose two consumers are given).
bool match_gelu(const sdk::Value& v, const std::vector<sdk::Node>& cons, const Available& ok,
                std::vector<sdk::Node>* nodes, sdk::Value* out) {
  const std::string x = v.name();
  for (int first = 0; first < 2; ++first) {
    const sdk::Node scale = cons[first], other = cons[1 - first];
    float c = 0;
    const bool div = binary_with_scalar(scale, "Div", x, &c, false) && near(c, 1.41421356f);
    const bool mul = !div && binary_with_scalar(scale, "Mul", x, &c, true) && near(c, 0.70710678f);
    if (!div && !mul) continue;
    const sdk::Node erf = sole_consumer(scale.output(0));
    if (!is_op(erf, "Erf")) continue;
    const sdk::Node add = sole_consumer(erf.output(0));
    float one = 0;
    if (!binary_with_scalar(add, "Add", erf.output(0).name(), &one, true) || !near(one, 1.f)) continue;
    const sdk::Node m = sole_consumer(add.output(0));
    std::vector<sdk::Node> found{scale, erf, add};
    float half = 0;
    if (m.valid() && m.id() == other.id() && mul_of(m, x, add.output(0).name())) {
      // x * (1 + erf) then * 0.5
      const sdk::Node h = sole_consumer(m.output(0));
      if (!binary_with_scalar(h, "Mul", m.output(0).name(), &half, true) || !near(half, 0.5f)) continue;
      found.push_back(m);
      found.push_back(h);
      *out = h.output(0);
    } else if (binary_with_scalar(other, "Mul", x, &half, true) && near(half, 0.5f)) {
      // (x * 0.5) * (1 + erf)
      if (!m.valid() || sole_consumer(other.output(0)).id() != m.id() ||
          !mul_of(m, other.output(0).name(), add.output(0).name()))
        continue;
      found.push_back(other);
      found.push_back(m);
      *out = m.output(0);
    } else {
      continue;
    }
    if (!all_ok(found, ok)) continue;
    nodes->insert(nodes->end(), found.begin(), found.end());
    return true;
  }
  return false;
}

}  // namespace

bool match_scalar_affine(const sdk::Value& v, const Available& ok, Activation* act, std::vector<sdk::Node>* nodes,
                         sdk::Value* out) {
  const sdk::Node n = sole_consumer(v);
  if (!n.valid() || !ok(n)) return false;
  const std::string x = v.name();
  float c = 0;
  Activation a;
  a.kind = Activation::kLinear;
  if (binary_with_scalar(n, "Mul", x, &c, true)) {
    a.alpha = c;
  } else if (binary_with_scalar(n, "Div", x, &c, false)) {
    a.alpha = 1.f / c;
  } else if (binary_with_scalar(n, "Add", x, &c, true)) {
    a.alpha = 1.f;
    a.beta = c;
  } else if (binary_with_scalar(n, "Sub", x, &c, false)) {
    a.alpha = 1.f;
    a.beta = -c;
  } else {
    return false;
  }
  *act = a;
  nodes->push_back(n);
  *out = n.output(0);
  return true;
}

bool unary_activation(const sdk::Node& n, Activation* a) {
  if (n.num_outputs() != 1 || !n.has_input(0) || !is_float(n.output(0))) return false;
  if (is_op(n, "Relu")) {
    a->kind = Activation::kRelu;
  } else if (is_op(n, "LeakyRelu")) {
    a->kind = Activation::kLeakyRelu;
    a->alpha = n.attr_float("alpha", 0.01f);
  } else if (is_op(n, "Sigmoid")) {
    a->kind = Activation::kSigmoid;
  } else if (is_op(n, "Tanh")) {
    a->kind = Activation::kTanh;
  } else if (is_op(n, "HardSigmoid")) {
    a->kind = Activation::kHardSigmoid;
    a->alpha = n.attr_float("alpha", 0.2f);
    a->beta = n.attr_float("beta", 0.5f);
  } else if (is_op(n, "HardSwish")) {
    a->kind = Activation::kHardSwish;
  } else if (is_op(n, "Gelu")) {
    a->kind = n.attr_string("approximate", "none") == "tanh" ? Activation::kGeluTanh : Activation::kGeluErf;
  } else if (is_op(n, "Clip")) {
    a->kind = Activation::kClip;
    a->alpha = std::numeric_limits<float>::lowest();
    a->beta = std::numeric_limits<float>::max();
    if (n.opset() < 11) {
      a->alpha = n.attr_float("min", -std::numeric_limits<float>::max());
      a->beta = n.attr_float("max", std::numeric_limits<float>::max());
    } else {
      if (n.num_inputs() > 3) return false;
      if (n.has_input(1) && !scalar_constant(n.input(1), &a->alpha)) return false;
      if (n.has_input(2) && !scalar_constant(n.input(2), &a->beta)) return false;
    }
  } else {
    return false;
  }
  return true;
}

bool match_activation(const sdk::Value& v, const Available& ok, Activation* act, std::vector<sdk::Node>* nodes,
                      sdk::Value* out) {
  const std::vector<sdk::Node> cons = inner_consumers(v);
  const std::string x = v.name();
  if (cons.size() == 1) {
    const sdk::Node n = cons[0];
    if (!ok(n) || n.num_outputs() != 1 || !is_float(n.output(0))) return false;
    Activation a;
    if (!unary_activation(n, &a)) return false;
    if (n.input(0).name() != x) return false;
    *act = a;
    nodes->push_back(n);
    *out = n.output(0);
    return true;
  }
  if (cons.size() != 2) return false;
  // SiLU / Swish: v * Sigmoid(v); HardSwish: v * HardSigmoid(v) (alpha 1/6, beta 1/2).
  for (int first = 0; first < 2; ++first) {
    const sdk::Node s = cons[first], m = cons[1 - first];
    const bool sig = is_op(s, "Sigmoid");
    const bool hsig = is_op(s, "HardSigmoid") && near(s.attr_float("alpha", 0.2f), 1.f / 6.f) &&
                      near(s.attr_float("beta", 0.5f), 0.5f);
    if (!sig && !hsig) continue;
    const sdk::Node c = sole_consumer(s.output(0));
    if (!c.valid() || c.id() != m.id() || !mul_of(m, x, s.output(0).name()) || !is_float(m.output(0))) continue;
    if (!ok(s) || !ok(m)) continue;
    act->kind = sig ? Activation::kSwish : Activation::kHardSwish;
    act->alpha = 1.f;
    nodes->push_back(s);
    nodes->push_back(m);
    *out = m.output(0);
    return true;
  }
  // HardSwish: v * Clip(v + 3, 0, 6) / 6 (PP-OCR), the division possibly a multiplication by 1/6.
  for (int first = 0; first < 2; ++first) {
    const sdk::Node add = cons[first], m = cons[1 - first];
    float three = 0;
    if (!binary_with_scalar(add, "Add", x, &three, true) || !near(three, 3.f)) continue;
    const sdk::Node clip = sole_consumer(add.output(0));
    if (!is_op(clip, "Clip")) continue;
    float lo = 0, hi = 0;
    if (clip.opset() < 11) {
      // Bounds as attributes (PP-OCR's opset 9 models).
      lo = clip.attr_float("min", -std::numeric_limits<float>::max());
      hi = clip.attr_float("max", std::numeric_limits<float>::max());
    } else if (clip.num_inputs() != 3 || !scalar_constant(clip.input(1), &lo) || !scalar_constant(clip.input(2), &hi)) {
      continue;
    }
    if (lo != 0.f || hi != 6.f) continue;
    if (sole_consumer(clip.output(0)).id() != m.id() || !mul_of(m, x, clip.output(0).name())) continue;
    const sdk::Node d = sole_consumer(m.output(0));
    float six = 0;
    const bool div = binary_with_scalar(d, "Div", m.output(0).name(), &six, false) && near(six, 6.f);
    const bool mul = !div && binary_with_scalar(d, "Mul", m.output(0).name(), &six, true) && near(six, 1.f / 6.f);
    if (!div && !mul) continue;
    std::vector<sdk::Node> found{add, clip, m, d};
    if (!all_ok(found, ok)) continue;
    act->kind = Activation::kHardSwish;
    nodes->insert(nodes->end(), found.begin(), found.end());
    *out = d.output(0);
    return true;
  }
  if (match_gelu(v, cons, ok, nodes, out)) {
    act->kind = Activation::kGeluErf;
    return true;
  }
  return false;
}

void apply_activation(const Activation& a, float* x, int64_t n) { apply_activation(a, x, x, n); }

void apply_activation(const Activation& a, const float* x, float* y, int64_t n) {
  switch (a.kind) {
    case Activation::kNone:
      if (x != y) std::copy(x, x + n, y);
      return;
    case Activation::kRelu: return math::relu_f32(x, y, n);
    case Activation::kSigmoid: return math::sigmoid_f32(x, y, n);
    case Activation::kTanh: return math::tanh_f32(x, y, n);
    case Activation::kClip: return math::clip_f32(x, a.alpha, a.beta, y, n);
    case Activation::kHardSigmoid: return math::hard_sigmoid_f32(x, a.alpha, a.beta, y, n);
    case Activation::kHardSwish: return math::hard_swish_f32(x, y, n);
    case Activation::kGeluErf: return math::gelu_erf_f32(x, y, n);
    case Activation::kLinear: return math::linear_f32(x, a.alpha, a.beta, y, n);
    case Activation::kSwish:
      if (a.alpha == 1.f) return math::swish_f32(x, y, n);
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * math::fast_sigmoid(a.alpha * x[i]);
      return;
    case Activation::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.f ? x[i] * a.alpha : x[i];
      return;
    case Activation::kGeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.f + math::fast_tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
      return;
  }
}

const std::vector<const Fusion*>& fusions() {
  static const std::vector<const Fusion*> all = {&attention_fusion(), &matmul_fusion(), &layernorm_fusion(),
                                                 &gelu_fusion()};
  return all;
}

const std::vector<const Fusion*>& int8_fusions() {
  static const std::vector<const Fusion*> all = {
      &qdq_conv_fusion(),     &qdq_matmul_fusion(),   &qdq_activation_matmul_fusion(), &qdq_unary_fusion(),
      &qdq_binary_fusion(),   &qdq_max_pool_fusion(), &qdq_view_fusion(),              &qdq_softmax_fusion(),
      &qdq_layernorm_fusion(), &q4_matmul_fusion()};
  return all;
}

}  // namespace ephost::cpu::fusion
