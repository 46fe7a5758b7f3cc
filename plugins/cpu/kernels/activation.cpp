// Unary elementwise ops (activations and math functions) and Clip.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernel_registry.h"
#include "math/fast_math.h"
#include "math/narrow_types.h"
#include "math/parallel.h"
#include "math/vec.h"
#include "math/wrapping.h"

namespace ephost::cpu {

namespace {

// Ops with a vectorised float range form `void f32(const float* x, float* y, int64_t n) const`.
template <typename Op, typename = void>
struct has_f32 : std::false_type {};
template <typename Op>
struct has_f32<Op, std::void_t<decltype(std::declval<const Op&>().f32(nullptr, nullptr, int64_t{}))>> : std::true_type {};

// Op::f32 called through a template, so that the call depends on the element type: clang checks a
// member call on a non-dependent object even in a discarded `if constexpr` branch.
template <typename Op, typename T>
void call_f32(const Op& op, const T* x, T* y, int64_t n) {
  op.f32(x, y, n);
}

template <typename Op, typename TypeList>
class UnaryKernel : public CpuKernel {
 public:
  UnaryKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), op_(node) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const bool ok = dispatch(TypeList{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, x.shape());
      const Op& op = op_;
      if constexpr (std::is_same_v<T, float> && has_f32<Op>::value) {
        // A contiguous loop in math/vec.h (AVX2 where the CPU has it), same values; fast enough per
        // byte to count as a pass (math::pass_grain). The scalar loops below keep the element grain.
        math::parallel_for(x.size(), threads, math::pass_grain(2 * sizeof(float)),
                           [&](int64_t i0, int64_t i1) { call_f32(op, px + i0, y + i0, i1 - i0); });
        return;
      }
      math::parallel_for(x.size(), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) y[i] = op(px[i]);
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  Op op_;
};

// Ops take the node so they can read their attributes once, at kernel creation.
#define EPHOST_STATELESS_OP(NAME, EXPR)              \
  struct NAME {                                      \
    explicit NAME(const sdk::Node&) {}               \
    template <typename T>                            \
    T operator()(T x) const {                        \
      return static_cast<T>(EXPR);                   \
    }                                                \
  };

struct ReluOp {
  explicit ReluOp(const sdk::Node&) {}
  template <typename T>
  T operator()(T x) const { return x > T(0) ? x : T(0); }
  void f32(const float* x, float* y, int64_t n) const { math::relu_f32(x, y, n); }
};
EPHOST_STATELESS_OP(BitwiseNotOp, ~x)
EPHOST_STATELESS_OP(NegOp, math::wrapping_neg(x))
EPHOST_STATELESS_OP(AbsOp, std::is_unsigned_v<T> ? x : (x < T(0) ? math::wrapping_neg(x) : x))
EPHOST_STATELESS_OP(SignOp, (x > T(0)) - (x < T(0)))
EPHOST_STATELESS_OP(TanhOp, std::tanh(x))
EPHOST_STATELESS_OP(ExpOp, std::exp(x))
EPHOST_STATELESS_OP(LogOp, std::log(x))
EPHOST_STATELESS_OP(SqrtOp, std::sqrt(x))
struct ErfOp {
  explicit ErfOp(const sdk::Node&) {}
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(std::erf(x));
  }
  void f32(const float* x, float* y, int64_t n) const { math::erf_f32(x, y, n); }
};
EPHOST_STATELESS_OP(FloorOp, std::floor(x))
EPHOST_STATELESS_OP(CeilOp, std::ceil(x))
EPHOST_STATELESS_OP(RoundOp, std::nearbyint(x))  // half to even in the default rounding mode
EPHOST_STATELESS_OP(ReciprocalOp, T(1) / x)
EPHOST_STATELESS_OP(SinOp, std::sin(x))
EPHOST_STATELESS_OP(CosOp, std::cos(x))
EPHOST_STATELESS_OP(SoftsignOp, x / (T(1) + std::abs(x)))
EPHOST_STATELESS_OP(TanOp, std::tan(x))
EPHOST_STATELESS_OP(AsinOp, std::asin(x))
EPHOST_STATELESS_OP(AcosOp, std::acos(x))
EPHOST_STATELESS_OP(AtanOp, std::atan(x))
EPHOST_STATELESS_OP(SinhOp, std::sinh(x))
EPHOST_STATELESS_OP(CoshOp, std::cosh(x))
EPHOST_STATELESS_OP(AsinhOp, std::asinh(x))
EPHOST_STATELESS_OP(AcoshOp, std::acosh(x))
EPHOST_STATELESS_OP(AtanhOp, std::atanh(x))
EPHOST_STATELESS_OP(MishOp, x * std::tanh(x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x))))
EPHOST_STATELESS_OP(SoftplusOp, x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
#undef EPHOST_STATELESS_OP

struct NotOp {
  explicit NotOp(const sdk::Node&) {}
  bool operator()(bool x) const { return !x; }
};

struct SigmoidOp {
  explicit SigmoidOp(const sdk::Node&) {}
  float operator()(float x) const { return math::fast_sigmoid(x); }
  double operator()(double x) const { return 1.0 / (1.0 + std::exp(-x)); }
  void f32(const float* x, float* y, int64_t n) const { math::sigmoid_f32(x, y, n); }
};

struct HardSigmoidOp {
  float alpha, beta;
  explicit HardSigmoidOp(const sdk::Node& n) : alpha(n.attr_float("alpha", 0.2f)), beta(n.attr_float("beta", 0.5f)) {}
  template <typename T>
  T operator()(T x) const {
    const T v = T(alpha) * x + T(beta);
    return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
  }
  void f32(const float* x, float* y, int64_t n) const { math::hard_sigmoid_f32(x, alpha, beta, y, n); }
};

struct HardSwishOp {
  explicit HardSwishOp(const sdk::Node&) {}
  template <typename T>
  T operator()(T x) const {
    const T v = x * T(1.0f / 6.0f) + T(0.5);
    return x * (v < T(0) ? T(0) : (v > T(1) ? T(1) : v));
  }
  void f32(const float* x, float* y, int64_t n) const { math::hard_swish_f32(x, y, n); }
};

struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const sdk::Node& n) : alpha(n.attr_float("alpha", 0.01f)) {}
  template <typename T>
  T operator()(T x) const { return x < T(0) ? T(alpha) * x : x; }
};

struct EluOp {
  float alpha;
  explicit EluOp(const sdk::Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T x) const { return x < T(0) ? T(alpha) * (std::exp(x) - T(1)) : x; }
};

struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const sdk::Node& n)
      : alpha(n.attr_float("alpha", 1.67326319217681884765625f)), gamma(n.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <typename T>
  T operator()(T x) const { return T(gamma) * (x <= T(0) ? T(alpha) * std::exp(x) - T(alpha) : x); }
};

struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const sdk::Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T x) const { return x > T(alpha) ? x : T(0); }
};

struct CeluOp {
  float alpha;
  explicit CeluOp(const sdk::Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T x) const {
    return std::max(T(0), x) + std::min(T(0), T(alpha) * (std::exp(x / T(alpha)) - T(1)));
  }
};

struct ShrinkOp {
  float bias, lambd;
  explicit ShrinkOp(const sdk::Node& n) : bias(n.attr_float("bias", 0.f)), lambd(n.attr_float("lambd", 0.5f)) {}
  template <typename T>
  T operator()(T x) const {
    const double v = static_cast<double>(x);
    if (v < -lambd) return static_cast<T>(v + bias);
    if (v > lambd) return static_cast<T>(v - bias);
    return T(0);
  }
};

struct GeluOp {
  bool tanh_approx;
  explicit GeluOp(const sdk::Node& n) : tanh_approx(n.attr_string("approximate", "none") == "tanh") {}
  template <typename T>
  T operator()(T x) const {
    if (tanh_approx) {
      const T k = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
  }
  void f32(const float* x, float* y, int64_t n) const {
    if (!tanh_approx) return math::gelu_erf_f32(x, y, n);
    // tanh approximation in three passes over cache-sized blocks: the cubic (a loop the compiler
    // vectorises), the vector tanh of math/vec.h (chosen per ISA tier), then 0.5 * x * (1 + t).
    // The block buffer keeps x intact when y is x (in-place chains).
    constexpr int64_t kBlock = 1024;
    alignas(64) float t[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      const float* xb = x + b;
      float* yb = y + b;
      for (int64_t i = 0; i < m; ++i) {
        const float v = xb[i];
        t[i] = 0.7978845608028654f * (v + 0.044715f * v * v * v);
      }
      math::tanh_f32(t, t, m);
      for (int64_t i = 0; i < m; ++i) yb[i] = 0.5f * xb[i] * (1.f + t[i]);
    }
  }
};

// IsNaN / IsInf: float in, bool out.
class FloatClassKernel : public CpuKernel {
 public:
  FloatClassKernel(const sdk::Node& node, const KernelConfig& c, bool inf)
      : CpuKernel(node, c), inf_(inf), pos_(node.attr_int("detect_positive", 1) != 0),
        neg_(node.attr_int("detect_negative", 1) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    if (is_float8(x.elem_type())) return run_float8(ctx, x, threads);
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      bool* y = ctx.output<bool>(0, x.shape());
      const bool inf = inf_, pos = pos_, neg = neg_;
      math::parallel_for(x.size(), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T v = px[i];
          y[i] = inf ? (std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg))) : std::isnan(v);
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  static bool is_float8(int32_t t) {
    return t == EPHOST_ELEMENT_FLOAT8E4M3FN || t == EPHOST_ELEMENT_FLOAT8E4M3FNUZ || t == EPHOST_ELEMENT_FLOAT8E5M2 ||
           t == EPHOST_ELEMENT_FLOAT8E5M2FNUZ;
  }

  // Opset 20's float8 inputs: one byte per element, so the answer for each of the 256 codes is decided
  // once (from the code's exact value) and looked up.
  void run_float8(sdk::KernelContext& ctx, const sdk::Tensor& x, int threads) {
    bool answer[256];
    for (int code = 0; code < 256; ++code) {
      const double v = math::narrow_decode_one(x.elem_type(), static_cast<uint8_t>(code));
      answer[code] = inf_ ? (std::isinf(v) && ((v > 0 && pos_) || (v < 0 && neg_))) : std::isnan(v);
    }
    const uint8_t* px = static_cast<const uint8_t*>(x.raw());
    bool* y = ctx.output<bool>(0, x.shape());
    math::parallel_for(x.size(), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = answer[px[i]];
    });
  }

  bool inf_, pos_, neg_;
};

// Clip: bounds are attributes before opset 11 and optional scalar inputs from opset 11 on.
class ClipKernel : public CpuKernel {
 public:
  ClipKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    if (node.opset() < 11) {
      attr_min_ = node.attr_float("min", -std::numeric_limits<float>::max());
      attr_max_ = node.attr_float("max", std::numeric_limits<float>::max());
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const bool ok = dispatch(NumericTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (opset() < 11) {
        lo = static_cast<T>(attr_min_);
        hi = static_cast<T>(attr_max_);
      } else {
        for (size_t i : {size_t{1}, size_t{2}}) {
          const sdk::Tensor b = ctx.input(i);
          if (!b.present()) continue;
          if (b.elem_type() != x.elem_type())
            fail(std::string(i == 1 ? "min" : "max") + " must have the input's type " + type_name(x.elem_type()) +
                 ", found " + type_name(b.elem_type()));
          if (b.size() != 1)
            fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, found shape " + math::to_string(b.shape()));
          (i == 1 ? lo : hi) = b.data<T>()[0];
        }
      }
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, x.shape());
      if constexpr (std::is_same_v<T, float>) {
        math::parallel_for(x.size(), threads, math::pass_grain(2 * sizeof(float)),
                           [&](int64_t i0, int64_t i1) { math::clip_f32(px + i0, lo, hi, y + i0, i1 - i0); });
        return;
      }
      math::parallel_for(x.size(), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T v = px[i] < lo ? lo : px[i];
          y[i] = v > hi ? hi : v;
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  float attr_min_ = 0, attr_max_ = 0;
};

template <typename Op, typename TL>
void add_unary(KernelRegistry& r, const char* op, int64_t since, int64_t until) {
  r.add(op, since, until, inputs_of(TL::ids()), make_factory<UnaryKernel<Op, TL>>());
}

}  // namespace

void register_activation_kernels(KernelRegistry& r) {
  using F = FloatTypes;
  using S = Types<float, double, int8_t, int16_t, int32_t, int64_t>;
  add_unary<ReluOp, S>(r, "Relu", 1, 17);
  add_unary<SigmoidOp, F>(r, "Sigmoid", 1, 17);
  add_unary<HardSigmoidOp, F>(r, "HardSigmoid", 1, 17);
  add_unary<HardSwishOp, F>(r, "HardSwish", 14, 17);
  add_unary<LeakyReluOp, F>(r, "LeakyRelu", 1, 17);
  add_unary<EluOp, F>(r, "Elu", 1, 17);
  add_unary<SeluOp, F>(r, "Selu", 1, 17);
  add_unary<ThresholdedReluOp, F>(r, "ThresholdedRelu", 10, 17);
  add_unary<GeluOp, F>(r, "Gelu", 20, 20);
  add_unary<TanhOp, F>(r, "Tanh", 1, 17);
  add_unary<ExpOp, F>(r, "Exp", 1, 17);
  add_unary<LogOp, F>(r, "Log", 1, 17);
  add_unary<SqrtOp, F>(r, "Sqrt", 1, 17);
  add_unary<ErfOp, F>(r, "Erf", 9, 17);
  add_unary<FloorOp, F>(r, "Floor", 1, 17);
  add_unary<CeilOp, F>(r, "Ceil", 1, 17);
  add_unary<RoundOp, F>(r, "Round", 11, 17);
  add_unary<ReciprocalOp, F>(r, "Reciprocal", 1, 17);
  add_unary<SinOp, F>(r, "Sin", 7, 17);
  add_unary<CosOp, F>(r, "Cos", 7, 17);
  add_unary<SoftsignOp, F>(r, "Softsign", 1, 17);
  add_unary<SoftplusOp, F>(r, "Softplus", 1, 17);
  add_unary<NegOp, S>(r, "Neg", 1, 17);
  add_unary<AbsOp, NumericTypes>(r, "Abs", 1, 17);
  add_unary<SignOp, NumericTypes>(r, "Sign", 9, 17);
  add_unary<NotOp, Types<bool>>(r, "Not", 1, 17);
  add_unary<BitwiseNotOp, Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>>(
      r, "BitwiseNot", 18, 18);
  add_unary<TanOp, F>(r, "Tan", 7, 17);
  add_unary<AsinOp, F>(r, "Asin", 7, 17);
  add_unary<AcosOp, F>(r, "Acos", 7, 17);
  add_unary<AtanOp, F>(r, "Atan", 7, 17);
  add_unary<SinhOp, F>(r, "Sinh", 9, 17);
  add_unary<CoshOp, F>(r, "Cosh", 9, 17);
  add_unary<AsinhOp, F>(r, "Asinh", 9, 17);
  add_unary<AcoshOp, F>(r, "Acosh", 9, 17);
  add_unary<AtanhOp, F>(r, "Atanh", 9, 17);
  add_unary<MishOp, F>(r, "Mish", 18, 18);
  add_unary<CeluOp, F>(r, "Celu", 12, 17);
  add_unary<ShrinkOp, NumericTypes>(r, "Shrink", 9, 17);
  for (bool inf : {false, true})
    r.add(inf ? "IsInf" : "IsNaN", inf ? 10 : 9, 17,
          inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_FLOAT8E4M3FN,
                     EPHOST_ELEMENT_FLOAT8E4M3FNUZ, EPHOST_ELEMENT_FLOAT8E5M2, EPHOST_ELEMENT_FLOAT8E5M2FNUZ}),
          [inf](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
            return std::make_unique<FloatClassKernel>(n, c, inf);
          });
  r.add("Clip", 1, 17,
        [](const sdk::Node& n) {
          return n.opset() < 12 ? input_type_in(n, 0, FloatTypes::ids()) : input_type_in(n, 0, NumericTypes::ids());
        },
        make_factory<ClipKernel>());
}

}  // namespace ephost::cpu
