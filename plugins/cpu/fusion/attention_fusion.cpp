// Scaled dot-product attention as exporters write it, as one group:
//
//   Q = view(q_src) [/ s]    K = view(k_src)    V = view(v_src)
//   scores = MatMul(Q, K) [/ s | * s] [+ mask]  ->  Softmax(axis -1)  ->  MatMul(., V)  ->  out view
//
// where each view is a chain of Slice / Reshape / Transpose nodes (BERT's head split
// Reshape(B,S,H,d) -> Transpose(0,2,1,3), ViT's packed-QKV Slices, the merge back
// Transpose -> Reshape(B,S,D)). The chains are never materialised: each becomes strides on the
// source buffer, so the two batched products (all heads at once) read Q, K and V where the projection
// wrote them and write the result where the next layer reads it. Scale, mask and softmax are one
// vectorised pass over the scores. Views a chain cannot express with strides are copied.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "constant_lookup.h"
#include "graph_match.h"
#include "math/parallel.h"
#include "math/vec.h"

#if defined(EPHOST_WITH_DNNL)
#include "math/dnnl_util.h"
#endif

namespace ephost::cpu::fusion {

namespace {

// ---- views ----------------------------------------------------------------------------------------------

struct View {
  int64_t offset = 0;
  Shape dims, strides;
};

View contiguous(const Shape& s) {
  View v;
  v.dims = s;
  v.strides = math::strides_of(s);
  return v;
}

// A reshape without copying, when the view's memory allows it (numpy's rule); false otherwise.
bool reshape_view(const View& v, const Shape& target, View* out) {
  if (math::numel(v.dims) != math::numel(target) || math::numel(target) == 0) return false;
  Shape od, os;
  for (size_t i = 0; i < v.dims.size(); ++i)
    if (v.dims[i] != 1) {
      od.push_back(v.dims[i]);
      os.push_back(v.strides[i]);
    }
  Shape nd, ns(target.size(), 0);
  std::vector<size_t> where;  // target position of each non-1 new dim
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] != 1) {
      nd.push_back(target[i]);
      where.push_back(i);
    }
  Shape nsc(nd.size(), 0);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nd.size() && oi < od.size()) {
    int64_t np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nd.size()) return false;
        np *= nd[nj++];
      } else {
        if (oj >= od.size()) return false;
        op *= od[oj++];
      }
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok)
      if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
    nsc[nj - 1] = os[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) nsc[nk - 1] = nsc[nk] * nd[nk];
    ni = nj++;
    oi = oj++;
  }
  if (ni != nd.size() || oi != od.size()) return false;
  out->offset = v.offset;
  out->dims = target;
  for (size_t i = 0; i < where.size(); ++i) ns[where[i]] = nsc[i];
  // Size-1 dims: any stride; use the next dim's extent so the view stays well formed.
  for (size_t i = target.size(); i-- > 0;)
    if (target[i] == 1) ns[i] = i + 1 < target.size() ? ns[i + 1] * target[i + 1] : 1;
  out->strides = ns;
  return true;
}

View transpose_view(const View& v, const Shape& perm) {
  View o;
  o.offset = v.offset;
  for (int64_t p : perm) {
    o.dims.push_back(v.dims[static_cast<size_t>(p)]);
    o.strides.push_back(v.strides[static_cast<size_t>(p)]);
  }
  return o;
}

// Dense copy of a view.
void materialize(const float* base, const View& v, float* out) {
  const int64_t n = math::numel(v.dims);
  const size_t r = v.dims.size();
  Shape idx(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = v.offset;
    for (size_t a = 0; a < r; ++a) off += idx[a] * v.strides[a];
    out[k] = base[off];
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < v.dims[a]) break;
      idx[a] = 0;
    }
  }
}

// ---- the pattern --------------------------------------------------------------------------------------------

struct PathOp {
  enum Kind { kTranspose, kReshape, kSlice } kind;
  Shape perm;                      // Transpose
  Shape shape;                     // Reshape: constant target (empty: runtime input)
  std::string shape_input;         // Reshape: the target's value when computed at run time
  bool allowzero = false;
  Shape starts, ends, axes, steps;  // Slice
};

struct Path {
  std::string source;        // the tensor the chain starts from
  std::vector<PathOp> ops;   // from the source towards the product (outputs: from the product outwards)
  float scale = 1.f;         // scalar Div/Mul on the chain (Q, K)
};

struct AttentionMatch {
  sdk::Node softmax, m1, m2;
  Path q, k, v, out;
  std::string out_value;
  float scale = 1.f;
  std::string mask;  // empty: none
  std::vector<sdk::Node> nodes;
};

bool const_ints(const sdk::Value& v, Shape* out) {
  const sdk::Tensor t = constant_of(v);
  if (!t.present()) return false;
  if (t.elem_type() == EPHOST_ELEMENT_INT64) out->assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
  else if (t.elem_type() == EPHOST_ELEMENT_INT32) out->assign(t.data<int32_t>(), t.data<int32_t>() + t.size());
  else return false;
  return true;
}

// The view op a node stands for, reading `from`.
bool view_op(const sdk::Node& n, const std::string& from, PathOp* op) {
  if (!n.has_input(0) || n.input(0).name() != from || !is_float(n.output(0))) return false;
  if (is_op(n, "Transpose")) {
    op->kind = PathOp::kTranspose;
    op->perm = n.attr_ints("perm");
    return !op->perm.empty();
  }
  if (is_op(n, "Reshape") && n.opset() >= 5 && n.has_input(1)) {
    op->kind = PathOp::kReshape;
    op->allowzero = n.attr_int("allowzero", 0) != 0;
    if (!const_ints(n.input(1), &op->shape)) {
      op->shape.clear();
      op->shape_input = n.input(1).name();
    }
    return true;
  }
  if (is_op(n, "Slice") && n.opset() >= 10 && n.num_inputs() >= 3) {
    op->kind = PathOp::kSlice;
    if (!const_ints(n.input(1), &op->starts) || !const_ints(n.input(2), &op->ends)) return false;
    if (n.has_input(3) && !const_ints(n.input(3), &op->axes)) return false;
    if (n.has_input(4) && !const_ints(n.input(4), &op->steps)) return false;
    return true;
  }
  return false;
}

// Walks up from `v` (read only by `user`) through view ops and scalar scales (when allowed).
bool input_path(sdk::Value v, const sdk::Node& user, bool allow_scale, const Available& ok, Path* path,
                std::vector<sdk::Node>* nodes) {
  std::vector<PathOp> ops;
  sdk::Node reader = user;
  for (int guard = 0; guard < 16; ++guard) {
    if (!read_only_by(v, reader)) break;
    const sdk::Node p = v.producer();
    if (!p.valid() || !ok(p) || p.num_outputs() != 1) break;
    PathOp op;
    float s = 0;
    if (view_op(p, p.has_input(0) ? p.input(0).name() : "", &op)) {
      ops.push_back(op);
    } else if (allow_scale && (is_op(p, "Div") || is_op(p, "Mul")) && p.num_inputs() == 2 && is_float(p.input(0)) &&
               !is_constant(p.input(0)) && scalar_constant(p.input(1), &s) && s != 0.f) {
      path->scale *= is_op(p, "Div") ? 1.f / s : s;
    } else {
      break;
    }
    nodes->push_back(p);
    reader = p;
    v = p.input(0);
  }
  std::reverse(ops.begin(), ops.end());
  path->ops = std::move(ops);
  path->source = v.name();
  return is_float(v) && !is_constant(v);
}

bool match_attention(const sdk::Node& anchor, const Available& ok, AttentionMatch* m) {
#if !defined(EPHOST_WITH_DNNL)
  return false;
#endif
  if (!is_op(anchor, "Softmax") || !ok(anchor) || !is_float(anchor.output(0))) return false;
  const int64_t axis = anchor.attr_int("axis", anchor.opset() >= 13 ? -1 : 1);
  const int64_t rank = anchor.input(0).rank();
  if (!(axis == -1 || (rank > 0 && axis == rank - 1))) return false;
  std::vector<sdk::Node> nodes{anchor};
  // Upwards: [+ mask] and [scale], in either order, to the first product.
  sdk::Value cur = anchor.input(0);
  sdk::Node reader = anchor;
  float scale = 1.f;
  std::string mask;
  bool scaled = false;
  for (int step = 0; step < 2; ++step) {
    const sdk::Node p = cur.producer();
    if (!p.valid() || !ok(p) || !read_only_by(cur, reader)) return false;
    float s = 0;
    if (!scaled && (is_op(p, "Div") || is_op(p, "Mul")) && p.num_inputs() == 2 && scalar_constant(p.input(1), &s) &&
        s != 0.f && !is_constant(p.input(0))) {
      scale = is_op(p, "Div") ? 1.f / s : s;
      scaled = true;
      nodes.push_back(p);
      reader = p;
      cur = p.input(0);
    } else if (mask.empty() && is_op(p, "Add") && p.num_inputs() == 2 && is_float(p.input(0)) && is_float(p.input(1))) {
      // The operand that leads to the product (directly or through a scalar scale) continues the chain.
      auto leads = [&](size_t i) {
        const sdk::Node q = p.input(i).producer();
        if (is_op(q, "MatMul")) return true;
        float c = 0;
        return (is_op(q, "Div") || is_op(q, "Mul")) && q.num_inputs() == 2 && scalar_constant(q.input(1), &c) &&
               is_op(q.input(0).producer(), "MatMul");
      };
      const bool l0 = leads(0), l1 = leads(1);
      if (l0 == l1) return false;
      const size_t k = l0 ? 0 : 1;
      mask = p.input(1 - k).name();
      nodes.push_back(p);
      reader = p;
      cur = p.input(k);
    } else {
      break;
    }
  }
  const sdk::Node m1 = cur.producer();
  if (!is_op(m1, "MatMul") || !ok(m1) || !read_only_by(cur, reader)) return false;
  const sdk::Node m2 = sole_consumer(anchor.output(0));
  if (!is_op(m2, "MatMul") || !ok(m2) || m2.input(0).name() != anchor.output(0).name()) return false;
  nodes.push_back(m1);
  nodes.push_back(m2);
  m->softmax = anchor;
  m->m1 = m1;
  m->m2 = m2;
  if (!input_path(m1.input(0), m1, true, ok, &m->q, &nodes)) return false;
  if (!input_path(m1.input(1), m1, true, ok, &m->k, &nodes)) return false;
  if (!input_path(m2.input(1), m2, false, ok, &m->v, &nodes)) return false;
  // Downwards from the second product: Transpose / Reshape.
  sdk::Value o = m2.output(0);
  for (int guard = 0; guard < 8; ++guard) {
    const sdk::Node c = sole_consumer(o);
    PathOp op;
    if (!c.valid() || !ok(c) || c.num_outputs() != 1 || !view_op(c, o.name(), &op) || op.kind == PathOp::kSlice) break;
    m->out.ops.push_back(op);
    nodes.push_back(c);
    o = c.output(0);
  }
  m->out_value = o.name();
  m->scale = scale * m->q.scale * m->k.scale;
  m->mask = mask;
  // No node twice (a source reached twice is fine: it is outside).
  std::sort(nodes.begin(), nodes.end(), [](const sdk::Node& a, const sdk::Node& b) { return a.get() < b.get(); });
  for (size_t i = 1; i < nodes.size(); ++i)
    if (nodes[i].get() == nodes[i - 1].get()) return false;
  m->nodes = std::move(nodes);
  return true;
}

#if defined(EPHOST_WITH_DNNL)

using dnnl::memory;

// Reshape target with ONNX's 0 (copy) and -1 (infer).
Shape reshape_target(const Shape& in, Shape want, bool allowzero) {
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0 && !allowzero) {
      if (i >= in.size()) math::invalid("Reshape copies a dimension the input does not have");
      want[i] = in[i];
    }
    if (want[i] == -1) {
      if (infer >= 0) math::invalid("Reshape target has two -1");
      infer = static_cast<int64_t>(i);
    } else {
      if (want[i] < 0) math::invalid("Reshape target has a negative dimension");
      known *= want[i];
    }
  }
  const int64_t n = math::numel(in);
  if (infer >= 0) {
    if (known == 0 || n % known != 0) math::invalid("cannot infer the Reshape target");
    want[infer] = n / known;
  } else if (known != n) {
    math::invalid("Reshape target " + math::to_string(want) + " does not match " + math::to_string(in));
  }
  return want;
}

Shape slice_dims(const View& v, const PathOp& op, View* out) {
  const int64_t r = static_cast<int64_t>(v.dims.size());
  Shape axes = op.axes, steps = op.steps;
  if (axes.empty())
    for (size_t i = 0; i < op.starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(op.starts.size(), 1);
  if (axes.size() != op.starts.size() || op.ends.size() != op.starts.size() || steps.size() != op.starts.size())
    math::invalid("bad Slice");
  *out = v;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = math::normalize_axis(axes[i], r), d = v.dims[a], t = steps[i];
    if (t <= 0) math::invalid("Slice steps must be positive here");
    int64_t s = op.starts[i], e = op.ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    const int64_t len = e > s ? (e - s + t - 1) / t : 0;
    out->offset += s * v.strides[a];
    out->dims[a] = len;
    out->strides[a] = v.strides[a] * t;
  }
  return out->dims;
}

struct Runtime {
  // Group inputs by value name, read per run.
  std::map<std::string, sdk::Tensor> inputs;
  std::vector<float> temps[4];
};

class AttentionGroup : public sdk::CompiledGroup {
 public:
  AttentionGroup(const AttentionMatch& m, const sdk::Graph& group, const KernelConfig& config)
      : m_(m), name_(group.name()), default_threads_(config.default_threads), adaptive_(config.adaptive_threads),
        bf16_(config.bf16) {
    for (size_t i = 0; i < group.num_inputs(); ++i) index_[group.input(i).name()] = static_cast<int>(i);
    out_index_ = group_output(group, m.out_value);
    if (out_index_ < 0 || group.num_outputs() != 1)
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile attention " + name_ + ": unexpected group interface");
  }

  void compute(void*, sdk::KernelContext& ctx) override {
    int threads = ctx.threads();
    if (threads <= 0) threads = default_threads_;
    threads = math::effective_threads(threads, adaptive_);
    math::set_num_threads(threads);
    try {
      run(ctx, threads);
    } catch (const sdk::Error&) {
      throw;
    } catch (const std::invalid_argument& e) {
      sdk::fail(EPHOST_INVALID_ARGUMENT, "attention " + name_ + " (" + m_.softmax.name() + "): " + e.what());
    }
    math::note_team_end(threads);
  }

 private:
  sdk::Tensor input(sdk::KernelContext& ctx, const std::string& name) const {
    auto it = index_.find(name);
    if (it == index_.end()) math::invalid("'" + name + "' is not an input of the group");
    const sdk::Tensor t = ctx.input(static_cast<size_t>(it->second));
    if (!t.present()) math::invalid("'" + name + "' is missing");
    return t;
  }

  Shape reshape_of(sdk::KernelContext& ctx, const PathOp& op, const Shape& in) const {
    Shape want = op.shape;
    if (!op.shape_input.empty()) {
      const sdk::Tensor t = input(ctx, op.shape_input);
      if (t.elem_type() == EPHOST_ELEMENT_INT64) want.assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
      else math::invalid("Reshape target must be int64");
    }
    return reshape_target(in, want, op.allowzero);
  }

  // The view of an input chain over its source, or a copy (then *base points into `temp`).
  View input_view(sdk::KernelContext& ctx, const Path& p, const float** base, std::vector<float>& temp) const {
    const sdk::Tensor src = input(ctx, p.source);
    if (src.elem_type() != EPHOST_ELEMENT_FLOAT) math::invalid("'" + p.source + "' must be float");
    *base = src.data<float>();
    View v = contiguous(src.shape());
    for (const PathOp& op : p.ops) {
      if (op.kind == PathOp::kTranspose) {
        if (op.perm.size() != v.dims.size()) math::invalid("Transpose perm does not match the rank");
        v = transpose_view(v, op.perm);
      } else if (op.kind == PathOp::kSlice) {
        View s;
        slice_dims(v, op, &s);
        v = s;
      } else {
        const Shape target = reshape_of(ctx, op, v.dims);
        View r;
        if (!reshape_view(v, target, &r)) {
          temp.resize(static_cast<size_t>(math::numel(v.dims)));
          materialize(*base, v, temp.data());
          *base = temp.data();
          r = contiguous(target);
        }
        v = r;
      }
    }
    return v;
  }

  void run(sdk::KernelContext& ctx, int threads) {
    thread_local Runtime rt;
    const float *qb = nullptr, *kb = nullptr, *vb = nullptr;
    const View q = input_view(ctx, m_.q, &qb, rt.temps[0]);
    const View k = input_view(ctx, m_.k, &kb, rt.temps[1]);
    const View v = input_view(ctx, m_.v, &vb, rt.temps[2]);
    const size_t r = q.dims.size();
    if (r < 2 || k.dims.size() != r || v.dims.size() != r) math::invalid("Q, K and V views differ in rank");
    for (size_t i = 0; i + 2 < r; ++i)
      if (q.dims[i] != k.dims[i] || q.dims[i] != v.dims[i]) math::invalid("Q, K and V differ in their batch dims");
    const int64_t Sq = q.dims[r - 2], d = q.dims[r - 1], Sk = k.dims[r - 1], dv = v.dims[r - 1];
    if (k.dims[r - 2] != d || v.dims[r - 2] != Sk) math::invalid("Q, K and V do not multiply");
    Shape score_dims(q.dims.begin(), q.dims.end() - 2);
    const int64_t batch = math::numel(score_dims);
    score_dims.push_back(Sq);
    score_dims.push_back(Sk);
    Shape m2_dims(q.dims.begin(), q.dims.end() - 2);
    m2_dims.push_back(Sq);
    m2_dims.push_back(dv);
    // The output: the chain's shape, and the product's view of it.
    Shape out_shape = m2_dims;
    std::vector<Shape> chain{m2_dims};
    for (const PathOp& op : m_.out.ops) {
      out_shape = op.kind == PathOp::kTranspose ? [&] {
        Shape t;
        for (int64_t p : op.perm) t.push_back(out_shape.at(static_cast<size_t>(p)));
        return t;
      }()
                                                : reshape_of(ctx, op, out_shape);
      chain.push_back(out_shape);
    }
    float* y = ctx.output<float>(static_cast<size_t>(out_index_), out_shape);
    if (math::numel(out_shape) == 0) return;
    View ov = contiguous(out_shape);
    bool direct = true;
    for (size_t i = m_.out.ops.size(); i-- > 0 && direct;) {
      const PathOp& op = m_.out.ops[i];
      if (op.kind == PathOp::kTranspose) {
        Shape inv(op.perm.size());
        for (size_t j = 0; j < op.perm.size(); ++j) inv[static_cast<size_t>(op.perm[j])] = static_cast<int64_t>(j);
        ov = transpose_view(ov, inv);
      } else {
        View back;
        direct = reshape_view(ov, chain[i], &back);
        ov = back;
      }
    }
    float* m2_out = y;
    View m2_view = ov;
    if (!direct) {
      rt.temps[3].resize(static_cast<size_t>(math::numel(m2_dims)));
      m2_out = rt.temps[3].data();
      m2_view = contiguous(m2_dims);
    }
    // Scores, then scale + mask + softmax in place, then the second product.
    float* scores = static_cast<float*>(math::thread_buffer(5, sizeof(float) * static_cast<size_t>(batch * Sq * Sk)));
    product(q, qb, k, kb, contiguous(score_dims), scores, threads, 0);
    softmax_rows(ctx, scores, score_dims, threads);
    product(contiguous(score_dims), scores, v, vb, m2_view, m2_out, threads, 1);
    if (!direct) {
      // Apply the output chain by copies.
      View cur = contiguous(m2_dims);
      const float* base = m2_out;
      std::vector<float> tmp;
      for (size_t i = 0; i < m_.out.ops.size(); ++i) {
        const PathOp& op = m_.out.ops[i];
        if (op.kind == PathOp::kTranspose) {
          cur = transpose_view(cur, op.perm);
        } else {
          View rv;
          if (!reshape_view(cur, chain[i + 1], &rv)) {
            tmp.resize(static_cast<size_t>(math::numel(cur.dims)));
            materialize(base, cur, tmp.data());
            base = tmp.data();
            rv = contiguous(chain[i + 1]);
          }
          cur = rv;
        }
      }
      materialize(base, cur, y);
    }
  }

  void softmax_rows(sdk::KernelContext& ctx, float* scores, const Shape& sd, int threads) const {
    const size_t r = sd.size();
    const int64_t Sq = sd[r - 2], Sk = sd[r - 1], rows = math::numel(sd) / Sk;
    const float scale = m_.scale;
    const float* mask = nullptr;
    Shape mstr(r, 0);
    if (!m_.mask.empty()) {
      const sdk::Tensor t = input(ctx, m_.mask);
      if (t.elem_type() != EPHOST_ELEMENT_FLOAT) math::invalid("the mask must be float");
      const Shape ms = t.shape();
      if (ms.size() > r) math::invalid("the mask has a higher rank than the scores");
      const Shape full = math::strides_of(ms);
      for (size_t i = 0; i < ms.size(); ++i) {
        const size_t a = r - ms.size() + i;
        if (ms[i] != 1 && ms[i] != sd[a]) math::invalid("the mask " + math::to_string(ms) + " does not broadcast to the scores");
        mstr[a] = ms[i] == 1 ? 0 : full[i];
      }
      mask = t.data<float>();
    }
    const bool row_ok = mask == nullptr || mstr[r - 1] == 1 || Sk == 1;
    math::parallel_for(rows, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(Sk, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<float> mrow;
      for (int64_t row = r0; row < r1; ++row) {
        const float* mp = nullptr;
        if (mask) {
          int64_t rem = row, off = 0;
          for (size_t a = r - 1; a-- > 0;) {
            off += (rem % sd[a]) * mstr[a];
            rem /= sd[a];
          }
          mp = mask + off;
          if (!row_ok) {
            mrow.assign(static_cast<size_t>(Sk), 0.f);
            for (int64_t j = 0; j < Sk; ++j) mrow[j] = mp[j * mstr[r - 1]];
            mp = mrow.data();
          }
        }
        math::softmax_row_f32(scores + row * Sk, scale, mp, scores + row * Sk, Sk);
      }
      (void)Sq;
    });
  }

  struct Plan {
    dnnl::matmul prim;
    memory::desc a, b, c;
    size_t scratch = 0;
    bool bf16 = false;  // precision=bf16: both operands converted first
    math::Bf16Operand a_bf16, b_bf16;
  };

  // c (view) = a (view) x b (view), batched over the leading dims.
  void product(const View& a, const float* ab, const View& b, const float* bb, const View& c, float* cb, int threads,
               int which) {
    const size_t r = a.dims.size();
    threads = math::threads_for_work(2.0 * static_cast<double>(math::numel(c.dims)) * static_cast<double>(a.dims[r - 1]),
                                     threads);
    math::set_num_threads(threads);
    std::vector<int64_t> key{which, threads};
    for (const View* v : {&a, &b, &c}) {
      key.insert(key.end(), v->dims.begin(), v->dims.end());
      key.insert(key.end(), v->strides.begin(), v->strides.end());
    }
    std::shared_ptr<Plan> plan;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) {
        plan = it->second;
      } else {
        plan = std::make_shared<Plan>();
        plan->a = math::strided_desc(a.dims, a.strides);
        plan->b = math::strided_desc(b.dims, b.strides);
        plan->c = math::strided_desc(c.dims, c.strides);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        math::set_num_threads(threads);
        dnnl::matmul::primitive_desc pd;
        if (bf16_) {
          try {
            plan->a_bf16.prepare(plan->a);
            plan->b_bf16.prepare(plan->b);
            pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->a_bf16.bf16, plan->b_bf16.bf16, plan->c), attr,
                                              math::cpu_engine());
            plan->bf16 = !math::is_reference_impl(pd);
          } catch (const dnnl::error&) {
          }
        }
        if (!plan->bf16)
          pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan->a, plan->b, plan->c), attr, math::cpu_engine());
        plan->prim = dnnl::matmul(pd);
        plan->scratch = pd.scratchpad_desc().get_size();
        if (plans_.size() >= 32) plans_.erase(plans_.begin());
        plans_.emplace(key, plan);
      }
    }
    dnnl::engine& eng = math::cpu_engine();
    dnnl::stream& s = math::thread_stream();
    // Slots 0 and 4: the scores live in slot 5 and the scratchpad in slot 2.
    const memory am = plan->bf16 ? plan->a_bf16.convert(ab + a.offset, 0, s)
                                 : memory(plan->a, eng, const_cast<float*>(ab + a.offset));
    const memory bm = plan->bf16 ? plan->b_bf16.convert(bb + b.offset, 4, s)
                                 : memory(plan->b, eng, const_cast<float*>(bb + b.offset));
    plan->prim.execute(s, {{DNNL_ARG_SRC, am},
                           {DNNL_ARG_WEIGHTS, bm},
                           {DNNL_ARG_DST, memory(plan->c, eng, cb + c.offset)},
                           {DNNL_ARG_SCRATCHPAD, math::scratchpad(plan->scratch)}});
    s.wait();
  }

  AttentionMatch m_;
  std::string name_;
  int default_threads_;
  bool adaptive_ = true;
  bool bf16_ = false;
  std::map<std::string, int> index_;
  int out_index_ = -1;
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans_;
};

#endif  // EPHOST_WITH_DNNL

class AttentionFusion : public Fusion {
 public:
  const char* name() const override { return "attention"; }
  std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const override {
    AttentionMatch m;
    return match_attention(anchor, ok, &m) ? m.nodes : std::vector<sdk::Node>{};
  }
  std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                              const KernelConfig& config) const override {
    AttentionMatch m;
    if (!match_attention(anchor, [](const sdk::Node&) { return true; }, &m))
      sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile attention " + group.name() + ": pattern not found");
#if defined(EPHOST_WITH_DNNL)
    return std::make_unique<AttentionGroup>(m, group, config);
#else
    (void)config;
    sdk::fail(EPHOST_NOT_IMPLEMENTED, "fused attention needs oneDNN");
#endif
  }
};

}  // namespace

const Fusion& attention_fusion() {
  static const AttentionFusion f;
  return f;
}

}  // namespace ephost::cpu::fusion
