// Binary and variadic elementwise ops with numpy broadcasting: arithmetic, Pow, Mod, PRelu,
// comparisons, logic, Min/Max/Sum/Mean, Where.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel_registry.h"
#include "math/broadcast.h"
#include "math/half.h"
#include "math/wrapping.h"

namespace ephost::cpu {

namespace {

// x^e for an integral x: an integral exponent by squaring in unsigned arithmetic (wrapping), a negative
// one as the integer part of 1/x^|e| (0 unless x is 1 or -1); a floating exponent through double,
// converted with saturation (NaN gives 0).
template <typename T, typename E>
T integer_pow(T x, E e) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_integral_v<E>) {
    if (e < 0) {
      if (x == 1) return 1;
      if constexpr (std::is_signed_v<T>)
        if (x == -1) return (e % 2 == 0) ? T(1) : T(-1);
      return 0;
    }
    U result = 1, base = static_cast<U>(x);
    for (auto n = static_cast<std::make_unsigned_t<E>>(e); n != 0; n >>= 1) {
      if (n & 1) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<T>(result);
  } else {
    const double v = std::pow(static_cast<double>(x), static_cast<double>(e));
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

using math::broadcast_binary;

// float16 values widened to float: the ops below compute float16 in float and round the result back,
// which is exact for Min, Max and Mod (their float results are float16 values); Sum and Mean round once.
std::vector<float> widen_half(const sdk::Tensor& t) {
  const uint16_t* p = t.data<uint16_t>();
  std::vector<float> out(static_cast<size_t>(t.size()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = math::half_to_float(p[i]);
  return out;
}

void narrow_to_half(const std::vector<float>& v, uint16_t* out) {
  for (size_t i = 0; i < v.size(); ++i) out[i] = math::float_to_half(v[i]);
}

// Opset < 7 Add/Sub/Mul/Div only broadcast when the `broadcast` attribute says so, aligning B at
// `axis` of A (default: the trailing axes) instead of numpy's right alignment.
struct LegacyBroadcast {
  bool legacy = false;
  bool enabled = false;
  int64_t axis = -1;
  bool has_axis = false;

  explicit LegacyBroadcast(const sdk::Node& node) {
    if (node.opset() >= 7) return;
    legacy = true;
    enabled = node.attr_int("broadcast", 0) != 0;
    has_axis = node.has_attr("axis");
    axis = node.attr_int("axis", -1);
  }

  // B's shape rewritten so numpy rules give the legacy result; throws when not allowed.
  Shape adapt(const Shape& a, const Shape& b) const {
    if (!legacy) return b;
    if (!enabled) {
      if (a != b)
        math::invalid("shapes " + math::to_string(a) + " and " + math::to_string(b) +
                      " differ and the broadcast attribute is 0");
      return b;
    }
    const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
    int64_t start = has_axis ? axis : ra - rb;
    if (start < 0) start += ra;
    if (start < 0 || start + rb > ra)
      math::invalid("B " + math::to_string(b) + " does not fit in A " + math::to_string(a) + " at axis " +
                    std::to_string(axis));
    Shape out(ra, 1);
    for (int64_t i = 0; i < rb; ++i) {
      if (b[i] != a[start + i] && b[i] != 1)
        math::invalid("B " + math::to_string(b) + " does not match A " + math::to_string(a) + " at axis " +
                      std::to_string(start));
      out[start + i] = b[i];
    }
    return out;
  }
};

enum class Arith { kAdd, kSub, kMul, kDiv };

class ArithKernel : public CpuKernel {
 public:
  ArithKernel(const sdk::Node& node, const KernelConfig& c, Arith kind) : CpuKernel(node, c), kind_(kind), legacy_(node) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    expect_same_type(a, "A", b, "B");
    const Shape as = a.shape(), bs = legacy_.adapt(as, b.shape());
    const Shape os = math::broadcast_shapes(as, bs);
    const bool ok = dispatch(NumericTypes{}, a.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      if constexpr (std::is_integral_v<T>) {
        if (kind_ == Arith::kDiv)
          for (int64_t i = 0, n = b.size(); i < n; ++i)
            if (pb[i] == 0) fail("integer division by zero");
      }
      T* y = ctx.output<T>(0, os);
      if constexpr (std::is_same_v<T, float>) {
        static constexpr math::BinOp kOps[] = {math::BinOp::kAdd, math::BinOp::kSub, math::BinOp::kMul,
                                               math::BinOp::kDiv};
        math::broadcast_arith_f32(kOps[static_cast<int>(kind_)], pa, as, pb, bs, y, os, threads);
        return;
      }
      switch (kind_) {
        // Integers wrap (math/wrapping.h): C++'s signed overflow is undefined.
        case Arith::kAdd: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return math::wrapping_add(x, z); }); break;
        case Arith::kSub: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return math::wrapping_sub(x, z); }); break;
        case Arith::kMul: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return math::wrapping_mul(x, z); }); break;
        case Arith::kDiv:
          if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
            // x / -1 is negation: spelled out, because INT_MIN / -1 traps on x86.
            broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) {
              return z == T(-1) ? T(T(0) - static_cast<std::make_unsigned_t<T>>(x)) : T(x / z);
            });
          } else {
            broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return T(x / z); });
          }
          break;
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(a.elem_type()));
  }

 private:
  Arith kind_;
  LegacyBroadcast legacy_;
};

class PowKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "X"), b = required(ctx, 1, "Y");
    const Shape as = a.shape(), bs = b.shape();
    const Shape os = math::broadcast_shapes(as, bs);
    using PowTypes = Types<float, double, int32_t, int64_t>;
    using ExpTypes = Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
    bool ok = false;
    dispatch(PowTypes{}, a.elem_type(), [&](auto ta) {
      using T = decltype(ta);
      ok = dispatch(ExpTypes{}, b.elem_type(), [&](auto tb) {
        using E = decltype(tb);
        const T* pa = a.data<T>();
        const E* pb = b.data<E>();
        T* y = ctx.output<T>(0, os);
        if constexpr (std::is_integral_v<T>) {
          // Defined for every input: wraps like unsigned arithmetic (numpy's integer power), never the
          // undefined behaviour of a signed overflow or of a double out of range converted to T.
          broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, E e) { return integer_pow<T>(x, e); });
        } else if (b.size() == 1 && static_cast<double>(pb[0]) == 2.0) {
          broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, E) { return T(x * x); });
        } else if constexpr (std::is_same_v<T, float>) {
          broadcast_binary(pa, as, pb, bs, y, os, threads,
                           [](float x, E e) { return std::pow(x, static_cast<float>(e)); });
        } else {
          broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, E e) {
            return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
          });
        }
      });
    });
    if (!ok)
      fail(std::string("unsupported types ") + type_name(a.elem_type()) + " ^ " + type_name(b.elem_type()));
  }
};

class ModKernel : public CpuKernel {
 public:
  ModKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), fmod_(node.attr_int("fmod", 0) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    if (a.elem_type() != b.elem_type()) fail("A and B must have the same type");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    if (a.elem_type() == EPHOST_ELEMENT_FLOAT16) {
      // The output before the float buffer: its allocation refuses a broadcast no tensor holds.
      uint16_t* out = ctx.output<uint16_t>(0, os, EPHOST_ELEMENT_FLOAT16);
      const std::vector<float> fa = widen_half(a), fb = widen_half(b);
      std::vector<float> y(static_cast<size_t>(math::numel(os)));
      mod(fa.data(), as, fb.data(), bs, y.data(), os, threads);
      narrow_to_half(y, out);
      return;
    }
    const bool ok = dispatch(NumericTypes{}, a.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      mod(a.data<T>(), as, b.data<T>(), bs, ctx.output<T>(0, os), os, threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(a.elem_type()));
  }

 private:
  template <typename T>
  void mod(const T* pa, const Shape& as, const T* pb, const Shape& bs, T* y, const Shape& os, int threads) {
    if constexpr (std::is_integral_v<T>) {
      for (int64_t i = 0, n = math::numel(bs); i < n; ++i)
        if (pb[i] == 0) fail("integer modulo by zero");
    } else {
      if (!fmod_) fail("fmod must be 1 for floating-point inputs");
    }
    const bool f = fmod_;
    broadcast_binary(pa, as, pb, bs, y, os, threads, [f](T x, T z) -> T {
      (void)f;  // read only for signed integers
      if constexpr (std::is_floating_point_v<T>) {
        return std::fmod(x, z);
      } else {
        // x % -1 is 0; computing it traps on x86 for INT_MIN.
        if constexpr (std::is_signed_v<T>)
          if (z == T(-1)) return T(0);
        T r = static_cast<T>(x % z);
        // Without fmod the result takes the divisor's sign (Python semantics).
        if constexpr (std::is_signed_v<T>)
          if (!f && r != 0 && ((r < 0) != (z < 0))) r = static_cast<T>(r + z);
        return r;
      }
    });
  }

  bool fmod_;
};

class PReluKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), s = required(ctx, 1, "slope");
    if (x.elem_type() != s.elem_type()) fail("X and slope must have the same type");
    const Shape xs = x.shape();
    Shape ss = s.shape();
    // Opsets 1 to 6 predate numpy broadcasting: a 1-D slope of C values holds one slope per channel of
    // X [N, C, ...] (as a [C, 1, ...] slope broadcasts from opset 7 on).
    if (opset() < 7 && ss.size() == 1 && xs.size() > 2 && ss[0] == xs[1] && ss[0] != 1) ss.resize(xs.size() - 1, 1);
    if (!math::broadcasts_to(ss, xs))
      fail("slope of shape " + math::to_string(ss) + " does not broadcast to X " + math::to_string(xs));
    const bool ok = dispatch(SignedTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      T* y = ctx.output<T>(0, xs);
      broadcast_binary(x.data<T>(), xs, s.data<T>(), ss, y, xs, threads,
                       [](T v, T k) { return v < T(0) ? T(v * k) : v; });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }
};

class BitShiftKernel : public CpuKernel {
 public:
  BitShiftKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    const std::string d = node.attr_string("direction", "");
    if (d != "LEFT" && d != "RIGHT") fail_node(node, "direction must be LEFT or RIGHT, found '" + d + "'");
    left_ = d == "LEFT";
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "X"), b = required(ctx, 1, "Y");
    if (a.elem_type() != b.elem_type()) fail("X and Y must have the same type");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    const bool ok = dispatch(Types<uint8_t, uint16_t, uint32_t, uint64_t>{}, a.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      constexpr T bits = sizeof(T) * 8;
      T* y = ctx.output<T>(0, os);
      // Shifting by the width or more is undefined in C++; the result is then 0.
      if (left_)
        broadcast_binary(a.data<T>(), as, b.data<T>(), bs, y, os, threads,
                         [](T x, T s) { return s >= bits ? T(0) : T(x << s); });
      else
        broadcast_binary(a.data<T>(), as, b.data<T>(), bs, y, os, threads,
                         [](T x, T s) { return s >= bits ? T(0) : T(x >> s); });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(a.elem_type()));
  }

 private:
  bool left_ = true;
};

enum class Cmp { kEqual, kLess, kGreater, kLessEqual, kGreaterEqual };

class CompareKernel : public CpuKernel {
 public:
  CompareKernel(const sdk::Node& node, const KernelConfig& c, Cmp kind) : CpuKernel(node, c), kind_(kind) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    expect_same_type(a, "A", b, "B");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    if (a.elem_type() == EPHOST_ELEMENT_STRING && kind_ == Cmp::kEqual) {  // Equal-19
      broadcast_binary(a.data<const char*>(), as, b.data<const char*>(), bs, ctx.output<bool>(0, os), os, threads,
                       [](const char* x, const char* z) { return std::strcmp(x, z) == 0; });
      return;
    }
    using CmpTypes = Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;
    const bool ok = dispatch(CmpTypes{}, a.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      bool* y = ctx.output<bool>(0, os);
      switch (kind_) {
        case Cmp::kEqual: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return x == z; }); break;
        case Cmp::kLess: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return x < z; }); break;
        case Cmp::kGreater: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return x > z; }); break;
        case Cmp::kLessEqual: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return x <= z; }); break;
        case Cmp::kGreaterEqual:
          broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return x >= z; });
          break;
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(a.elem_type()));
  }

 private:
  Cmp kind_;
};

enum class Logic { kAnd, kOr, kXor };

class LogicKernel : public CpuKernel {
 public:
  LogicKernel(const sdk::Node& node, const KernelConfig& c, Logic kind) : CpuKernel(node, c), kind_(kind) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    expect_type(a, {EPHOST_ELEMENT_BOOL}, "A");
    expect_type(b, {EPHOST_ELEMENT_BOOL}, "B");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    const uint8_t* pa = a.data<uint8_t>();
    const uint8_t* pb = b.data<uint8_t>();
    uint8_t* y = ctx.output<uint8_t>(0, os, EPHOST_ELEMENT_BOOL);
    switch (kind_) {
      case Logic::kAnd: broadcast_binary(pa, as, pb, bs, y, os, threads, [](uint8_t x, uint8_t z) { return uint8_t((x != 0) & (z != 0)); }); break;
      case Logic::kOr: broadcast_binary(pa, as, pb, bs, y, os, threads, [](uint8_t x, uint8_t z) { return uint8_t((x != 0) | (z != 0)); }); break;
      case Logic::kXor: broadcast_binary(pa, as, pb, bs, y, os, threads, [](uint8_t x, uint8_t z) { return uint8_t((x != 0) ^ (z != 0)); }); break;
    }
  }

 private:
  Logic kind_;
};

enum class Bitwise { kAnd, kOr, kXor };

using IntegerTypes = Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;

// BitwiseAnd / BitwiseOr / BitwiseXor (opset 18): integers of one type, broadcast.
class BitwiseKernel : public CpuKernel {
 public:
  BitwiseKernel(const sdk::Node& node, const KernelConfig& c, Bitwise kind) : CpuKernel(node, c), kind_(kind) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor a = required(ctx, 0, "A"), b = required(ctx, 1, "B");
    expect_same_type(a, "A", b, "B");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    const bool ok = dispatch(IntegerTypes{}, a.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* y = ctx.output<T>(0, os);
      switch (kind_) {
        case Bitwise::kAnd: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return T(x & z); }); break;
        case Bitwise::kOr: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return T(x | z); }); break;
        case Bitwise::kXor: broadcast_binary(pa, as, pb, bs, y, os, threads, [](T x, T z) { return T(x ^ z); }); break;
      }
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(a.elem_type()));
  }

 private:
  Bitwise kind_;
};

enum class Fold { kMin, kMax, kSum, kMean };

// Variadic Min/Max/Sum/Mean: folds the inputs pairwise into the output, which already has the full
// broadcast shape, so every step after the first reads and writes y in place.
class VariadicKernel : public CpuKernel {
 public:
  VariadicKernel(const sdk::Node& node, const KernelConfig& c, Fold kind) : CpuKernel(node, c), kind_(kind) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const size_t n = ctx.num_inputs();
    std::vector<sdk::Tensor> in;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < n; ++i) {
      in.push_back(required(ctx, i, "data"));
      shapes.push_back(in.back().shape());
      if (in.back().elem_type() != in[0].elem_type()) fail("all inputs must have the same type");
    }
    if (in.empty()) fail("needs at least one input");
    const Shape os = math::broadcast_shapes(shapes);
    if (in[0].elem_type() == EPHOST_ELEMENT_FLOAT16) {
      std::vector<std::vector<float>> wide;
      std::vector<const float*> x;
      for (const auto& t : in) wide.push_back(widen_half(t));
      for (const auto& w : wide) x.push_back(w.data());
      uint16_t* out = ctx.output<uint16_t>(0, os, EPHOST_ELEMENT_FLOAT16);  // before the float buffer, as Mod
      std::vector<float> y(static_cast<size_t>(math::numel(os)));
      fold(x, shapes, y.data(), os, threads);
      narrow_to_half(y, out);
      return;
    }
    const bool ok = dispatch(NumericTypes{}, in[0].elem_type(), [&](auto tag) {
      using T = decltype(tag);
      std::vector<const T*> x;
      for (const auto& t : in) x.push_back(t.data<T>());
      fold(x, shapes, ctx.output<T>(0, os), os, threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(in[0].elem_type()));
  }

 private:
  template <typename T>
  void fold(const std::vector<const T*>& x, const std::vector<Shape>& shapes, T* y, const Shape& os, int threads) {
    const size_t n = x.size();
    auto step = [&](const T* a, const Shape& as, const T* b, const Shape& bs) {
      switch (kind_) {
        case Fold::kMin: broadcast_binary(a, as, b, bs, y, os, threads, [](T p, T q) { return q < p ? q : p; }); break;
        case Fold::kMax: broadcast_binary(a, as, b, bs, y, os, threads, [](T p, T q) { return q > p ? q : p; }); break;
        case Fold::kSum:
        case Fold::kMean: broadcast_binary(a, as, b, bs, y, os, threads, [](T p, T q) { return math::wrapping_add(p, q); }); break;
      }
    };
    if (n == 1) {
      math::broadcast_copy(x[0], shapes[0], y, os, sizeof(T), threads);
    } else {
      step(x[0], shapes[0], x[1], shapes[1]);
      for (size_t i = 2; i < n; ++i) step(y, os, x[i], shapes[i]);
    }
    if (kind_ == Fold::kMean) {
      const T count = static_cast<T>(n);
      const int64_t total = math::numel(os);
      for (int64_t i = 0; i < total; ++i) y[i] = static_cast<T>(y[i] / count);
    }
  }

  Fold kind_;
};

class WhereKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor c = required(ctx, 0, "condition"), x = required(ctx, 1, "X"), y = required(ctx, 2, "Y");
    expect_type(c, {EPHOST_ELEMENT_BOOL}, "condition");
    expect_same_type(x, "X", y, "Y");
    if (!is_movable_type(x.elem_type())) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    const Shape cs = c.shape(), xs = x.shape(), ys = y.shape();
    const Shape os = math::broadcast_shapes({cs, xs, ys});
    void* out = ctx.output_raw(0, x.elem_type(), os);
    auto go = [&](auto tag) {
      using T = decltype(tag);
      math::broadcast_ternary(c.data<uint8_t>(), cs, x.data<T>(), xs, y.data<T>(), ys, static_cast<T*>(out), os,
                              threads, [](uint8_t k, T a, T b) { return k ? a : b; });
    };
    switch (sdk::element_size(x.elem_type())) {
      case 1: go(uint8_t{}); break;
      case 2: go(uint16_t{}); break;
      case 4: go(uint32_t{}); break;
      case 8: go(uint64_t{}); break;
      default: fail(std::string("unsupported type ") + type_name(x.elem_type()));
    }
  }
};

template <typename K, typename Arg>
KernelFactory factory_with(Arg arg) {
  return [arg](const sdk::Node& node, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<K>(node, c, arg);
  };
}

bool same_numeric(const sdk::Node& node) {
  return input_type_in(node, 0, NumericTypes::ids()) && input_type_in(node, 1, NumericTypes::ids());
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& r) {
  const std::pair<const char*, Arith> arith[] = {
      {"Add", Arith::kAdd}, {"Sub", Arith::kSub}, {"Mul", Arith::kMul}, {"Div", Arith::kDiv}};
  for (const auto& [op, kind] : arith) r.add(op, 1, 17, same_numeric, factory_with<ArithKernel>(kind));

  r.add("Pow", 7, 17,
        [](const sdk::Node& n) {
          return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64}) &&
                 input_type_in(n, 1, NumericTypes::ids());
        },
        make_factory<PowKernel>());
  r.add("BitShift", 11, 17,
        inputs_of({EPHOST_ELEMENT_UINT8, EPHOST_ELEMENT_UINT16, EPHOST_ELEMENT_UINT32, EPHOST_ELEMENT_UINT64}, {0, 1}),
        make_factory<BitShiftKernel>());
  r.add("Mod", 10, 17,
        [](const sdk::Node& n) {
          return same_numeric(n) || (input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT16}) && input_type_in(n, 1, {EPHOST_ELEMENT_FLOAT16}));
        },
        make_factory<ModKernel>());
  for (const auto& [op, kind] : {std::pair{"BitwiseAnd", Bitwise::kAnd}, std::pair{"BitwiseOr", Bitwise::kOr},
                                 std::pair{"BitwiseXor", Bitwise::kXor}})
    r.add(op, 18, 18, inputs_of(IntegerTypes::ids(), {0, 1}), factory_with<BitwiseKernel>(kind));
  r.add("PRelu", 1, 17, inputs_of(SignedTypes::ids(), {0, 1}), make_factory<PReluKernel>());

  const std::initializer_list<int32_t> cmp_types = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE, EPHOST_ELEMENT_INT8, EPHOST_ELEMENT_UINT8,
                          EPHOST_ELEMENT_INT16, EPHOST_ELEMENT_UINT16, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_UINT32,
                          EPHOST_ELEMENT_INT64, EPHOST_ELEMENT_UINT64, EPHOST_ELEMENT_BOOL};
  r.add("Equal", 7, 17,
        [numeric = inputs_of(cmp_types, {0, 1})](const sdk::Node& n) {
          return numeric(n) || (n.opset() >= 19 && input_type_in(n, 0, {EPHOST_ELEMENT_STRING}) &&
                                input_type_in(n, 1, {EPHOST_ELEMENT_STRING}));  // Equal-19: strings
        },
        factory_with<CompareKernel>(Cmp::kEqual));
  r.add("Less", 7, 17, inputs_of(cmp_types, {0, 1}), factory_with<CompareKernel>(Cmp::kLess));
  r.add("Greater", 7, 17, inputs_of(cmp_types, {0, 1}), factory_with<CompareKernel>(Cmp::kGreater));
  r.add("LessOrEqual", 12, 17, inputs_of(cmp_types, {0, 1}), factory_with<CompareKernel>(Cmp::kLessEqual));
  r.add("GreaterOrEqual", 12, 17, inputs_of(cmp_types, {0, 1}), factory_with<CompareKernel>(Cmp::kGreaterEqual));

  r.add("And", 7, 17, inputs_of({EPHOST_ELEMENT_BOOL}, {0, 1}), factory_with<LogicKernel>(Logic::kAnd));
  r.add("Or", 7, 17, inputs_of({EPHOST_ELEMENT_BOOL}, {0, 1}), factory_with<LogicKernel>(Logic::kOr));
  r.add("Xor", 7, 17, inputs_of({EPHOST_ELEMENT_BOOL}, {0, 1}), factory_with<LogicKernel>(Logic::kXor));

  // Before opset 8 these did not broadcast; numpy rules accept every input those opsets allowed.
  auto variadic_types = [](const sdk::Node& node) {
    for (size_t i = 0; i < node.num_inputs(); ++i)
      if (!input_type_in(node, i, NumericTypes::ids()) && !input_type_in(node, i, {EPHOST_ELEMENT_FLOAT16})) return false;
    return true;
  };
  r.add("Min", 6, 17, variadic_types, factory_with<VariadicKernel>(Fold::kMin));
  r.add("Max", 6, 17, variadic_types, factory_with<VariadicKernel>(Fold::kMax));
  r.add("Sum", 6, 17, variadic_types, factory_with<VariadicKernel>(Fold::kSum));
  r.add("Mean", 6, 17, variadic_types, factory_with<VariadicKernel>(Fold::kMean));

  r.add("Where", 9, 17, [](const sdk::Node& n) { return all_movable(n); }, make_factory<WhereKernel>());
}

}  // namespace ephost::cpu
