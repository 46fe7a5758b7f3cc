// Cast and CastLike between float, double, float16, bfloat16, bool, the integer types, string, and the
// types of opsets 19 to 25 (the float8 family, float4e2m1, int4, uint4, int2, uint2), whose casts go
// through double (math/narrow_types.h: exact for their every value) with Cast's saturate and
// round_mode.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "ephost/ephost_half.h"
#include "kernel_registry.h"
#include "math/float8_encode.h"
#include "math/half.h"
#include "math/narrow_types.h"
#include "math/numeric_cast.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
constexpr int32_t cast_type_id() {
  if constexpr (std::is_same_v<T, Half>) return EPHOST_ELEMENT_FLOAT16;
  else if constexpr (std::is_same_v<T, BFloat16>) return EPHOST_ELEMENT_BFLOAT16;
  else return ElemType<T>::value;
}

template <typename D, typename S>
inline D convert(S s) {
  if constexpr (std::is_same_v<S, Half>) {
    return convert<D>(math::half_to_float(s.bits));
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return convert<D>(EphostBfloat16ToFloat(s.bits));
  } else if constexpr (std::is_same_v<D, Half>) {
    return Half{math::float_to_half(static_cast<float>(s))};
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return BFloat16{EphostFloatToBfloat16Truncate(static_cast<float>(s))};  // as ONNX's reference Cast
  } else {
    return math::numeric_cast<D>(s);
  }
}

template <typename... Ts, typename F>
bool dispatch_cast(int32_t t, F&& f) {
  return ((t == cast_type_id<Ts>() ? (f(Ts{}), true) : false) || ...);
}

template <typename F>
bool dispatch_any(int32_t t, F&& f) {
  return dispatch_cast<float, double, Half, BFloat16, bool, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                       uint64_t>(t, std::forward<F>(f));
}

// ---- text -----------------------------------------------------------------------------------------
// Floats become text as numpy's str() writes them for the ONNX reference: the shortest digits that
// read back to the same value, positional for 1e-4 <= |v| < 1e16 ("0.1", "3.0", "123456790.0") and
// scientific otherwise ("1e-05", "1.5e+20"); "nan", "inf", "-inf". Text is read as a plain or
// scientific decimal, with "INF", "+INF", "-INF" and "NaN" in any case. Locale-independent.

// A finite nonzero value as shortest digits d0 d1 d2 ... meaning d0.d1d2... x 10^exponent.
struct Decimal {
  std::string digits;
  int exponent = 0;
};

// Splits to_chars' scientific form "-d.ddde+XX".
Decimal split_scientific(const char* begin, const char* end) {
  Decimal d;
  const char* p = begin;
  if (*p == '-') ++p;
  for (; p < end && *p != 'e'; ++p)
    if (*p != '.') d.digits.push_back(*p);
  if (p < end) std::from_chars(p + (p[1] == '+' ? 2 : 1), end, d.exponent);
  return d;
}

template <typename S>
Decimal shortest_decimal(S v) {
  char buf[64];
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    // The fewest significant digits that read back to the same 16-bit value.
    const float f = convert<float>(v);
    std::to_chars_result r{};
    for (int precision = 0; precision <= 8; ++precision) {
      r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, precision);
      float back = 0;
      std::from_chars(buf, r.ptr, back);
      if (convert<S>(back).bits == v.bits) break;
    }
    return split_scientific(buf, r.ptr);
  } else {
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);  // shortest round trip
    return split_scientific(buf, r.ptr);
  }
}

template <typename S>
std::string float_text(S v) {
  const double x = convert<double>(v);
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  std::string out = std::signbit(x) ? "-" : "";
  if (x == 0) return out + "0.0";
  const Decimal d = shortest_decimal(v);
  const int e = d.exponent;
  if (std::fabs(x) >= 1e-4 && std::fabs(x) < 1e16) {
    if (e >= 0) {
      std::string whole = d.digits.substr(0, std::min<size_t>(d.digits.size(), e + 1));
      whole.resize(static_cast<size_t>(e) + 1, '0');
      const std::string frac = d.digits.size() > static_cast<size_t>(e) + 1 ? d.digits.substr(e + 1) : "0";
      return out + whole + "." + frac;
    }
    return out + "0." + std::string(static_cast<size_t>(-e - 1), '0') + d.digits;
  }
  out += d.digits[0];
  if (d.digits.size() > 1) out += "." + d.digits.substr(1);
  const int ae = e < 0 ? -e : e;
  return out + (e < 0 ? "e-" : "e+") + (ae < 10 ? "0" : "") + std::to_string(ae);
}

template <typename S>
std::string to_text(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_integral_v<S>) {
    return std::to_string(v);
  } else {
    return float_text(v);
  }
}

// Reads the whole of s as a number; false when it is not one.
bool parse_number(std::string_view s, double* out) {
  if (!s.empty() && s[0] == '+') {  // from_chars takes no '+' sign
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return false;
  }
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ptr != s.data() + s.size()) return false;
  if (r.ec == std::errc::result_out_of_range) {  // beyond double's range: +-inf or 0, as strtod gives
    *out = std::strtod(std::string(s).c_str(), nullptr);
    return true;
  }
  return r.ec == std::errc();
}

template <typename D>
bool from_text(std::string_view s, D* out) {
  if constexpr (std::is_same_v<D, bool>) {
    if (s == "True" || s == "true") return (*out = true), true;
    if (s == "False" || s == "false") return (*out = false), true;
  } else if constexpr (std::is_integral_v<D>) {
    using Wide = std::conditional_t<std::is_signed_v<D>, int64_t, uint64_t>;
    Wide w = 0;
    const std::string_view digits = !s.empty() && s[0] == '+' ? s.substr(1) : s;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), w);
    if (!digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size())
      return (*out = static_cast<D>(w)), true;
    // Text like "100.5" reads as the number, truncated (the ONNX definition allows 100).
    double d = 0;
    if (!parse_number(s, &d)) return false;
    const double t = std::trunc(d);
    const double lo = static_cast<double>(std::numeric_limits<D>::min());
    const double hi = static_cast<double>(std::numeric_limits<D>::max()) + 1.0;
    if (!(t >= lo && t < hi)) return false;
    return (*out = static_cast<D>(t)), true;
  }
  double d = 0;
  if (!parse_number(s, &d)) return false;
  *out = convert<D>(d);
  return true;
}

bool castable(int32_t t) {
  return math::is_narrow_type(t) || t == EPHOST_ELEMENT_FLOAT || t == EPHOST_ELEMENT_DOUBLE || t == EPHOST_ELEMENT_FLOAT16 || t == EPHOST_ELEMENT_BFLOAT16 ||
         t == EPHOST_ELEMENT_BOOL || t == EPHOST_ELEMENT_INT8 || t == EPHOST_ELEMENT_UINT8 || t == EPHOST_ELEMENT_INT16 ||
         t == EPHOST_ELEMENT_UINT16 || t == EPHOST_ELEMENT_INT32 || t == EPHOST_ELEMENT_UINT32 || t == EPHOST_ELEMENT_INT64 ||
         t == EPHOST_ELEMENT_UINT64;
}

// Elements [begin, begin + n) of x, any castable type but string, as doubles (exact but for 64-bit
// integers beyond 2^53).
void read_doubles(const sdk::Tensor& x, int64_t begin, int64_t n, double* out) {
  if (math::is_narrow_type(x.elem_type())) return math::narrow_decode(x.elem_type(), x.raw(), begin, n, out);
  dispatch_any(x.elem_type(), [&](auto tag) {
    using S = decltype(tag);
    const S* px = static_cast<const S*>(x.raw()) + begin;
    for (int64_t i = 0; i < n; ++i) out[i] = convert<double>(px[i]);
  });
}

// Writes n doubles as elements [begin, begin + n) of y, of type `to` (any castable type but string).
void write_doubles(int32_t to, const double* values, int64_t n, void* y, int64_t begin,
                   const math::NarrowEncoding& how) {
  if (math::is_narrow_type(to)) return math::narrow_encode(to, values, n, y, begin, how);
  dispatch_any(to, [&](auto tag) {
    using D = decltype(tag);
    D* py = static_cast<D*>(y) + begin;
    for (int64_t i = 0; i < n; ++i) py[i] = convert<D>(values[i]);
  });
}

class CastKernel : public CpuKernel {
 public:
  CastKernel(const sdk::Node& node, const KernelConfig& c, bool like)
      : CpuKernel(node, c), like_(like), to_(static_cast<int32_t>(node.attr_int("to", 0))) {
    if (!like && !castable(to_) && to_ != EPHOST_ELEMENT_STRING)
      fail_node(node, std::string("unsupported target type ") + type_name(to_));
    narrow_.saturate = node.attr_int("saturate", 1) != 0;
    const std::string round_mode = node.attr_string("round_mode", "up");
    if (!math::parse_e8m0_rounding(round_mode.c_str(), &narrow_.e8m0_rounding))
      fail_node(node, "round_mode must be up, down or nearest, found '" + round_mode + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const int32_t to = like_ ? required(ctx, 1, "target_type").elem_type() : to_;
    if (x.elem_type() == EPHOST_ELEMENT_STRING || to == EPHOST_ELEMENT_STRING) return cast_text(ctx, x, to);
    if (!castable(x.elem_type()) || !castable(to))
      fail(std::string("unsupported cast from ") + type_name(x.elem_type()) + " to " + type_name(to));
    if (math::is_narrow_type(x.elem_type()) || math::is_narrow_type(to)) return cast_through_double(ctx, x, to, threads);
    void* y = ctx.output_raw(0, to, x.shape());
    const int64_t n = x.size();
    bool ok = false;
    dispatch_any(x.elem_type(), [&](auto src_tag) {
      using S = decltype(src_tag);
      ok = dispatch_any(to, [&](auto dst_tag) {
        using D = decltype(dst_tag);
        const S* px = static_cast<const S*>(x.raw());
        D* py = static_cast<D*>(y);
        math::parallel_for(n, threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) py[i] = convert<D>(px[i]);
        });
      });
    });
    if (!ok) fail(std::string("unsupported cast from ") + type_name(x.elem_type()) + " to " + type_name(to));
  }

 private:
  // A cast from or to a narrow type: blocks of elements decoded to doubles, then encoded. A block's
  // length is a multiple of every packed type's elements per byte, so no two threads write one byte.
  void cast_through_double(sdk::KernelContext& ctx, const sdk::Tensor& x, int32_t to, int threads) {
    void* y = ctx.output_raw(0, to, x.shape());
    const int64_t n = x.size();
    constexpr int64_t kBlock = 512;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    const bool float_to_int_codes = x.elem_type() == EPHOST_ELEMENT_FLOAT && math::is_narrow_integer(to);
    const bool float_to_float8 = x.elem_type() == EPHOST_ELEMENT_FLOAT && math::is_float8_type(to);
    math::parallel_for(blocks, threads, std::max<int64_t>(1, math::kElementwiseGrain / kBlock), [&](int64_t b0, int64_t b1) {
      double values[kBlock];
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t begin = b * kBlock, len = std::min(kBlock, n - begin);
        if (float_to_int_codes) {  // the vector encoder, bit for bit the same codes
          math::narrow_encode_integer_f32(to, x.data<float>() + begin, len, y, begin);
          continue;
        }
        if (float_to_float8) {  // likewise
          math::float8_encode_f32(to, x.data<float>() + begin, len, narrow_.saturate, y, begin);
          continue;
        }
        read_doubles(x, begin, len, values);
        write_doubles(to, values, len, y, begin, narrow_);
      }
    });
  }

  // Casts from or to string, element by element (each output string is a host allocation).
  void cast_text(sdk::KernelContext& ctx, const sdk::Tensor& x, int32_t to) {
    const int64_t n = x.size();
    bool ok = false;
    if (x.elem_type() == EPHOST_ELEMENT_STRING && math::is_narrow_type(to)) {
      const char* const* in = x.data<const char*>();
      std::vector<double> values(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        if (!from_text(std::string_view(in[i]), &values[static_cast<size_t>(i)]))
          fail("cannot read '" + std::string(in[i]) + "' (element " + std::to_string(i) + ") as " + type_name(to));
      write_doubles(to, values.data(), n, ctx.output_raw(0, to, x.shape()), 0, narrow_);
      return;
    }
    if (math::is_narrow_type(x.elem_type()) && to == EPHOST_ELEMENT_STRING) {
      std::vector<double> values(static_cast<size_t>(n));
      read_doubles(x, 0, n, values.data());
      const char** y = ctx.output<const char*>(0, x.shape());
      const bool integer = math::is_narrow_integer(x.elem_type());
      for (int64_t i = 0; i < n; ++i) {
        const double v = values[static_cast<size_t>(i)];
        y[i] = ctx.output_string(0, integer ? std::to_string(static_cast<int64_t>(v)) : to_text(static_cast<float>(v)));
      }
      return;
    }
    if (x.elem_type() == EPHOST_ELEMENT_STRING) {
      const char* const* in = x.data<const char*>();
      if (to == EPHOST_ELEMENT_STRING) {
        const char** y = ctx.output<const char*>(0, x.shape());
        for (int64_t i = 0; i < n; ++i) y[i] = ctx.output_string(0, in[i]);
        return;
      }
      void* y = ctx.output_raw(0, to, x.shape());
      ok = dispatch_any(to, [&](auto tag) {
        using D = decltype(tag);
        D* py = static_cast<D*>(y);
        for (int64_t i = 0; i < n; ++i)
          if (!from_text(std::string_view(in[i]), &py[i]))
            fail("cannot read '" + std::string(in[i]) + "' (element " + std::to_string(i) + ") as " + type_name(to));
      });
    } else {
      const char** y = ctx.output<const char*>(0, x.shape());
      ok = dispatch_any(x.elem_type(), [&](auto tag) {
        using S = decltype(tag);
        const S* px = static_cast<const S*>(x.raw());
        for (int64_t i = 0; i < n; ++i) y[i] = ctx.output_string(0, to_text(px[i]));
      });
    }
    if (!ok) fail(std::string("unsupported cast from ") + type_name(x.elem_type()) + " to " + type_name(to));
  }

  bool like_;
  int32_t to_;
  math::NarrowEncoding narrow_;  // saturate and round_mode, for casts to the narrow types
};

bool cast_supported(const sdk::Node& n) {
  auto ok = [](int32_t t) { return castable(t) || t == EPHOST_ELEMENT_STRING; };
  if (n.op_type() == "Cast" && !ok(static_cast<int32_t>(n.attr_int("to", 0)))) return false;
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (n.has_input(i)) {
      const int32_t t = n.input(i).elem_type();
      if (t != EPHOST_ELEMENT_UNDEFINED && !ok(t)) return false;
    }
  return true;
}

}  // namespace

void register_cast_kernels(KernelRegistry& r) {
  // Versions 19 to 25 add saturate and round_mode (for the float8 targets) and the narrow types, which
  // later types-only versions extend this kernel with.
  r.add("Cast", 6, 19, cast_supported, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<CastKernel>(n, c, false);
  });
  r.add("CastLike", 15, 19, cast_supported, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<CastKernel>(n, c, true);
  });
}

}  // namespace ephost::cpu
