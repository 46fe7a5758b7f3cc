// Einsum, general: each operand first loses its repeated labels (diagonal) and the labels nothing
// else uses (summed); operands are then contracted left to right, each pair as one batched matrix
// product over [shared kept labels] x [own labels] x [summed shared labels], and the result is
// transposed into the output order. Float products run on oneDNN (math::MatMulRunner).
#include <algorithm>
#include <memory>
#include <type_traits>

#include "kernel_registry.h"
#include "math/batched_gemm.h"
#include "math/einsum.h"
#include "math/matmul.h"
#include "math/reduce.h"
#include "math/strided.h"

#include "ephost/sdk/scratch.hpp"

namespace ephost::cpu {

namespace {

// An intermediate value: contiguous data with one distinct label per axis.
template <typename T>
struct Operand {
  std::vector<T> storage;  // owns the data unless it still points at an input
  const T* data = nullptr;
  Shape dims;
  std::vector<int> labels;

  void own(std::vector<T>&& v) {
    storage = std::move(v);
    data = storage.data();
  }
  int axis_of(int label) const {
    auto it = std::find(labels.begin(), labels.end(), label);
    return it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
  }
};

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

class EinsumKernel : public CpuKernel {
 public:
  EinsumKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), equation_(node.attr_string("equation", "")) {
    if (equation_.empty()) fail_node(node, "attribute equation is required");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const size_t n = ctx.num_inputs();
    if (n == 0) fail("needs at least one input");
    std::vector<sdk::Tensor> in;
    std::vector<int64_t> ranks;
    for (size_t i = 0; i < n; ++i) {
      in.push_back(required(ctx, i, "Inputs"));
      if (in[i].elem_type() != in[0].elem_type()) fail("all inputs must have the same type");
      ranks.push_back(static_cast<int64_t>(in[i].rank()));
    }
    const math::EinsumSpec spec = math::parse_einsum(equation_, ranks);
    const bool ok = dispatch(NumericTypes{}, in[0].elem_type(), [&](auto tag) {
      evaluate<decltype(tag)>(ctx, in, spec, threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(in[0].elem_type()));
  }

 private:
  template <typename T>
  void evaluate(sdk::KernelContext& ctx, const std::vector<sdk::Tensor>& in, const math::EinsumSpec& spec, int threads) {
    // Each label's extent: equal wherever it appears, or 1 there (broadcast).
    std::vector<int64_t> extent(static_cast<size_t>(spec.labels), 1);
    for (size_t i = 0; i < in.size(); ++i)
      for (size_t a = 0; a < spec.inputs[i].size(); ++a) {
        const int64_t d = in[i].dim(a);
        int64_t& e = extent[spec.inputs[i][a]];
        if (d != 1 && e != 1 && d != e)
          fail("input " + std::to_string(i) + " of shape " + math::to_string(in[i].shape()) +
               " does not match the other uses of its labels in '" + equation_ + "'");
        if (d != 1) e = d;
      }

    std::vector<Operand<T>> ops;
    for (size_t i = 0; i < in.size(); ++i) ops.push_back(prepare<T>(in[i], i, spec, threads));
    while (ops.size() > 1) {
      // Labels still needed after this contraction: the output's and those of later operands.
      std::vector<int> needed = spec.output;
      for (size_t k = 2; k < ops.size(); ++k) needed.insert(needed.end(), ops[k].labels.begin(), ops[k].labels.end());
      Operand<T> r = contract(ops[0], ops[1], needed, extent, threads);
      ops.erase(ops.begin(), ops.begin() + 2);
      ops.insert(ops.begin(), std::move(r));
    }

    // The result holds exactly the output labels; put them in order.
    const Operand<T>& res = ops[0];
    Shape out_dims;
    std::vector<int64_t> strides;
    const Shape st = math::strides_of(res.dims);
    for (int l : spec.output) {
      const int a = res.axis_of(l);
      out_dims.push_back(a < 0 ? 1 : res.dims[a]);
      strides.push_back(a < 0 ? 0 : st[a]);
    }
    T* y = ctx.output<T>(0, out_dims, in[0].elem_type());
    math::strided_copy(res.data, out_dims, strides, y, threads);
  }

  // Input i with repeated labels reduced to their diagonal and labels used nowhere else summed.
  template <typename T>
  Operand<T> prepare(const sdk::Tensor& t, size_t i, const math::EinsumSpec& spec, int threads) {
    const std::vector<int>& labels = spec.inputs[i];
    const Shape dims = t.shape(), st = math::strides_of(dims);
    Operand<T> op;
    op.data = t.data<T>();
    std::vector<int64_t> strides;
    for (size_t a = 0; a < labels.size(); ++a) {
      const int at = op.axis_of(labels[a]);
      if (at < 0) {
        op.labels.push_back(labels[a]);
        op.dims.push_back(dims[a]);
        strides.push_back(st[a]);
      } else {
        if (op.dims[at] != dims[a])
          fail("label repeated in input " + std::to_string(i) + " spans axes of different sizes " + math::to_string(dims));
        strides[at] += st[a];  // walking the diagonal
      }
    }
    if (op.labels.size() != labels.size()) {
      std::vector<T> diag(static_cast<size_t>(math::numel(op.dims)));
      math::strided_copy(op.data, op.dims, strides, diag.data(), threads);
      op.own(std::move(diag));
    }
    // Sum the labels only this operand has and the output drops.
    std::vector<int64_t> axes;
    std::vector<int> kept_labels;
    for (size_t a = 0; a < op.labels.size(); ++a) {
      const int l = op.labels[a];
      bool elsewhere = contains(spec.output, l);
      for (size_t k = 0; k < spec.inputs.size() && !elsewhere; ++k) elsewhere = k != i && contains(spec.inputs[k], l);
      if (elsewhere) kept_labels.push_back(l);
      else axes.push_back(static_cast<int64_t>(a));
    }
    if (!axes.empty()) {
      const Shape kept = math::reduce_shape(op.dims, axes, false);
      std::vector<T> sum(static_cast<size_t>(math::numel(kept)));
      reduce_sum(op.data, op.dims, axes, sum.data(), threads);
      op.own(std::move(sum));
      op.dims = kept;
      op.labels = kept_labels;
    }
    return op;
  }

  template <typename T>
  static void reduce_sum(const T* x, const Shape& dims, const std::vector<int64_t>& axes, T* y, int threads) {
    const math::ReducePlan plan = math::plan_reduce(dims, axes);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    math::reduce(x, plan, y, Acc(0), [](Acc a, T v) { return static_cast<Acc>(a + static_cast<Acc>(v)); },
                 [](Acc a, int64_t) { return static_cast<T>(a); }, threads);
  }

  // Copies `op` into the label order `order` at the labels' full extents (size-1 axes broadcast);
  // returns op.data itself when that is already the layout.
  template <typename T>
  const T* arrange(const Operand<T>& op, const std::vector<int>& order, const std::vector<int64_t>& extent,
                   std::vector<T>& buffer, int threads) {
    const Shape st = math::strides_of(op.dims);
    Shape dims;
    std::vector<int64_t> strides;
    bool same = order.size() == op.labels.size();
    for (size_t k = 0; k < order.size(); ++k) {
      const int a = op.axis_of(order[k]);
      const int64_t size = extent[order[k]];
      const bool broadcast = op.dims[a] != size;
      dims.push_back(size);
      strides.push_back(broadcast ? 0 : st[a]);
      same = same && a == static_cast<int>(k) && !broadcast;
    }
    if (same) return op.data;
    buffer = sdk::scratch_vector<T>(dims, "Einsum's broadcast operand");
    math::strided_copy(op.data, dims, strides, buffer.data(), threads);
    return buffer.data();
  }

  template <typename T>
  Operand<T> contract(const Operand<T>& a, const Operand<T>& b, const std::vector<int>& needed,
                      const std::vector<int64_t>& extent, int threads) {
    std::vector<int> batch, a_only, b_only, summed;
    for (int l : a.labels) {
      if (!contains(b.labels, l)) a_only.push_back(l);
      else if (contains(needed, l)) batch.push_back(l);
      else summed.push_back(l);
    }
    for (int l : b.labels)
      if (!contains(a.labels, l)) b_only.push_back(l);
    // Extents may come from other operands (broadcast), so a product may exceed every input: checked.
    auto product = [&](const std::vector<int>& ls) {
      std::vector<int64_t> sizes;
      for (int l : ls) sizes.push_back(extent[l]);
      return static_cast<int64_t>(sdk::scratch_bytes(sizes, 1, "an Einsum intermediate", 0));
    };
    const int64_t B = product(batch), M = product(a_only), K = product(summed), N = product(b_only);
    std::vector<int> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), a_only.begin(), a_only.end());
    a_order.insert(a_order.end(), summed.begin(), summed.end());
    b_order.insert(b_order.end(), summed.begin(), summed.end());
    b_order.insert(b_order.end(), b_only.begin(), b_only.end());
    std::vector<T> abuf, bbuf;
    const T* pa = arrange(a, a_order, extent, abuf, threads);
    const T* pb = arrange(b, b_order, extent, bbuf, threads);

    Operand<T> r;
    r.labels = batch;
    r.labels.insert(r.labels.end(), a_only.begin(), a_only.end());
    r.labels.insert(r.labels.end(), b_only.begin(), b_only.end());
    for (int l : r.labels) r.dims.push_back(extent[l]);
    // An intermediate product may be larger than every input and the output ("a,b,c->abc" builds a x b
    // first): a working buffer under the host's limit.
    std::vector<T> out = sdk::scratch_vector<T>({B, M, N}, "Einsum's intermediate product");
    if (!out.empty()) {
      if constexpr (std::is_same_v<T, float>) {
        matmul_.run(pa, {B, M, K}, pb, {B, K, N}, out.data(), threads);
      } else {
        math::batched_gemm(pa, pb, out.data(), B, M, K, N, threads);
      }
    }
    r.own(std::move(out));
    return r;
  }

  std::string equation_;
  math::MatMulRunner matmul_;
};

}  // namespace

void register_einsum_kernels(KernelRegistry& r) {
  r.add("Einsum", 12, 17,
        [](const sdk::Node& n) {
          for (size_t i = 0; i < n.num_inputs(); ++i)
            if (!input_type_in(n, i, NumericTypes::ids())) return false;
          return true;
        },
        make_factory<EinsumKernel>());
}

}  // namespace ephost::cpu
