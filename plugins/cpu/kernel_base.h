// What every CPU kernel shares: error messages naming the op and node, the thread count, input
// access with checks, and element-type dispatch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ephost/sdk/plugin.hpp"
#include "math/shape.h"

namespace ephost::cpu {

namespace sdk = ::ephost::sdk;
using math::Shape;

// Provider-wide settings a kernel needs.
struct KernelConfig {
  int default_threads = 1;              // used when the host reports no thread count
  std::string conv_layout = "auto";     // plain | blocked | auto (see math::ConvLayout)
  bool fuse_elementwise = true;         // claim pointwise chains as fused groups (fusion.h)
  bool fuse_patterns = true;            // claim the patterns of fusion/graph_match.h as fused groups
  bool adaptive_threads = true;         // fewer threads while other tasks hold the CPUs (math/parallel.h)
  bool winograd = true;                 // 3x3 stride-1 convolutions in regions through oneDNN's Winograd
  bool int8_exact_requantize = false;   // int8 convs requantize by QuantizeLinear's division (qdq_conv.cpp)
  bool int8_trunks = true;              // int8 conv chains that read each other as one NHWC group (qdq_conv_trunk.h)
  bool bf16 = false;                    // precision=bf16: f32 products against constant weights in bfloat16
};

// "<Op> '<node name>': what" as EPHOST_INVALID_ARGUMENT.
[[noreturn]] void fail_node(const sdk::Node& node, const std::string& what);

const char* type_name(int32_t elem_type);
inline Shape shape_of(const sdk::Tensor& t) { return t.shape(); }

class CpuKernel : public sdk::Kernel {
 public:
  CpuKernel(const sdk::Node& node, const KernelConfig& config);
  // Sets the thread count, runs run(), and turns math errors (std::invalid_argument) into
  // EPHOST_INVALID_ARGUMENT and any other exception into EPHOST_EP_FAIL, prefixed with op and node.
  void compute(sdk::KernelContext& ctx) final;

 protected:
  virtual void run(sdk::KernelContext& ctx, int threads) = 0;

  [[noreturn]] void fail(const std::string& what) const;
  const std::string& op() const { return op_; }
  const std::string& name() const { return name_; }
  int64_t opset() const { return opset_; }

  // Input i, failing when a required input is absent.
  sdk::Tensor required(sdk::KernelContext& ctx, size_t i, const char* what) const;
  void expect_type(const sdk::Tensor& t, std::initializer_list<int32_t> types, const char* what) const;
  // Fails unless a and b (named `a_name`, `b_name`) have one element type.
  void expect_same_type(const sdk::Tensor& a, const char* a_name, const sdk::Tensor& b, const char* b_name) const;
  // An int32/int64 tensor's values.
  std::vector<int64_t> ints_of(const sdk::Tensor& t, const char* what) const;
  // A one-element numeric tensor as double.
  double scalar_of(const sdk::Tensor& t, const char* what) const;
  // A one-element numeric tensor as int64: integers exactly, floats truncated toward zero; fails for a
  // value int64 cannot hold (NaN, infinities, uint64 beyond 2^63 - 1). For counts, sizes and steps: a
  // round trip through double would lose int64's low bits and make INT64_MAX an undefined cast.
  int64_t int_scalar_of(const sdk::Tensor& t, const char* what) const;
  bool output_wanted(size_t i) const { return i < outputs_.size() && outputs_[i]; }

 private:
  std::string op_, name_;
  int64_t opset_;
  int default_threads_;
  bool adaptive_ = true;
  std::vector<bool> outputs_;  // which outputs the node produces (optional ones may be omitted)
};

// The static shape of v when every dimension is known (> 0), else empty (for work done at session
// creation: primitives for static shapes are built there, not on the first run).
inline Shape static_shape(const sdk::Value& v) {
  if (!v.valid() || v.rank() < 0) return {};
  Shape d = v.dims();
  for (int64_t x : d)
    if (x <= 0) return {};
  return d.empty() ? Shape{} : d;
}

// ---- element types --------------------------------------------------------------------------------

template <typename T> struct ElemType;
#define EPHOST_CPU_ELEM(T, E) \
  template <> struct ElemType<T> { static constexpr int32_t value = E; };
EPHOST_CPU_ELEM(float, EPHOST_ELEMENT_FLOAT)
EPHOST_CPU_ELEM(double, EPHOST_ELEMENT_DOUBLE)
EPHOST_CPU_ELEM(int8_t, EPHOST_ELEMENT_INT8)
EPHOST_CPU_ELEM(uint8_t, EPHOST_ELEMENT_UINT8)
EPHOST_CPU_ELEM(int16_t, EPHOST_ELEMENT_INT16)
EPHOST_CPU_ELEM(uint16_t, EPHOST_ELEMENT_UINT16)
EPHOST_CPU_ELEM(int32_t, EPHOST_ELEMENT_INT32)
EPHOST_CPU_ELEM(uint32_t, EPHOST_ELEMENT_UINT32)
EPHOST_CPU_ELEM(int64_t, EPHOST_ELEMENT_INT64)
EPHOST_CPU_ELEM(uint64_t, EPHOST_ELEMENT_UINT64)
EPHOST_CPU_ELEM(bool, EPHOST_ELEMENT_BOOL)
#undef EPHOST_CPU_ELEM

template <typename... Ts> struct Types {
  static std::initializer_list<int32_t> ids() {
    static const std::initializer_list<int32_t> l{ElemType<Ts>::value...};
    return l;
  }
};

// Calls f(T{}) for the T in Ts whose element type is `t`; false when none matches.
template <typename... Ts, typename F>
bool dispatch(Types<Ts...>, int32_t t, F&& f) {
  return ((t == ElemType<Ts>::value ? (f(Ts{}), true) : false) || ...);
}

using FloatTypes = Types<float, double>;
using SignedTypes = Types<float, double, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
using IndexTypes = Types<int32_t, int64_t>;

// Element types that pure data movement (Reshape, Concat, Gather, ...) accepts: any fixed-size type.
bool is_movable_type(int32_t elem_type);

}  // namespace ephost::cpu
