// Ops that pick or reorder slices by content or by per-batch lengths: Compress, Unique and
// ReverseSequence. Compress and ReverseSequence only copy, so they take any fixed-size type.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

class CompressKernel : public CpuKernel {
 public:
  CompressKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), has_axis_(node.has_attr("axis")), axis_(node.attr_int("axis", 0)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input"), cond = required(ctx, 1, "condition");
    expect_type(cond, {EPHOST_ELEMENT_BOOL}, "condition");
    if (cond.rank() != 1) fail("condition must be 1-D, found shape " + math::to_string(cond.shape()));
    const Shape xs = x.shape();
    // Without an axis the input is flattened first.
    const Shape view = has_axis_ ? xs : Shape{x.size()};
    const int64_t axis = math::normalize_axis(has_axis_ ? axis_ : 0, static_cast<int64_t>(view.size()));
    const int64_t n = view[axis], nc = cond.size();
    // A shorter condition drops the remaining slices; a longer one may only add false entries.
    const uint8_t* c = cond.data<uint8_t>();
    for (int64_t i = n; i < nc; ++i)
      if (c[i]) fail("condition selects index " + std::to_string(i) + " beyond the axis size " + std::to_string(n));
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < std::min(n, nc); ++i)
      if (c[i]) keep.push_back(i);
    Shape ys = view;
    ys[axis] = static_cast<int64_t>(keep.size());
    const size_t es = sdk::element_size(x.elem_type());
    const int64_t outer = math::numel(view, 0, axis);
    const size_t slice = static_cast<size_t>(math::numel(view, axis + 1, view.size())) * es;
    char* y = static_cast<char*>(ctx.output_raw(0, x.elem_type(), ys));
    const char* src = static_cast<const char*>(x.raw());
    const int64_t kept = static_cast<int64_t>(keep.size());
    if (slice == 0) return;
    math::parallel_for(outer, threads, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(kept * slice, 1)),
                       [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t k = 0; k < kept; ++k)
          std::memcpy(y + (o * kept + k) * slice, src + (o * n + keep[k]) * slice, slice);
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

using UniqueTypes = Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

// Unique over the flattened input or over slices along an axis (compared lexicographically, as
// numpy.unique does), with the first-occurrence indices, the inverse mapping and the counts.
class UniqueKernel : public CpuKernel {
 public:
  UniqueKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c),
        has_axis_(node.has_attr("axis")),
        axis_(node.attr_int("axis", 0)),
        sorted_(node.attr_int("sorted", 1) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const bool ok = dispatch(UniqueTypes{}, x.elem_type(), [&](auto tag) { unique<decltype(tag)>(ctx, x); });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    (void)threads;
  }

 private:
  template <typename T>
  void unique(sdk::KernelContext& ctx, const sdk::Tensor& x) {
    const Shape xs = x.shape();
    const Shape view = has_axis_ ? xs : Shape{x.size()};
    const int64_t axis = math::normalize_axis(has_axis_ ? axis_ : 0, static_cast<int64_t>(view.size()));
    const int64_t n = view[axis], outer = math::numel(view, 0, axis);
    const int64_t inner = math::numel(view, axis + 1, view.size());
    const T* px = x.data<T>();
    // NaNs sort last and equal each other (as numpy.unique), which keeps the order strict and weak.
    auto less = [](T a, T b) {
      if constexpr (std::is_floating_point_v<T>) return !std::isnan(a) && (std::isnan(b) || a < b);
      else return a < b;
    };
    // Slice s holds px[(o * n + s) * inner + i] for o < outer, i < inner, in that order.
    auto compare = [&](int64_t a, int64_t b) -> int {
      for (int64_t o = 0; o < outer; ++o) {
        const T* ra = px + (o * n + a) * inner;
        const T* rb = px + (o * n + b) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          if (less(ra[i], rb[i])) return -1;
          if (less(rb[i], ra[i])) return 1;
        }
      }
      return 0;
    };
    // Stable sort keeps equal slices in input order, so each group starts at its first occurrence.
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    std::vector<int64_t> first, counts;  // per group, in sorted order
    std::vector<int64_t> group_of(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || compare(order[k - 1], order[k]) != 0) {
        first.push_back(order[k]);
        counts.push_back(0);
      }
      group_of[order[k]] = static_cast<int64_t>(first.size()) - 1;
      ++counts.back();
    }
    const int64_t groups = static_cast<int64_t>(first.size());
    // Output position of each group: sorted order, or order of first occurrence.
    std::vector<int64_t> rank(static_cast<size_t>(groups));
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(rank);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t p = 0; p < groups; ++p) rank[by_first[p]] = p;
    }
    Shape ys = view;
    ys[axis] = groups;
    T* y = ctx.output<T>(0, ys, x.elem_type());
    std::vector<int64_t> first_out(static_cast<size_t>(groups)), counts_out(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t p = rank[g];
      first_out[p] = first[g];
      counts_out[p] = counts[g];
      for (int64_t o = 0; o < outer; ++o)
        std::copy(px + (o * n + first[g]) * inner, px + (o * n + first[g] + 1) * inner, y + (o * groups + p) * inner);
    }
    if (output_wanted(1)) std::copy(first_out.begin(), first_out.end(), ctx.output<int64_t>(1, {groups}));
    if (output_wanted(2)) {
      int64_t* inv = ctx.output<int64_t>(2, {n});
      for (int64_t s = 0; s < n; ++s) inv[s] = rank[group_of[s]];
    }
    if (output_wanted(3)) std::copy(counts_out.begin(), counts_out.end(), ctx.output<int64_t>(3, {groups}));
  }

  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

class ReverseSequenceKernel : public CpuKernel {
 public:
  ReverseSequenceKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), time_axis_(node.attr_int("time_axis", 0)), batch_axis_(node.attr_int("batch_axis", 1)) {
    if (!((time_axis_ == 0 && batch_axis_ == 1) || (time_axis_ == 1 && batch_axis_ == 0)))
      fail_node(node, "time_axis and batch_axis must be 0 and 1 in some order");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input"), lens_t = required(ctx, 1, "sequence_lens");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("input must have rank >= 2, found shape " + math::to_string(xs));
    const int64_t steps = xs[time_axis_], batch = xs[batch_axis_];
    const std::vector<int64_t> lens = ints_of(lens_t, "sequence_lens");
    if (static_cast<int64_t>(lens.size()) != batch)
      fail("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(batch));
    for (int64_t l : lens)
      if (l < 0 || l > steps) fail("sequence length " + std::to_string(l) + " is outside [0, " + std::to_string(steps) + "]");
    const size_t slice = static_cast<size_t>(math::numel(xs, 2, xs.size())) * sdk::element_size(x.elem_type());
    char* y = static_cast<char*>(ctx.output_raw(0, x.elem_type(), xs));
    const char* src = static_cast<const char*>(x.raw());
    auto offset = [&](int64_t t, int64_t b) {
      return static_cast<size_t>(time_axis_ == 0 ? t * batch + b : b * steps + t) * slice;
    };
    if (slice == 0) return;
    math::parallel_for(batch, threads, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(steps * slice, 1)),
                       [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
          std::memcpy(y + offset(t, b), src + offset(from, b), slice);
        }
    });
  }

 private:
  int64_t time_axis_, batch_axis_;
};

}  // namespace

void register_selection_kernels(KernelRegistry& r) {
  const SupportCheck any = any_types();
  r.add("Compress", 9, 17, any, make_factory<CompressKernel>());
  r.add("Unique", 11, 17, inputs_of(UniqueTypes::ids()), make_factory<UniqueKernel>());
  r.add("ReverseSequence", 10, 17, any, make_factory<ReverseSequenceKernel>());
}

}  // namespace ephost::cpu
