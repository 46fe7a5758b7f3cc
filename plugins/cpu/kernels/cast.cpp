// Cast and CastLike between float, double, float16, bfloat16, bool and the integer types.
#include <cstring>
#include <type_traits>

#include "kernel_registry.h"
#include "math/half.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

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
    return convert<D>(bf16_to_float(s.bits));
  } else if constexpr (std::is_same_v<D, Half>) {
    return Half{math::float_to_half(static_cast<float>(s))};
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return BFloat16{float_to_bf16(static_cast<float>(s))};
  } else if constexpr (std::is_same_v<D, bool>) {
    return s != S(0);
  } else {
    return static_cast<D>(s);
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

bool castable(int32_t t) {
  return t == EPHOST_ELEMENT_FLOAT || t == EPHOST_ELEMENT_DOUBLE || t == EPHOST_ELEMENT_FLOAT16 || t == EPHOST_ELEMENT_BFLOAT16 ||
         t == EPHOST_ELEMENT_BOOL || t == EPHOST_ELEMENT_INT8 || t == EPHOST_ELEMENT_UINT8 || t == EPHOST_ELEMENT_INT16 ||
         t == EPHOST_ELEMENT_UINT16 || t == EPHOST_ELEMENT_INT32 || t == EPHOST_ELEMENT_UINT32 || t == EPHOST_ELEMENT_INT64 ||
         t == EPHOST_ELEMENT_UINT64;
}

class CastKernel : public CpuKernel {
 public:
  CastKernel(const sdk::Node& node, const KernelConfig& c, bool like)
      : CpuKernel(node, c), like_(like), to_(static_cast<int32_t>(node.attr_int("to", 0))) {
    if (!like && !castable(to_)) fail_node(node, std::string("unsupported target type ") + type_name(to_));
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    const int32_t to = like_ ? required(ctx, 1, "target_type").elem_type() : to_;
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
  bool like_;
  int32_t to_;
};

bool cast_supported(const sdk::Node& n) {
  if (n.op_type() == "Cast" && !castable(static_cast<int32_t>(n.attr_int("to", 0)))) return false;
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (n.has_input(i)) {
      const int32_t t = n.input(i).elem_type();
      if (t != EPHOST_ELEMENT_UNDEFINED && !castable(t)) return false;
    }
  return true;
}

}  // namespace

void register_cast_kernels(KernelRegistry& r) {
  r.add("Cast", 1, 21, cast_supported, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<CastKernel>(n, c, false);
  });
  r.add("CastLike", 15, 21, cast_supported, [](const sdk::Node& n, const KernelConfig& c) -> std::unique_ptr<sdk::Kernel> {
    return std::make_unique<CastKernel>(n, c, true);
  });
}

}  // namespace ephost::cpu
