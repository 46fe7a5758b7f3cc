// Operators new in opsets 24 and 26 that are not attention: Swish (24), TensorScatter (24: writing a
// key/value cache in place of a Scatter) and BitCast (26). CumProd lives with CumSum in reduce.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// ---- Swish ----------------------------------------------------------------------------------------

class SwishKernel : public CpuKernel {
 public:
  SwishKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), alpha_(node.attr_float("alpha", 1.f)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, x.shape());
      const T alpha = static_cast<T>(alpha_);
      math::parallel_for(x.size(), threads, math::kElementwiseGrain, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) y[i] = px[i] / (T(1) + std::exp(-alpha * px[i]));
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  float alpha_;
};

// ---- TensorScatter --------------------------------------------------------------------------------

class TensorScatterKernel : public CpuKernel {
 public:
  TensorScatterKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", -2)), circular_(node.attr_string("mode", "linear") == "circular") {
    const std::string mode = node.attr_string("mode", "linear");
    if (mode != "linear" && mode != "circular") fail_node(node, "mode must be linear or circular, found '" + mode + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor cache = required(ctx, 0, "past_cache"), update = required(ctx, 1, "update");
    const sdk::Tensor indices = ctx.input(2);
    expect_same_type(cache, "past_cache", update, "update");
    const Shape cs = cache.shape(), us = update.shape();
    const int64_t rank = static_cast<int64_t>(cs.size());
    if (rank < 2 || us.size() != cs.size())
      fail("past_cache must have rank 2 or more and update the same rank, found " + math::to_string(cs) + " and " +
           math::to_string(us));
    const int64_t axis = math::normalize_axis(axis_, rank);
    if (axis == 0) fail("axis cannot be the batch axis 0");
    for (int64_t i = 0; i < rank; ++i)
      if (i == axis ? us[i] > cs[i] : us[i] != cs[i])
        fail("update " + math::to_string(us) + " does not fit past_cache " + math::to_string(cs) + " along axis " +
             std::to_string(i));
    std::vector<int64_t> starts(static_cast<size_t>(cs[0]), 0);
    if (indices.present()) {
      starts = ints_of(indices, "write_indices");
      if (static_cast<int64_t>(starts.size()) != cs[0])
        fail("write_indices must hold one index per batch (" + std::to_string(cs[0]) + ")");
    }
    const int64_t max_seq = cs[axis], seq = us[axis];
    for (int64_t s : starts)
      if (s < 0 || (!circular_ && s + seq > max_seq))
        fail("write index " + std::to_string(s) + " plus the update's " + std::to_string(seq) +
             " entries does not fit the cache's " + std::to_string(max_seq) + " (linear mode)");
    if (cache.elem_type() == EPHOST_ELEMENT_STRING) fail("string caches are not supported");
    const size_t elem = sdk::element_size(cache.elem_type());
    const int64_t inner = math::numel(cs, axis + 1, cs.size()), prefix = math::numel(cs, 0, axis);
    const int64_t per_batch = prefix / cs[0];
    auto* out = static_cast<uint8_t*>(ctx.output_raw(0, cache.elem_type(), cs));
    std::memcpy(out, cache.raw(), elem * static_cast<size_t>(cache.size()));
    const auto* src = static_cast<const uint8_t*>(update.raw());
    const size_t row = elem * static_cast<size_t>(inner);
    math::parallel_for(prefix, threads, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t start = starts[static_cast<size_t>(p / per_batch)];
        for (int64_t s = 0; s < seq; ++s) {
          const int64_t at = circular_ ? (start + s) % max_seq : start + s;
          std::memcpy(out + (p * max_seq + at) * row, src + (p * seq + s) * row, row);
        }
      }
    });
  }

 private:
  int64_t axis_;
  bool circular_;
};

// ---- BitCast --------------------------------------------------------------------------------------

// Bits per element of the types BitCast takes: every fixed-width type, the float8 and packed sub-byte
// types of opsets 19 to 25 included (a bit cast between two 4-bit types moves the packed bytes); 0 for
// strings and unknown types.
int element_bits(int32_t t) { return t == EPHOST_ELEMENT_STRING ? 0 : static_cast<int>(EphostElementBits(t)); }

class BitCastKernel : public CpuKernel {
 public:
  BitCastKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), to_(static_cast<int32_t>(node.attr_int("to", 0))) {
    if (element_bits(to_) == 0) fail_node(node, "to must be a fixed-width element type other than string");
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    if (element_bits(x.elem_type()) != element_bits(to_))
      fail(std::string("input (") + type_name(x.elem_type()) + ") and to (" + type_name(to_) +
           ") must have the same bit width");
    void* y = ctx.output_raw(0, to_, x.shape());
    std::memcpy(y, x.raw(), EphostTensorDataSize(to_, static_cast<size_t>(x.size())));
  }

 private:
  int32_t to_;
};

}  // namespace

void register_opset24_26_kernels(KernelRegistry& r) {
  r.add("Swish", 24, 24, inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}), make_factory<SwishKernel>());
  r.add("TensorScatter", 24, 24, any_types(), make_factory<TensorScatterKernel>());
  r.add("BitCast", 26, 26,
        [](const sdk::Node& n) {
          // all_movable, but with the packed sub-byte types too: the kernel copies whole bytes.
          for (size_t i = 0; i < n.num_inputs(); ++i)
            if (n.has_input(i) && n.input(i).elem_type() != EPHOST_ELEMENT_UNDEFINED && element_bits(n.input(i).elem_type()) == 0)
              return false;
          return element_bits(static_cast<int32_t>(n.attr_int("to", 0))) != 0;
        },
        make_factory<BitCastKernel>());
}

}  // namespace ephost::cpu
