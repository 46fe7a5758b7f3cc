#include "cnn_region_program.h"

#if defined(EPHOST_WITH_DNNL)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "cnn_region_select.h"
#include "constant_lookup.h"
#include "dnnl_post_ops.h"
#include "kernels/conv_attributes.h"
#include "math/broadcast.h"

namespace ephost::cpu::fusion::region {

const char* op_name(Op op) {
  switch (op) {
    case Op::kConv: return "Conv";
    case Op::kDeconv: return "ConvTranspose";
    case Op::kMaxPool: return "MaxPool";
    case Op::kAvgPool: return "AveragePool";
    case Op::kGlobalAvg: return "GlobalAveragePool";
    case Op::kGlobalMax: return "GlobalMaxPool";
    case Op::kUnary: return "activation";
    case Op::kAffine: return "affine";
    case Op::kBinary: return "binary";
    case Op::kConcat: return "Concat";
    case Op::kResize: return "Resize";
  }
  return "?";
}

namespace {

Shape pad4(const Shape& s) {
  Shape d = s;
  while (d.size() < 4) d.insert(d.begin(), 1);
  return d;
}

// Values of an NCHW-ordered tensor with dims `d` (rank 4) rearranged as NHWC.
std::vector<float> to_nhwc(const float* x, const Shape& d) {
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3];
  std::vector<float> y(static_cast<size_t>(N * C * H * W));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) y[((n * H + h) * W + w) * C + c] = x[((n * C + c) * H + h) * W + w];
  return y;
}

// A per-channel vector when t is a constant of shape [C], [C,1,1] or [1,C,1,1] (C > 1), or a scalar.
bool per_channel(const sdk::Tensor& t, std::vector<float>* v) {
  const Shape s = t.shape();
  const Shape d = pad4(s);
  if (s.size() > 4) return false;
  if (t.size() == 1) {
    v->assign(1, t.data<float>()[0]);
    return true;
  }
  if (s.size() == 1) return false;  // [C] broadcasts along W, not channels
  if (d[0] != 1 || d[2] != 1 || d[3] != 1) return false;
  v->assign(t.data<float>(), t.data<float>() + t.size());
  return true;
}

// Adjacent affine activations as one: b(a(x)) = (b.alpha a.alpha) x + (b.alpha a.beta + b.beta).
void compose_linear(std::vector<Activation>& acts) {
  std::vector<Activation> out;
  for (const Activation& a : acts) {
    if (a.kind == Activation::kLinear && !out.empty() && out.back().kind == Activation::kLinear) {
      Activation& p = out.back();
      p.beta = a.alpha * p.beta + a.beta;
      p.alpha = a.alpha * p.alpha;
    } else {
      out.push_back(a);
    }
  }
  acts = std::move(out);
}
}  // namespace

const float* weights_of(Step& st) {
  if (st.w == nullptr && st.w_value.valid()) {
    st.w = constant_of(st.w_value).data<float>();
    st.w_asked_again = true;
  }
  return st.w;
}

void give_weights_back(Step& st) {
  if (st.w == nullptr || st.w_asked_again || !st.w_value.valid()) return;
  if (st.w_value.initializer_done()) st.w = nullptr;
}

std::vector<float> folded_weights(const Step& st) {
  std::vector<float> w(st.w, st.w + st.w_count);
  if (st.w_mul.empty()) return w;
  const bool conv = st.op == Op::kConv;
  const int64_t M = conv ? st.w_shape[0] : st.w_shape[1];
  const int64_t K = st.w_shape[2] * st.w_shape[3];
  const int64_t rows = st.w_count / (M * K);  // C/g (conv) or C (deconv)
  for (int64_t m = 0; m < M; ++m)
    for (int64_t r = 0; r < rows; ++r) {
      float* p = conv ? &w[(m * rows + r) * K] : &w[(r * M + m) * K];
      for (int64_t j = 0; j < K; ++j) p[j] *= st.w_mul[m];
    }
  return w;
}


int Program::add_value(const std::string& n, int producer) {
  Value v;
  v.name = n;
  v.producer = producer;
  values.push_back(v);
  index_[n] = static_cast<int>(values.size()) - 1;
  return static_cast<int>(values.size()) - 1;
}

void Program::build(const sdk::Graph& group) {
  name = group.name();
  for (size_t i = 0; i < group.num_inputs(); ++i) {
    const sdk::Value v = group.input(i);
    if (is_constant(v)) continue;
    if (!rank4(v)) unsupported("input '" + v.name() + "' is not a 4-D float tensor");
    const int id = add_value(v.name(), -1);
    values[id].group_input = static_cast<int>(i);
  }
  const std::vector<sdk::Node> nodes = group.nodes();
  std::set<const EphostNode*> members, consumed;
  for (const sdk::Node& n : nodes) members.insert(n.get());
  const Available ok = [&](const sdk::Node& n) { return members.count(n.get()) && !consumed.count(n.get()); };
  // Decomposed activations (SiLU, HardSwish, GELU) starting at v become one activation step.
  auto decomposed = [&](int v) {
    Activation act;
    std::vector<sdk::Node> found;
    sdk::Value out;
    const std::string& vn = values[v].name;
    for (const sdk::Node& n : nodes)
      for (size_t i = 0; i < n.num_inputs(); ++i)
        if (n.has_input(i) && n.input(i).name() == vn) {
          if (!match_activation(n.input(i), ok, &act, &found, &out) || found.size() < 2) return;
          for (const sdk::Node& f : found) consumed.insert(f.get());
          auto st = std::make_unique<Step>();
          st->op = Op::kUnary;
          st->node = found.back().name();
          for (const sdk::Node& f : found) st->label.add(f);
          st->in = {v};
          st->acts = {act};
          steps.push_back(std::move(st));
          steps.back()->out = add_value(out.name(), static_cast<int>(steps.size()) - 1);
          return;
        }
  };
  for (size_t i = 0; i < values.size(); ++i) decomposed(static_cast<int>(i));
  for (const sdk::Node& node : nodes) {
    if (consumed.count(node.get())) continue;
    const size_t before = steps.size();
    add_node(node);
    for (size_t k = before; k < steps.size(); ++k) decomposed(steps[k]->out);
  }
  for (size_t i = 0; i < group.num_outputs(); ++i) {
    const int id = value(group.output(i).name());
    if (id < 0) unsupported("output '" + group.output(i).name() + "' is not computed in the region");
    values[id].group_output = static_cast<int>(i);
  }
  fuse();
  liveness();
  sdk::log(EPHOST_LOG_VERBOSE, "cpu region " + name + ":\n" + describe());
}

std::string Program::describe() const {
  std::string out;
  for (const auto& s : steps) {
    out += std::string("  ") + op_name(s->op) + " '" + s->node + "' (";
    for (size_t i = 0; i < s->in.size(); ++i) out += (i ? ", " : "") + values[s->in[i]].name;
    out += ") -> " + values[s->out].name;
    if (!s->acts.empty()) out += " acts " + std::to_string(s->acts.size());
    if (s->residual >= 0) out += " + residual " + values[s->residual].name;
    if (!s->acts2.empty()) out += " acts2 " + std::to_string(s->acts2.size());
    out += "\n";
  }
  return out;
}

[[noreturn]] void Program::unsupported(const std::string& what) const {
  sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile region " + name + ": " + what);
}

int Program::input_value(const sdk::Node& node, size_t i) {
  const int id = value(node.input(i).name());
  if (id < 0) unsupported("node '" + node.name() + "' reads '" + node.input(i).name() + "', not a region value");
  return id;
}

Step& Program::add_step(Op op, const sdk::Node& node) {
  auto s = std::make_unique<Step>();
  s->op = op;
  s->node = node.name();
  s->label.add(node);
  steps.push_back(std::move(s));
  Step& st = *steps.back();
  st.out = add_value(node.output(0).name(), static_cast<int>(steps.size()) - 1);
  return st;
}

void Program::add_node(const sdk::Node& node) {
  if (!cnn_eligible(node)) unsupported("node '" + node.name() + "' (" + node.op_type() + ") cannot run in a region");
  const std::string op = node.op_type();
  if (op == "Conv" || op == "ConvTranspose") {
    const int x = input_value(node, 0);
    Step& s = add_step(op == "Conv" ? Op::kConv : Op::kDeconv, node);
    s.in = {x};
    s.conv = conv_attributes(node, op == "ConvTranspose");
    const sdk::Tensor w = constant_of(node.input(1));
    s.w_shape = w.shape();
    s.w = w.data<float>();
    s.w_value = node.input(1);
    s.w_count = w.size();
    if (node.has_input(2)) {
      const sdk::Tensor b = constant_of(node.input(2));
      s.bias.assign(b.data<float>(), b.data<float>() + b.size());
    }
    return;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    const int x = input_value(node, 0);
    Step& s = add_step(op == "MaxPool" ? Op::kMaxPool : Op::kAvgPool, node);
    s.in = {x};
    s.pool.auto_pad = node.attr_string("auto_pad", "NOTSET");
    s.pool.kernel_shape = node.attr_ints("kernel_shape");
    s.pool.strides = node.attr_ints("strides");
    s.pool.pads = node.attr_ints("pads");
    s.pool.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
    s.count_include_pad = node.attr_int("count_include_pad", 0) != 0;
    return;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    const int x = input_value(node, 0);
    Step& s = add_step(op == "GlobalAveragePool" ? Op::kGlobalAvg : Op::kGlobalMax, node);
    s.in = {x};
    return;
  }
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish" || op == "LeakyRelu" ||
      op == "HardSigmoid" || op == "Clip") {
    const int x = input_value(node, 0);
    Activation a;
    std::vector<sdk::Node> found;
    sdk::Value out;
    // match_activation describes the node from its input (a sole consumer).
    Activation parsed;
    if (op == "Relu") parsed.kind = Activation::kRelu;
    else if (op == "Sigmoid") parsed.kind = Activation::kSigmoid;
    else if (op == "Tanh") parsed.kind = Activation::kTanh;
    else if (op == "HardSwish") parsed.kind = Activation::kHardSwish;
    else if (op == "LeakyRelu") {
      parsed.kind = Activation::kLeakyRelu;
      parsed.alpha = node.attr_float("alpha", 0.01f);
    } else if (op == "HardSigmoid") {
      parsed.kind = Activation::kHardSigmoid;
      parsed.alpha = node.attr_float("alpha", 0.2f);
      parsed.beta = node.attr_float("beta", 0.5f);
    } else {
      parsed.kind = Activation::kClip;
      parsed.alpha = std::numeric_limits<float>::lowest();
      parsed.beta = std::numeric_limits<float>::max();
      if (node.opset() < 11) {
        parsed.alpha = node.attr_float("min", -std::numeric_limits<float>::max());
        parsed.beta = node.attr_float("max", std::numeric_limits<float>::max());
      } else {
        if (node.has_input(1)) parsed.alpha = constant_of(node.input(1)).data<float>()[0];
        if (node.has_input(2)) parsed.beta = constant_of(node.input(2)).data<float>()[0];
      }
    }
    Step& s = add_step(Op::kUnary, node);
    s.in = {x};
    s.acts = {parsed};
    return;
  }
  if (op == "BatchNormalization") {
    const int x = input_value(node, 0);
    Step& s = add_step(Op::kAffine, node);
    s.in = {x};
    const float eps = node.attr_float("epsilon", 1e-5f);
    const sdk::Tensor sc = constant_of(node.input(1)), b = constant_of(node.input(2)), m = constant_of(node.input(3)),
                      v = constant_of(node.input(4));
    const int64_t C = sc.size();
    if (b.size() != C || m.size() != C || v.size() != C) unsupported("BatchNormalization parameters differ in size");
    s.scale.resize(static_cast<size_t>(C));
    s.shift.resize(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const float k = sc.data<float>()[c] / std::sqrt(v.data<float>()[c] + eps);
      s.scale[c] = k;
      s.shift[c] = b.data<float>()[c] - m.data<float>()[c] * k;
    }
    return;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const math::BinOp bin = op == "Add" ? math::BinOp::kAdd
                            : op == "Sub" ? math::BinOp::kSub
                            : op == "Mul" ? math::BinOp::kMul
                                          : math::BinOp::kDiv;
    const bool c0 = is_constant(node.input(0)), c1 = is_constant(node.input(1));
    if (!c0 && !c1) {
      const int a = input_value(node, 0), b = input_value(node, 1);
      Step& s = add_step(Op::kBinary, node);
      s.in = {a, b};
      s.bin = bin;
      return;
    }
    const size_t ci = c0 ? 0 : 1;
    const int x = input_value(node, 1 - ci);
    const sdk::Tensor t = constant_of(node.input(ci));
    std::vector<float> pc;
    // x op c with c a scalar or per channel: an affine step (a Linear activation for a scalar).
    if (per_channel(t, &pc) && !(c0 && (bin == math::BinOp::kSub || bin == math::BinOp::kDiv))) {
      if (pc.size() == 1) {
        Step& s = add_step(Op::kUnary, node);
        s.in = {x};
        Activation a;
        a.kind = Activation::kLinear;
        a.alpha = bin == math::BinOp::kMul ? pc[0] : bin == math::BinOp::kDiv ? 1.f / pc[0] : 1.f;
        a.beta = bin == math::BinOp::kAdd ? pc[0] : bin == math::BinOp::kSub ? -pc[0] : 0.f;
        s.acts = {a};
        return;
      }
      if (bin != math::BinOp::kDiv) {
        Step& s = add_step(Op::kAffine, node);
        s.in = {x};
        const size_t C = pc.size();
        if (bin == math::BinOp::kMul) {
          s.scale = pc;
          s.shift.assign(C, 0.f);
        } else {
          s.scale.assign(C, 1.f);
          s.shift = pc;
          if (bin == math::BinOp::kSub)
            for (float& v : s.shift) v = -v;
        }
        return;
      }
    }
    Step& s = add_step(Op::kBinary, node);
    s.in = {x};
    s.bin = bin;
    s.constant_first = c0;
    auto k = std::make_shared<Constant4>();
    k->dims = pad4(t.shape());
    k->nhwc = to_nhwc(t.data<float>(), k->dims);
    s.constant = k;
    return;
  }
  if (op == "Concat") {
    std::vector<int> in;
    for (size_t i = 0; i < node.num_inputs(); ++i) in.push_back(input_value(node, i));
    Step& s = add_step(Op::kConcat, node);
    s.in = in;
    return;
  }
  if (op == "Resize") {
    const int x = input_value(node, 0);
    Step& s = add_step(Op::kResize, node);
    s.in = {x};
    math::ResizeParams p;
    p.mode = math::ResizeMode::kNearest;
    const std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
    p.coord = coord == "pytorch_half_pixel" ? math::CoordMode::kPytorchHalfPixel
              : coord == "align_corners"    ? math::CoordMode::kAlignCorners
              : coord == "asymmetric"       ? math::CoordMode::kAsymmetric
              : coord == "tf_half_pixel_for_nn" ? math::CoordMode::kTfHalfPixelForNN
                                                : math::CoordMode::kHalfPixel;
    const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
    p.nearest = nearest == "round_prefer_ceil" ? math::NearestMode::kRoundPreferCeil
                : nearest == "floor"           ? math::NearestMode::kFloor
                : nearest == "ceil"            ? math::NearestMode::kCeil
                                               : math::NearestMode::kRoundPreferFloor;
    s.resize = p;
    if (node.has_input(2) && constant_of(node.input(2)).size() > 0) {
      const sdk::Tensor t = constant_of(node.input(2));
      s.scales.assign(t.data<float>(), t.data<float>() + 4);
    } else {
      const sdk::Tensor t = constant_of(node.input(3));
      s.sizes.assign(t.data<int64_t>(), t.data<int64_t>() + 4);
    }
    return;
  }
  unsupported("node '" + node.name() + "' (" + op + ")");
}

void Program::count_uses() {
  for (Value& v : values) v.consumers = 0;
  for (const auto& s : steps) {
    if (s->out < 0) continue;
    for (int v : s->in) ++values[v].consumers;
    if (s->residual >= 0) ++values[s->residual].consumers;
  }
}

int Program::sole_reader(int v) const {
  if (values[v].group_output >= 0) return -1;
  int found = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = *steps[i];
    if (s.out < 0) continue;
    int uses = 0;
    for (int x : s.in) uses += x == v;
    uses += s.residual == v;
    if (uses == 0) continue;
    if (found >= 0 || uses > 1) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

void Program::absorb(Step& into, Step& from) {
  const int old_out = into.out;
  into.out = from.out;
  values[into.out].producer = values[old_out].producer;
  from.out = -1;
  from.in.clear();
  into.label.append(from.label);
}

void Program::fuse() {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < steps.size(); ++i) {
      Step& c = *steps[i];
      if (c.out < 0 || (c.op != Op::kConv && c.op != Op::kDeconv)) continue;
      const int r = sole_reader(c.out);
      if (r < 0) continue;
      Step& n = *steps[static_cast<size_t>(r)];
      const bool deconv1 = c.op == Op::kDeconv && c.conv.group == 1;
      if (n.op == Op::kAffine && (c.op == Op::kConv || deconv1) && c.acts.empty() && c.residual < 0) {
        // Output channel m: Conv W [M, C/g, k...] rows; ConvTranspose W [C, M, k...] columns.
        const int64_t M = c.op == Op::kConv ? c.w_shape[0] : c.w_shape[1];
        if (!(n.scale.size() == static_cast<size_t>(M) || n.scale.size() == 1)) continue;
        if (c.bias.empty()) c.bias.assign(static_cast<size_t>(M), 0.f);
        if (c.w_mul.empty()) c.w_mul.assign(static_cast<size_t>(M), 1.f);
        for (int64_t m = 0; m < M; ++m) {
          const float k = n.scale.size() == 1 ? n.scale[0] : n.scale[m];
          const float t = n.shift.size() == 1 ? n.shift[0] : n.shift[m];
          c.w_mul[m] *= k;
          c.bias[m] = c.bias[m] * k + t;
        }
        absorb(c, n);
        changed = true;
      } else if (n.op == Op::kUnary) {
        std::vector<Activation> acts = n.acts;
        compose_linear(acts);
        // Leading affine steps right after the convolution fold into its weights.
        if ((c.op == Op::kConv || deconv1) && c.acts.empty() && c.residual < 0) {
          const int64_t M = c.op == Op::kConv ? c.w_shape[0] : c.w_shape[1];
          size_t k = 0;
          for (; k < acts.size() && acts[k].kind == Activation::kLinear; ++k) {
            if (c.bias.empty()) c.bias.assign(static_cast<size_t>(M), 0.f);
            if (c.w_mul.empty()) c.w_mul.assign(static_cast<size_t>(M), 1.f);
            for (float& w : c.w_mul) w *= acts[k].alpha;
            for (float& b : c.bias) b = b * acts[k].alpha + acts[k].beta;
          }
          acts.erase(acts.begin(), acts.begin() + static_cast<std::ptrdiff_t>(k));
        }
        std::vector<Activation> chain = c.acts;
        chain.insert(chain.end(), c.acts2.begin(), c.acts2.end());
        chain.insert(chain.end(), acts.begin(), acts.end());
        // oneDNN 2.6's swish post-op costs more than the convolution it follows (1x1, 16 -> 96
        // channels at 112x112: 0.44 ms, 1.22 ms with the post-op, 0.96 ms with math::swish_f32 as a
        // pass of its own), so SiLU stays a step (in place) of its own.
        bool swish = false;
        for (const Activation& a : acts) swish = swish || a.kind == Activation::kSwish;
        if (swish || !post_ops_supported(chain)) {
          // Keep what folded; the rest stays a step of its own.
          if (acts.size() != n.acts.size()) {
            n.acts = acts;
            changed = true;
          }
          continue;
        }
        std::vector<Activation>& to = c.residual >= 0 ? c.acts2 : c.acts;
        to.insert(to.end(), acts.begin(), acts.end());
        absorb(c, n);
        changed = true;
      } else if (n.op == Op::kBinary && n.bin == math::BinOp::kAdd && !n.constant && n.in.size() == 2 &&
                 c.residual < 0 && c.op == Op::kConv) {
        const int other = n.in[0] == c.out ? n.in[1] : n.in[0];
        // The residual must exist when the convolution runs.
        if (other == c.out || values[other].producer >= static_cast<int>(i)) continue;
        c.residual = other;
        absorb(c, n);
        changed = true;
      }
    }
    // Consecutive activations on one value: one pass.
    for (size_t i = 0; i < steps.size(); ++i) {
      Step& u = *steps[i];
      if (u.out < 0 || u.op != Op::kUnary) continue;
      const int r = sole_reader(u.out);
      if (r < 0) continue;
      Step& n = *steps[static_cast<size_t>(r)];
      if (n.op != Op::kUnary) continue;
      u.acts.insert(u.acts.end(), n.acts.begin(), n.acts.end());
      compose_linear(u.acts);
      absorb(u, n);
      changed = true;
    }
  }
  // Drop retired steps, keeping the order.
  std::vector<std::unique_ptr<Step>> kept;
  for (auto& s : steps)
    if (s->out >= 0) kept.push_back(std::move(s));
  steps = std::move(kept);
  for (size_t i = 0; i < steps.size(); ++i) values[steps[i]->out].producer = static_cast<int>(i);
}

void Program::liveness() {
  count_uses();
  for (Value& v : values) v.last_use = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int x : steps[i]->in) values[x].last_use = static_cast<int>(i);
    if (steps[i]->residual >= 0) values[steps[i]->residual].last_use = static_cast<int>(i);
  }
}

}  // namespace ephost::cpu::fusion::region

#endif  // EPHOST_WITH_DNNL
