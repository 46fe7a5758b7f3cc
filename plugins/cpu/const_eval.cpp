#include "const_eval.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "math/narrow_types.h"
#include "math/numeric_cast.h"
#include "math/quantize.h"
#include "math/slice.h"

namespace ephost::cpu {

sdk::Tensor OwnedTensor::view() const {
  view_.elem_type = elem_type;
  view_.rank = shape.size();
  view_.shape = shape.data();
  view_.data = data.empty() ? static_cast<const void*>(this) : static_cast<const void*>(data.data());
  return sdk::Tensor(view_);
}

namespace {

// ---- the registry of folded values ------------------------------------------------------------------

// Keyed by value handle. A handle's address can be reused once the host frees the value (a graph
// edited after an earlier get_capability, a session gone while another provider lives on), so each
// entry keeps the value's name and its owner: a lookup answers only for a value of the same name, and
// an owner's unregistering never erases what another owner registered at a reused address.
struct Registered {
  std::string name;
  const void* owner = nullptr;
  std::shared_ptr<OwnedTensor> tensor;
};
struct Registry {
  std::mutex mu;
  std::unordered_map<const EphostValueInfo*, Registered> values;
  std::map<const void*, std::vector<const EphostValueInfo*>> by_owner;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: providers may unregister during exit
  return *r;
}

std::shared_ptr<OwnedTensor> registered(const sdk::Value& v) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.values.find(v.get());
  if (it == r.values.end() || it->second.name != v.name()) return nullptr;
  return it->second.tensor;
}

// The enclosing graph's value that an outer-scope value `v` of `graph` refers to.
sdk::Value outer_value(const sdk::Graph& graph, const std::string& name) {
  const sdk::Node parent = graph.parent_node();
  if (!parent.valid()) return sdk::Value();
  const EphostHostApi& h = sdk::host();
  const size_t n = h.node_num_implicit_inputs(parent.get());
  for (size_t i = 0; i < n; ++i) {
    const sdk::Value v(h.node_implicit_input(parent.get(), i));
    if (v.valid() && v.name() == name) return v;
  }
  for (size_t i = 0; i < parent.num_inputs(); ++i)
    if (parent.has_input(i) && parent.input(i).name() == name) return parent.input(i);
  return sdk::Value();
}

sdk::Tensor resolve(const sdk::Value& v, const sdk::Graph& graph, int depth) {
  if (!v.valid() || depth > 16) return sdk::Tensor();
  if (v.is_constant()) return v.constant();
  if (auto t = registered(v)) return t->view();
  if (sdk::host().value_is_outer_scope(v.get()) == 0 || !graph.valid()) return sdk::Tensor();
  const sdk::Value outer = outer_value(graph, v.name());
  if (!outer.valid()) return sdk::Tensor();
  const sdk::Node parent = graph.parent_node();
  return resolve(outer, parent.graph(), depth + 1);
}

// ---- evaluation ---------------------------------------------------------------------------------------

using Shape = std::vector<int64_t>;

std::shared_ptr<OwnedTensor> make(int32_t type, Shape shape) {
  auto t = std::make_shared<OwnedTensor>();
  t->elem_type = type;
  t->shape = std::move(shape);
  t->data.resize(static_cast<size_t>(sdk::element_count(t->shape)) * sdk::element_size(type));
  return t;
}

std::shared_ptr<OwnedTensor> copy_of(const sdk::Tensor& t) {
  auto o = make(t.elem_type(), t.shape());
  if (!o->data.empty()) std::memcpy(o->data.data(), t.raw(), o->data.size());
  return o;
}

std::vector<int64_t> ints(const sdk::Tensor& t) {
  if (t.elem_type() == EPHOST_ELEMENT_INT64) return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
  if (t.elem_type() == EPHOST_ELEMENT_INT32) return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.size());
  throw std::invalid_argument("expected int64 or int32");
}

int64_t norm_axis(int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) throw std::invalid_argument("axis out of range");
  return a < 0 ? a + rank : a;
}

bool movable(int32_t t) { return t != EPHOST_ELEMENT_STRING && t != EPHOST_ELEMENT_UNDEFINED && sdk::element_size(t) != 0; }

// y[i...] = x[begin + i * step ...] over `out`, elements of `es` bytes.
void strided_copy(const uint8_t* x, const Shape& in, const Shape& begin, const Shape& step, const Shape& out,
                  size_t es, uint8_t* y) {
  const size_t r = in.size();
  Shape st(r, 1);
  for (size_t i = r; i-- > 1;) st[i - 1] = st[i] * in[i];
  const int64_t n = sdk::element_count(out);
  Shape idx(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t a = 0; a < r; ++a) off += (begin[a] + idx[a] * step[a]) * st[a];
    std::memcpy(y + static_cast<size_t>(k) * es, x + static_cast<size_t>(off) * es, es);
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
}

template <typename To>
void cast_into(const sdk::Tensor& x, To* y) {
  const int64_t n = x.size();
  auto run = [&](auto tag) {
    using From = decltype(tag);
    const From* p = x.data<From>();
    for (int64_t i = 0; i < n; ++i) y[i] = math::numeric_cast<To>(p[i]);  // as the Cast kernel converts
  };
  if (!dispatch(Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>{},
                x.elem_type(), run))
    throw std::invalid_argument("unsupported cast");
}

// Inputs of a node as constants (absent optional inputs stay absent).
using Inputs = std::vector<sdk::Tensor>;

// DequantizeLinear of a constant (quantized weights): folded so that Conv, MatMul and Gemm see float
// weights they pack once, instead of dequantizing them again on every run. Per-tensor and per-axis,
// computed by the same loops as the kernel (bit-identical); the blocked form (opset 21) is left to run.
std::shared_ptr<OwnedTensor> dequantize_constant(const sdk::Node& n, const Inputs& in) {
  if (in.size() < 2 || !in[0].present() || !in[1].present()) throw std::invalid_argument("missing input");
  if (n.attr_int("block_size", 0) != 0) throw std::invalid_argument("blocked dequantization is not folded");
  const sdk::Tensor &x = in[0], &scale = in[1];
  const sdk::Tensor zp = in.size() > 2 ? in[2] : sdk::Tensor();
  if (scale.elem_type() != EPHOST_ELEMENT_FLOAT) throw std::invalid_argument("unsupported scale type");
  if (zp.present() && (zp.elem_type() != x.elem_type() || zp.size() != scale.size()))
    throw std::invalid_argument("bad zero point");
  const Shape xs = x.shape();
  int64_t outer = 1, channels = 1, inner = x.size();
  if (scale.size() != 1) {
    if (scale.shape().size() != 1) throw std::invalid_argument("bad scale");
    const int64_t axis = norm_axis(n.attr_int("axis", 1), static_cast<int64_t>(xs.size()));
    if (xs[axis] != scale.size()) throw std::invalid_argument("bad scale");
    outer = sdk::element_count(Shape(xs.begin(), xs.begin() + axis));
    channels = xs[axis];
    inner = sdk::element_count(Shape(xs.begin() + axis + 1, xs.end()));
  }
  auto y = make(EPHOST_ELEMENT_FLOAT, xs);
  float* py = reinterpret_cast<float*>(y->data.data());
  const float* s = scale.data<float>();
  const bool ok = dispatch(Types<uint8_t, int8_t, uint16_t, int16_t, int32_t>{}, x.elem_type(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* px = x.data<Q>();
    const Q* z = zp.present() ? zp.data<Q>() : nullptr;
    for (int64_t r = 0; r < outer * channels; ++r) {
      const int64_t k = r % channels;
      math::dequantize_linear(px + r * inner, s[k], z ? z[k] : Q{0}, py + r * inner, inner);
    }
  });
  if (!ok) throw std::invalid_argument("unsupported type");
  return y;
}

std::shared_ptr<OwnedTensor> evaluate(const sdk::Node& n, const Inputs& in) {
  const std::string op = n.op_type();
  const int64_t opset = n.opset();
  auto need = [&](size_t i) -> const sdk::Tensor& {
    if (i >= in.size() || !in[i].present()) throw std::invalid_argument("missing input");
    return in[i];
  };
  if (op == "Constant") {
    if (n.has_attr("value")) return copy_of(n.attr_tensor("value"));
    if (n.has_attr("value_float")) {
      auto t = make(EPHOST_ELEMENT_FLOAT, {});
      const float v = n.attr_float("value_float", 0.f);
      std::memcpy(t->data.data(), &v, sizeof v);
      return t;
    }
    if (n.has_attr("value_int")) {
      auto t = make(EPHOST_ELEMENT_INT64, {});
      const int64_t v = n.attr_int("value_int", 0);
      std::memcpy(t->data.data(), &v, sizeof v);
      return t;
    }
    if (n.has_attr("value_floats")) {
      const std::vector<float> v = n.attr_floats("value_floats");
      auto t = make(EPHOST_ELEMENT_FLOAT, {static_cast<int64_t>(v.size())});
      if (!v.empty()) std::memcpy(t->data.data(), v.data(), v.size() * sizeof(float));
      return t;
    }
    if (n.has_attr("value_ints")) {
      const std::vector<int64_t> v = n.attr_ints("value_ints");
      auto t = make(EPHOST_ELEMENT_INT64, {static_cast<int64_t>(v.size())});
      if (!v.empty()) std::memcpy(t->data.data(), v.data(), v.size() * sizeof(int64_t));
      return t;
    }
    throw std::invalid_argument("unsupported Constant");
  }
  if (op == "DequantizeLinear") return dequantize_constant(n, in);
  const sdk::Tensor& x = need(0);
  if (!movable(x.elem_type())) throw std::invalid_argument("unsupported type");
  const size_t es = sdk::element_size(x.elem_type());
  const Shape xs = x.shape();
  const int64_t r = static_cast<int64_t>(xs.size());
  auto reshaped = [&](Shape s) {
    if (sdk::element_count(s) != x.size()) throw std::invalid_argument("bad reshape");
    auto t = make(x.elem_type(), std::move(s));
    if (!t->data.empty()) std::memcpy(t->data.data(), x.raw(), t->data.size());
    return t;
  };
  if (op == "Identity") return reshaped(xs);
  if (op == "Unsqueeze") {
    const Shape axes = opset >= 13 ? ints(need(1)) : n.attr_ints("axes");
    const int64_t out_rank = r + static_cast<int64_t>(axes.size());
    Shape out(static_cast<size_t>(out_rank), -1);
    for (int64_t a : axes) {
      const int64_t k = norm_axis(a, out_rank);
      if (out[k] != -1) throw std::invalid_argument("duplicate axis");
      out[k] = 1;
    }
    size_t j = 0;
    for (int64_t& d : out)
      if (d == -1) d = xs[j++];
    return reshaped(out);
  }
  if (op == "Squeeze") {
    Shape axes = opset >= 13 ? (in.size() > 1 && in[1].present() ? ints(in[1]) : Shape{}) : n.attr_ints("axes");
    std::vector<bool> drop(xs.size(), false);
    if (axes.empty()) {
      for (size_t i = 0; i < xs.size(); ++i) drop[i] = xs[i] == 1;
    } else {
      for (int64_t a : axes) {
        const int64_t k = norm_axis(a, r);
        if (xs[k] != 1) throw std::invalid_argument("squeezing a dim that is not 1");
        drop[k] = true;
      }
    }
    Shape out;
    for (size_t i = 0; i < xs.size(); ++i)
      if (!drop[i]) out.push_back(xs[i]);
    return reshaped(out);
  }
  if (op == "Reshape") {
    if (opset < 5) throw std::invalid_argument("old Reshape");
    Shape s = ints(need(1));
    const bool allowzero = n.attr_int("allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == 0 && !allowzero) {
        if (i >= xs.size()) throw std::invalid_argument("bad reshape");
        s[i] = xs[i];
      }
      if (s[i] == -1) {
        if (infer >= 0) throw std::invalid_argument("two -1");
        infer = static_cast<int64_t>(i);
      } else {
        known *= s[i];
      }
    }
    if (infer >= 0) {
      if (known == 0) throw std::invalid_argument("bad reshape");
      s[infer] = x.size() / known;
    }
    return reshaped(s);
  }
  if (op == "Flatten") {
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) throw std::invalid_argument("bad axis");
    int64_t a = 1;
    for (int64_t i = 0; i < axis; ++i) a *= xs[i];
    return reshaped({a, a == 0 ? 0 : x.size() / std::max<int64_t>(a, 1)});
  }
  if (op == "Concat") {
    const int64_t axis = norm_axis(n.attr_int("axis", 0), r);
    Shape out = xs;
    out[axis] = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const sdk::Tensor& t = need(i);
      if (t.elem_type() != x.elem_type() || static_cast<int64_t>(t.rank()) != r) throw std::invalid_argument("bad concat");
      for (int64_t k = 0; k < r; ++k)
        if (k != axis && t.dim(static_cast<size_t>(k)) != xs[k]) throw std::invalid_argument("bad concat");
      out[axis] += t.dim(static_cast<size_t>(axis));
    }
    auto y = make(x.elem_type(), out);
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= xs[k];
    int64_t inner = 1;
    for (int64_t k = axis + 1; k < r; ++k) inner *= xs[k];
    uint8_t* p = y->data.data();
    for (int64_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < in.size(); ++i) {
        const size_t bytes = static_cast<size_t>(in[i].dim(static_cast<size_t>(axis)) * inner) * es;
        std::memcpy(p, static_cast<const uint8_t*>(in[i].raw()) + static_cast<size_t>(o) * bytes, bytes);
        p += bytes;
      }
    return y;
  }
  if (op == "Slice") {
    Shape starts, ends, axes, steps;
    if (opset < 10) {
      starts = n.attr_ints("starts");
      ends = n.attr_ints("ends");
      axes = n.attr_ints("axes");
    } else {
      starts = ints(need(1));
      ends = ints(need(2));
      if (in.size() > 3 && in[3].present()) axes = ints(in[3]);
      if (in.size() > 4 && in[4].present()) steps = ints(in[4]);
    }
    const math::SliceWindow w = math::slice_window(xs, starts, ends, axes, steps);
    auto y = make(x.elem_type(), w.out);
    if (!y->data.empty())
      strided_copy(static_cast<const uint8_t*>(x.raw()), xs, w.begin, w.step, w.out, es, y->data.data());
    return y;
  }
  if (op == "Transpose") {
    Shape perm = n.attr_ints("perm");
    if (perm.empty())
      for (int64_t k = r; k-- > 0;) perm.push_back(k);
    if (static_cast<int64_t>(perm.size()) != r) throw std::invalid_argument("bad perm");
    Shape out(static_cast<size_t>(r)), st(static_cast<size_t>(r), 1), pst(static_cast<size_t>(r));
    for (int64_t k = r; k-- > 1;) st[k - 1] = st[k] * xs[k];
    for (int64_t k = 0; k < r; ++k) {
      out[k] = xs[norm_axis(perm[k], r)];
      pst[k] = st[norm_axis(perm[k], r)];
    }
    auto y = make(x.elem_type(), out);
    const int64_t total = x.size();
    Shape idx(static_cast<size_t>(r), 0);
    const uint8_t* src = static_cast<const uint8_t*>(x.raw());
    for (int64_t k = 0; k < total; ++k) {
      int64_t off = 0;
      for (int64_t a = 0; a < r; ++a) off += idx[a] * pst[a];
      std::memcpy(y->data.data() + static_cast<size_t>(k) * es, src + static_cast<size_t>(off) * es, es);
      for (int64_t a = r; a-- > 0;) {
        if (++idx[a] < out[a]) break;
        idx[a] = 0;
      }
    }
    return y;
  }
  if (op == "Gather") {
    const int64_t axis = norm_axis(n.attr_int("axis", 0), r);
    const sdk::Tensor& it = need(1);
    const Shape idx = ints(it);
    Shape out(xs.begin(), xs.begin() + axis);
    const Shape is = it.shape();
    out.insert(out.end(), is.begin(), is.end());
    out.insert(out.end(), xs.begin() + axis + 1, xs.end());
    auto y = make(x.elem_type(), out);
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= xs[k];
    for (int64_t k = axis + 1; k < r; ++k) inner *= xs[k];
    const size_t row = static_cast<size_t>(inner) * es;
    uint8_t* p = y->data.data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : idx) {
        const int64_t k = j < 0 ? j + xs[axis] : j;
        if (k < 0 || k >= xs[axis]) throw std::invalid_argument("index out of range");
        std::memcpy(p, static_cast<const uint8_t*>(x.raw()) + static_cast<size_t>(o * xs[axis] + k) * row, row);
        p += row;
      }
    return y;
  }
  if (op == "Cast") {
    const int32_t to = static_cast<int32_t>(n.attr_int("to", 0));
    auto y = make(to, xs);
    bool ok = dispatch(Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>{},
                       to, [&](auto tag) {
                         using T = decltype(tag);
                         cast_into<T>(x, reinterpret_cast<T*>(y->data.data()));
                       });
    if (!ok && to == EPHOST_ELEMENT_BOOL) {
      std::vector<double> tmp(static_cast<size_t>(x.size()));
      cast_into<double>(x, tmp.data());
      for (size_t i = 0; i < tmp.size(); ++i) y->data[i] = tmp[i] != 0.0;
      ok = true;
    }
    if (!ok) throw std::invalid_argument("unsupported cast");
    return y;
  }
  if (op == "Shape") {
    int64_t start = n.attr_int("start", 0), end = n.attr_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    auto y = make(EPHOST_ELEMENT_INT64, {end - start});
    std::memcpy(y->data.data(), xs.data() + start, static_cast<size_t>(end - start) * sizeof(int64_t));
    return y;
  }
  throw std::invalid_argument("not folded");
}

// The packed types (int4, uint4, int2, uint2, float4e2m1), which have no element size: the data-movement
// ops whose ONNX versions take them evaluate their codes as uint8, one per byte, and the result is packed
// again. (Cast of a packed constant is left to its kernel.)
std::shared_ptr<OwnedTensor> evaluate_packed(const sdk::Node& n, const Inputs& in) {
  static const std::set<std::string> moving = {"Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Transpose"};
  if (!moving.count(n.op_type())) throw std::invalid_argument("unsupported type");
  const int32_t type = in[0].elem_type();
  std::vector<std::shared_ptr<OwnedTensor>> unpacked;
  Inputs codes = in;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present() || in[i].elem_type() != type) continue;
    auto t = make(EPHOST_ELEMENT_UINT8, in[i].shape());
    math::narrow_unpack_codes(type, in[i].raw(), in[i].size(), t->data.data());
    codes[i] = t->view();
    unpacked.push_back(std::move(t));
  }
  const std::shared_ptr<OwnedTensor> moved = evaluate(n, codes);
  auto y = std::make_shared<OwnedTensor>();
  y->elem_type = type;
  y->shape = moved->shape;
  const int64_t count = sdk::element_count(y->shape);
  y->data.resize(EphostTensorDataSize(type, static_cast<size_t>(count)));
  math::narrow_pack_codes(type, moved->data.data(), count, y->data.data());
  return y;
}

// evaluate(), with the packed types through evaluate_packed.
std::shared_ptr<OwnedTensor> evaluate_any(const sdk::Node& n, const Inputs& in) {
  if (!in.empty() && in[0].present() && sdk::element_size(in[0].elem_type()) == 0 &&
      math::is_narrow_type(in[0].elem_type()))
    return evaluate_packed(n, in);
  return evaluate(n, in);
}

const std::set<std::string>& foldable_ops() {
  static const std::set<std::string> ops = {"Constant", "Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten",
                                            "Concat",   "Slice",    "Transpose", "Gather",  "Cast",    "Shape",
                                            "DequantizeLinear"};
  return ops;
}

// Folded values bigger than this stay computed at run time (a folded value is kept for the session).
constexpr size_t kMaxFoldedBytes = 64u << 20;

}  // namespace

sdk::Tensor constant_of(const sdk::Value& v) {
  if (!v.valid()) return sdk::Tensor();
  if (v.is_constant()) return v.constant();
  if (auto t = registered(v)) return t->view();
  if (sdk::host().value_is_outer_scope(v.get()) == 0) return sdk::Tensor();
  // The value's graph: the graph of a node that reads it.
  const std::vector<sdk::Node> readers = v.consumers();
  if (readers.empty()) return sdk::Tensor();
  const sdk::Graph graph = readers.front().graph();
  const sdk::Value outer = outer_value(graph, v.name());
  if (!outer.valid()) return sdk::Tensor();
  return resolve(outer, graph.parent_node().graph(), 1);
}

FoldedNodes fold_constants(const sdk::Graph& graph, const std::function<bool(const sdk::Node&)>& skip) {
  FoldedNodes out;
  std::unordered_map<std::string, std::shared_ptr<OwnedTensor>> folded;  // by value name
  for (const sdk::Node& n : graph.nodes()) {
    if (skip && skip(n)) continue;
    const std::string d = n.domain();
    if ((!d.empty() && d != "ai.onnx") || !foldable_ops().count(n.op_type())) continue;
    if (n.num_outputs() != 1 || !n.has_output(0)) continue;
    Inputs in;
    bool all = true;
    for (size_t i = 0; i < n.num_inputs() && all; ++i) {
      if (!n.has_input(i)) {
        in.emplace_back();
        continue;
      }
      const sdk::Value v = n.input(i);
      auto it = folded.find(v.name());
      if (it != folded.end()) {
        in.push_back(it->second->view());
        continue;
      }
      const sdk::Tensor t = constant_of(v);
      all = t.present() || (t.elem_type() != EPHOST_ELEMENT_UNDEFINED && t.size() == 0 && false);
      if (all) in.push_back(t);
    }
    if (!all) continue;
    // A Constant's value is its attribute: nothing to gain from folding one that only feeds a node the
    // plugin does not fold, unless that node is a subgraph's constant use; fold them all (one group).
    std::shared_ptr<OwnedTensor> y;
    try {
      y = evaluate_any(n, in);
    } catch (const std::exception&) {
      continue;
    }
    if (!y || y->data.size() > kMaxFoldedBytes) continue;
    folded[n.output(0).name()] = y;
    out.nodes.push_back(n);
    out.values.emplace_back(n.output(0).get(), y);
  }
  return out;
}

void register_constants(const void* owner, const FoldedNodes& f) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [v, t] : f.values) {
    r.values[v] = Registered{sdk::Value(v).name(), owner, t};
    r.by_owner[owner].push_back(v);
  }
}

void unregister_constants(const void* owner) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_owner.find(owner);
  if (it == r.by_owner.end()) return;
  for (const EphostValueInfo* v : it->second) {
    auto entry = r.values.find(v);
    if (entry != r.values.end() && entry->second.owner == owner) r.values.erase(entry);
  }
  r.by_owner.erase(it);
}

namespace {

class ConstantGroup : public sdk::CompiledGroup {
 public:
  explicit ConstantGroup(const sdk::Graph& group) : name_(group.name()) {
    for (size_t i = 0; i < group.num_outputs(); ++i) {
      const sdk::Value v = group.output(i);
      auto t = registered(v);
      if (!t) sdk::fail(EPHOST_NOT_IMPLEMENTED, "cpu cannot compile constant group " + name_ + ": '" + v.name() + "' was not folded");
      tensors_.push_back(t);
      if (sdk::host_has_values()) values_.push_back(sdk::OwnedValue::copy_of(t->view()));
    }
  }
  void compute(void*, sdk::KernelContext& ctx) override {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (!values_.empty()) {
        ctx.set_output(i, values_[i]);  // shared, not copied
        continue;
      }
      const OwnedTensor& t = *tensors_[i];
      void* y = ctx.output_raw(i, t.elem_type, t.shape);
      if (!t.data.empty()) std::memcpy(y, t.data.data(), t.data.size());
    }
  }

 private:
  std::string name_;
  std::vector<std::shared_ptr<OwnedTensor>> tensors_;
  std::vector<sdk::OwnedValue> values_;
};

}  // namespace

std::unique_ptr<sdk::CompiledGroup> compile_constant_group(const sdk::Graph& group) {
  return std::make_unique<ConstantGroup>(group);
}

}  // namespace ephost::cpu
