// Layer normalisation over the last axis as exporters write it before opset 17, and a decomposed GELU
// on its own, each as one pass over memory.
//
//   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d^2, [-1]); y = d / Sqrt(v + eps) [* gamma] [+ beta]
//   GELU: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (either order of the Muls)
#include <cmath>

#include "constant_lookup.h"
#include "graph_match.h"
#include "layernorm_match.h"
#include "math/parallel.h"
#include "math/vec.h"

namespace ephost::cpu::fusion {

namespace {

struct LayerNormMatch {
  sdk::Node rm1;
  float eps = 0.f;
  sdk::Value gamma, beta;  // invalid when absent
  sdk::Value out;
  std::vector<sdk::Node> nodes;
};

// In the float graph each step reads the one before it directly.
class DirectLinks : public LayerNormLinks {
 public:
  explicit DirectLinks(int64_t max_rank) : max_rank_(max_rank) {}
  sdk::Node next(sdk::Value* v, const char* op, LayerNormStep, const Available& ok, std::vector<sdk::Node>*) override {
    const sdk::Node n = sole_consumer(*v);
    return is_op(n, op) && ok(n) ? n : sdk::Node();
  }
  bool pass_difference(sdk::Value*, const Available&, std::vector<sdk::Node>*) override { return false; }
  void forget(LayerNormStep) override {}
  // A constant whose dims other than the last are 1, of rank at most x's.
  bool row_constant(const sdk::Value& v) const override {
    if (!is_float(v) || !is_constant(v)) return false;
    const std::vector<int64_t> d = constant_of(v).shape();
    if (d.empty() || static_cast<int64_t>(d.size()) > max_rank_) return false;
    for (size_t i = 0; i + 1 < d.size(); ++i)
      if (d[i] != 1) return false;
    return true;
  }

 private:
  int64_t max_rank_;
};

bool match_layernorm(const sdk::Node& anchor, const Available& ok, LayerNormMatch* m) {
  if (!anchor.has_input(0)) return false;
  const sdk::Value x = anchor.input(0);  // may have other consumers (a residual branch)
  if (!is_float(x) || is_constant(x)) return false;
  DirectLinks links(x.rank() > 0 ? x.rank() : 1);
  LayerNormChain chain;
  if (!match_layernorm_chain(x, anchor, ok, links, &chain)) return false;
  m->rm1 = anchor;
  m->eps = chain.eps;
  m->gamma = chain.gamma;
  m->beta = chain.beta;
  m->out = chain.out;
  m->nodes = std::move(chain.nodes);
  return true;
}

class LayerNormGroup : public sdk::CompiledGroup {
 public:
  LayerNormGroup(const LayerNormMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : name_(group.name()), eps_(m.eps), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
    x_index_ = group_input(group, m.rm1.input(0).name());
    out_index_ = group_output(group, m.out.name());
    if (x_index_ < 0 || out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused layer norm " + name_ + ": unexpected interface");
    if (m.gamma.valid()) {
      const sdk::Tensor t = constant_of(m.gamma);
      gamma_.assign(t.data<float>(), t.data<float>() + t.size());
      gamma_rank_ = static_cast<int64_t>(t.rank());
    }
    if (m.beta.valid()) {
      const sdk::Tensor t = constant_of(m.beta);
      beta_.assign(t.data<float>(), t.data<float>() + t.size());
      gamma_rank_ = std::max<int64_t>(gamma_rank_, static_cast<int64_t>(t.rank()));
    }
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(x_index_));
    if (!x.present() || x.elem_type() != EPHOST_ELEMENT_FLOAT || x.rank() == 0)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused layer norm " + name_ + ": input must be a float tensor of rank >= 1");
    Shape shape = x.shape();
    const int64_t C = shape.back();
    if ((!gamma_.empty() && static_cast<int64_t>(gamma_.size()) != C) ||
        (!beta_.empty() && static_cast<int64_t>(beta_.size()) != C)) {
      // Scale or shift broadcast some other way: expand them to the row.
      if (!(gamma_.size() <= 1 && beta_.size() <= 1))
        sdk::fail(EPHOST_INVALID_ARGUMENT, "fused layer norm " + name_ + ": scale/shift do not match the last axis");
    }
    while (static_cast<int64_t>(shape.size()) < gamma_rank_) shape.insert(shape.begin(), 1);
    float* y = ctx.output<float>(static_cast<size_t>(out_index_), shape);
    const int64_t n = x.size();
    if (n == 0 || C == 0) return;
    const int64_t rows = n / C;
    const float* px = x.data<float>();
    std::vector<float> g_row, b_row;
    const float* g = gamma_.empty() ? nullptr : gamma_.data();
    const float* b = beta_.empty() ? nullptr : beta_.data();
    if ((g && gamma_.size() != static_cast<size_t>(C)) || (b && beta_.size() != static_cast<size_t>(C))) {
      g_row.assign(static_cast<size_t>(C), g ? gamma_[0] : 1.f);
      b_row.assign(static_cast<size_t>(C), b ? beta_[0] : 0.f);
      g = g_row.data();
      b = b_row.data();
    }
    if (g == nullptr && b != nullptr) {
      g_row.assign(static_cast<size_t>(C), 1.f);
      g = g_row.data();
    }
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const float eps = eps_;
    math::parallel_for(rows, threads, math::pass_grain(2 * static_cast<int64_t>(sizeof(float)) * C), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) math::layer_norm_f32(px + r * C, y + r * C, C, g, b, eps);
    });
    math::note_team_end(threads);
  }

 private:
  std::string name_;
  float eps_;
  int default_threads_;
  bool adaptive_ = true;
  int x_index_ = -1, out_index_ = -1;
  std::vector<float> gamma_, beta_;
  int64_t gamma_rank_ = 0;
};

class LayerNormFusion : public Fusion {
 public:
  const char* name() const override { return "layernorm"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    LayerNormMatch m;
    return match_layernorm(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    LayerNormMatch m;
    if (!match_layernorm(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused layer norm " + group.name() + ": pattern not found");
    return std::make_unique<LayerNormGroup>(m, group, config);
  }
};

// ---- GELU --------------------------------------------------------------------------------------------

// The GELU that contains this Erf node.
bool match_gelu_at(const sdk::Node& erf, const Available& ok, std::vector<sdk::Node>* nodes, sdk::Value* x,
                   sdk::Value* out) {
  if (!is_op(erf, "Erf") || !ok(erf)) return false;
  const sdk::Node scale = erf.input(0).producer();
  if (!scale.valid() || scale.num_inputs() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    const sdk::Value v = scale.input(i);
    if (!is_float(v) || is_constant(v)) continue;
    Activation act;
    std::vector<sdk::Node> found;
    sdk::Value o;
    if (!match_activation(v, ok, &act, &found, &o) || act.kind != Activation::kGeluErf) continue;
    bool has_erf = false;
    for (const sdk::Node& n : found) has_erf = has_erf || n.id() == erf.id();
    if (!has_erf) continue;
    *nodes = std::move(found);
    *x = v;
    *out = o;
    return true;
  }
  return false;
}

class GeluGroup : public sdk::CompiledGroup {
 public:
  GeluGroup(int x_index, int out_index, const std::string& name, const KernelConfig& config)
      : x_index_(x_index), out_index_(out_index), name_(name), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {}
  void compute(void*, sdk::KernelContext& ctx) override {
    const sdk::Tensor x = ctx.input(static_cast<size_t>(x_index_));
    if (!x.present() || x.elem_type() != EPHOST_ELEMENT_FLOAT)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "fused gelu " + name_ + ": input must be float");
    float* y = ctx.output<float>(static_cast<size_t>(out_index_), x.shape());
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    const float* px = x.data<float>();
    math::parallel_for(x.size(), threads, math::pass_grain(2 * sizeof(float)),
                       [&](int64_t i0, int64_t i1) { math::gelu_erf_f32(px + i0, y + i0, i1 - i0); });
    math::note_team_end(threads);
  }

 private:
  int x_index_, out_index_;
  std::string name_;
  int default_threads_;
  bool adaptive_ = true;
};

class GeluFusion : public Fusion {
 public:
  const char* name() const override { return "gelu"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    std::vector<sdk::Node> nodes;
    sdk::Value x, out;
    return match_gelu_at(anchor, ok, &nodes, &x, &out) ? nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    std::vector<sdk::Node> nodes;
    sdk::Value x, out;
    if (!match_gelu_at(anchor, [](const sdk::Node&) { return true; }, &nodes, &x, &out))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused gelu " + group.name() + ": pattern not found");
    const int xi = group_input(group, x.name()), oi = group_output(group, out.name());
    if (xi < 0 || oi < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile fused gelu " + group.name() + ": unexpected interface");
    return std::make_unique<GeluGroup>(xi, oi, group.name(), config);
  }
};

}  // namespace

const Fusion& layernorm_fusion() {
  static const LayerNormFusion f;
  return f;
}

const Fusion& gelu_fusion() {
  static const GeluFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
