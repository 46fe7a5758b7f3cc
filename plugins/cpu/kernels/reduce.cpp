// Reduce* ops over any axes, and ArgMax / ArgMin.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernel_registry.h"
#include "math/numeric_cast.h"
#include "math/reduce.h"
#include "math/wrapping.h"

namespace ephost::cpu {

namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

class ReduceKernel : public CpuKernel {
 public:
  ReduceKernel(const sdk::Node& node, const KernelConfig& c, Red kind, int64_t axes_input_since)
      : CpuKernel(node, c), kind_(kind), keepdims_(node.attr_int("keepdims", 1) != 0),
        noop_(node.attr_int("noop_with_empty_axes", 0) != 0), axes_from_input_(node.opset() >= axes_input_since) {
    if (!axes_from_input_) attr_axes_ = node.attr_ints("axes");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    Shape axes = attr_axes_;
    if (axes_from_input_) {
      const sdk::Tensor a = ctx.input(1);
      if (a.present()) axes = ints_of(a, "axes");
    }
    bool identity = false;
    if (axes.empty()) {
      if (axes_from_input_ && noop_) identity = true;
      for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    for (int64_t& a : axes) a = math::normalize_axis(a, r);
    if (identity) {
      // noop_with_empty_axes: the input unchanged (not passed through the L1/L2/log/square of the op).
      if (!is_movable_type(x.elem_type())) fail(std::string("unsupported type ") + type_name(x.elem_type()));
      void* y = ctx.output_raw(0, x.elem_type(), in);
      if (x.size() > 0) std::memcpy(y, x.raw(), static_cast<size_t>(x.size()) * sdk::element_size(x.elem_type()));
      return;
    }
    const Shape out = math::reduce_shape(in, axes, keepdims_);
    const math::ReducePlan plan = math::plan_reduce(in, axes);
    if (x.elem_type() == EPHOST_ELEMENT_BOOL) {
      // Opset 20's ReduceMax and ReduceMin on bool: any true, all true (an empty reduction gives false
      // and true, the identities of or and and).
      if (kind_ != Red::kMax && kind_ != Red::kMin) fail("bool data is only reduced by ReduceMax and ReduceMin");
      const uint8_t* px = static_cast<const uint8_t*>(x.raw());
      bool* y = ctx.output<bool>(0, out);
      if (kind_ == Red::kMax)
        math::reduce(px, plan, y, uint8_t(0), [](uint8_t a, uint8_t v) { return uint8_t(a | (v != 0)); },
                     [](uint8_t a, int64_t) { return a != 0; }, threads);
      else
        math::reduce(px, plan, y, uint8_t(1), [](uint8_t a, uint8_t v) { return uint8_t(a & (v != 0)); },
                     [](uint8_t a, int64_t) { return a != 0; }, threads);
      return;
    }
    const bool ok = dispatch(Types<float, double, int32_t, int64_t, uint32_t, uint64_t, int8_t, uint8_t>{}, x.elem_type(),
                             [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, out);
      // Sums accumulate in the element type (as ONNX Runtime), integers wrapping (math/wrapping.h); the
      // log/sqrt family in double, converted back as Cast converts (math/numeric_cast.h: an integer
      // output of an infinite log-sum-exp saturates instead of being an undefined cast).
      using Acc = T;
      switch (kind_) {
        case Red::kSum:
          math::reduce(px, plan, y, Acc(0), [](Acc a, T v) { return math::wrapping_add(a, v); }, [](Acc a, int64_t) { return T(a); },
                       threads);
          break;
        case Red::kMean:
          math::reduce(px, plan, y, Acc(0), [](Acc a, T v) { return math::wrapping_add(a, v); },
                       [](Acc a, int64_t n) { return n ? T(a / static_cast<Acc>(n)) : T(std::numeric_limits<T>::quiet_NaN()); },
                       threads);
          break;
        case Red::kMax:
          math::reduce(px, plan, y, std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest(),
                       [](T a, T v) { return v > a ? v : a; }, [](T a, int64_t) { return a; }, threads);
          break;
        case Red::kMin:
          math::reduce(px, plan, y, std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max(),
                       [](T a, T v) { return v < a ? v : a; }, [](T a, int64_t) { return a; }, threads);
          break;
        case Red::kProd:
          math::reduce(px, plan, y, Acc(1), [](Acc a, T v) { return math::wrapping_mul(a, v); }, [](Acc a, int64_t) { return T(a); },
                       threads);
          break;
        case Red::kL1:
          math::reduce(px, plan, y, Acc(0), [](Acc a, T v) { return math::wrapping_add(a, v < T(0) ? math::wrapping_neg(v) : v); },
                       [](Acc a, int64_t) { return T(a); }, threads);
          break;
        case Red::kSumSquare:
          math::reduce(px, plan, y, Acc(0), [](Acc a, T v) { return math::wrapping_add(a, math::wrapping_mul(v, v)); },
                       [](Acc a, int64_t) { return T(a); }, threads);
          break;
        case Red::kL2:
          math::reduce(px, plan, y, 0.0, [](double a, T v) { return a + double(v) * double(v); },
                       [](double a, int64_t) { return math::numeric_cast<T>(std::sqrt(a)); }, threads);
          break;
        case Red::kLogSum:
          math::reduce(px, plan, y, 0.0, [](double a, T v) { return a + double(v); },
                       [](double a, int64_t) { return math::numeric_cast<T>(std::log(a)); }, threads);
          break;
        case Red::kLogSumExp:
          math::reduce(px, plan, y, 0.0, [](double a, T v) { return a + std::exp(double(v)); },
                       [](double a, int64_t) { return math::numeric_cast<T>(std::log(a)); }, threads);
          break;
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  Red kind_;
  bool keepdims_, noop_, axes_from_input_;
  Shape attr_axes_;
};

class ArgKernel : public CpuKernel {
 public:
  ArgKernel(const sdk::Node& node, const KernelConfig& c, bool is_max)
      : CpuKernel(node, c), max_(is_max), axis_(node.attr_int("axis", 0)), keepdims_(node.attr_int("keepdims", 1) != 0),
        last_(node.attr_int("select_last_index", 0) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "data");
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) fail("data must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    if (in[axis] == 0) fail("cannot take the arg" + std::string(max_ ? "max" : "min") + " of an empty axis");
    const Shape out = math::reduce_shape(in, {axis}, keepdims_);
    int64_t* y = ctx.output<int64_t>(0, out);
    const int64_t outer = math::numel(in, 0, axis), inner = math::numel(in, axis + 1, in.size());
    const bool ok = dispatch(Types<float, double, int32_t, int64_t, int8_t, uint8_t>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      math::arg_reduce(x.data<T>(), outer, in[axis], inner, max_, last_, y, threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  bool max_;
  int64_t axis_;
  bool keepdims_, last_;
};

// CumSum and CumProd: a running sum or product along one axis, inclusive or exclusive, forward or
// reversed, as ONNX defines them. Integers wrap as ONNX's reference does.
struct RunningSum {
  template <class T> static T identity() { return T(0); }
  template <class T> static T combine(T a, T b) { return math::wrapping_add(a, b); }
};
struct RunningProduct {
  template <class T> static T identity() { return T(1); }
  template <class T> static T combine(T a, T b) { return math::wrapping_mul(a, b); }
};

template <class Running>
class CumulativeKernel : public CpuKernel {
 public:
  CumulativeKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), exclusive_(node.attr_int("exclusive", 0) != 0), reverse_(node.attr_int("reverse", 0) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "x");
    const Shape s = x.shape();
    const int64_t r = static_cast<int64_t>(s.size());
    if (r == 0) fail("x must have rank >= 1");
    const std::vector<int64_t> a = ints_of(required(ctx, 1, "axis"), "axis");
    if (a.size() != 1) fail("axis must have exactly one element");
    const int64_t axis = math::normalize_axis(a[0], r);
    const int64_t outer = math::numel(s, 0, axis), n = s[axis], inner = math::numel(s, axis + 1, s.size());
    const bool ok = dispatch(Types<float, double, int32_t, int64_t, uint32_t, uint64_t>{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, s);
      const bool ex = exclusive_, rev = reverse_;
      math::parallel_for(outer, threads, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            T acc = Running::template identity<T>();
            for (int64_t jj = 0; jj < n; ++jj) {
              const int64_t j = rev ? n - 1 - jj : jj;
              const int64_t at = (o * n + j) * inner + i;
              if (ex) {
                y[at] = acc;
                acc = Running::combine(acc, px[at]);
              } else {
                acc = Running::combine(acc, px[at]);
                y[at] = acc;
              }
            }
          }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  bool exclusive_, reverse_;
};

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  const std::initializer_list<int32_t> types = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64,
                                                EPHOST_ELEMENT_UINT32, EPHOST_ELEMENT_UINT64, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT8};
  struct Entry {
    const char* op;
    Red kind;
    int64_t axes_input_since;  // opset in which `axes` moved from attribute to input
  };
  const Entry entries[] = {{"ReduceSum", Red::kSum, 13},        {"ReduceMean", Red::kMean, 18},
                           {"ReduceMax", Red::kMax, 18},        {"ReduceMin", Red::kMin, 18},
                           {"ReduceProd", Red::kProd, 18},      {"ReduceL1", Red::kL1, 18},
                           {"ReduceL2", Red::kL2, 18},          {"ReduceLogSum", Red::kLogSum, 18},
                           {"ReduceLogSumExp", Red::kLogSumExp, 18}, {"ReduceSumSquare", Red::kSumSquare, 18}};
  for (const Entry& e : entries) {
    const Red kind = e.kind;
    const int64_t since = e.axes_input_since;
    const bool bool_at_20 = kind == Red::kMax || kind == Red::kMin;
    r.add(e.op, 1, 18,  // axes an input from 18 (ReduceSum: 13); ReduceMax and ReduceMin take bool from 20
          [numeric = inputs_of(types), bool_at_20](const sdk::Node& n) {
            return numeric(n) ||
                   (bool_at_20 && n.opset() >= 20 && input_type_in(n, 0, {EPHOST_ELEMENT_BOOL}));
          },
          [kind, since](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<ReduceKernel>(n, c, kind, since);
          });
  }
  const auto cumulative_types = inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT32,
                                           EPHOST_ELEMENT_INT64, EPHOST_ELEMENT_UINT32, EPHOST_ELEMENT_UINT64});
  r.add("CumSum", 11, 17, cumulative_types, make_factory<CumulativeKernel<RunningSum>>());
  r.add("CumProd", 26, 26, cumulative_types, make_factory<CumulativeKernel<RunningProduct>>());
  for (bool is_max : {true, false})
    r.add(is_max ? "ArgMax" : "ArgMin", 1, 17, inputs_of(types),
          [is_max](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<ArgKernel>(n, c, is_max);
          });
}

}  // namespace ephost::cpu
