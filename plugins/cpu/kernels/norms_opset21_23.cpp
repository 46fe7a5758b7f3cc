// The normalizations of today's transformers and diffusion models as fused kernels: GroupNormalization-21
// (scale and bias per channel, statistics in double whatever stash_type asks, which is at least as
// precise) and RMSNormalization-23. Each reads its input twice (statistics, then the output) and writes
// once, in parallel over the normalized groups or rows.
#include <algorithm>
#include <cmath>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// ---- GroupNormalization-21 ------------------------------------------------------------------------

class GroupNorm21Kernel : public CpuKernel {
 public:
  GroupNorm21Kernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), epsilon_(node.attr_float("epsilon", 1e-5f)), groups_(node.attr_int("num_groups", 0)) {
    if (groups_ < 1) fail_node(node, "num_groups must be positive");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), scale = required(ctx, 1, "scale"), bias = required(ctx, 2, "bias");
    const Shape xs = x.shape();
    if (xs.size() < 2) fail("X must have rank 2 or more [N, C, ...], found " + math::to_string(xs));
    const int64_t channels = xs[1];
    if (channels % groups_ != 0)
      fail("the channels (" + std::to_string(channels) + ") are not a multiple of num_groups (" +
           std::to_string(groups_) + ")");
    if (scale.size() != channels || bias.size() != channels)
      fail("scale and bias must have one value per channel (" + std::to_string(channels) + ")");
    expect_same_type(x, "X", scale, "scale");
    expect_same_type(x, "X", bias, "bias");
    const int64_t spatial = math::numel(xs, 2, xs.size()), per_group = channels / groups_;
    const int64_t group_size = per_group * spatial;
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T *px = x.data<T>(), *ps = scale.data<T>(), *pb = bias.data<T>();
      T* y = ctx.output<T>(0, xs);
      math::parallel_for(xs[0] * groups_, threads, 1, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const T* in = px + g * group_size;
          T* out = y + g * group_size;
          double sum = 0, squares = 0;
          for (int64_t i = 0; i < group_size; ++i) sum += in[i];
          const double mean = group_size ? sum / static_cast<double>(group_size) : 0.0;
          for (int64_t i = 0; i < group_size; ++i) squares += (in[i] - mean) * (in[i] - mean);
          const double var = group_size ? squares / static_cast<double>(group_size) : 0.0;
          const double inv = 1.0 / std::sqrt(var + epsilon_);
          const int64_t first_channel = (g % groups_) * per_group;
          for (int64_t c = 0; c < per_group; ++c) {
            const double s = ps[first_channel + c] * inv, shift = pb[first_channel + c] - mean * s;
            for (int64_t i = c * spatial; i < (c + 1) * spatial; ++i) out[i] = static_cast<T>(in[i] * s + shift);
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  float epsilon_;
  int64_t groups_;
};

// ---- RMSNormalization-23 --------------------------------------------------------------------------

// Y = X / sqrt(mean(X^2) + epsilon) * scale over the axes from `axis` on; scale broadcasts against
// those trailing axes (numpy rules, so it may also have fewer dimensions or ones).
class RmsNormKernel : public CpuKernel {
 public:
  RmsNormKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", -1)), epsilon_(node.attr_float("epsilon", 1e-5f)) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), scale = required(ctx, 1, "scale");
    const Shape xs = x.shape(), ss = scale.shape();
    const int64_t rank = static_cast<int64_t>(xs.size());
    if (rank < 1) fail("X must have rank 1 or more");
    const int64_t axis = math::normalize_axis(axis_, rank);
    const Shape norm_shape(xs.begin() + axis, xs.end());
    const int64_t rows = math::numel(xs, 0, axis), n = math::numel(norm_shape);
    // scale broadcast to the normalized shape: index of each of its n elements into scale.
    if (ss.size() > norm_shape.size())
      fail("scale " + math::to_string(ss) + " has more axes than the normalized ones " + math::to_string(norm_shape));
    std::vector<int64_t> scale_index;
    const bool full_scale = ss == norm_shape;
    if (!full_scale) {
      const size_t lead = norm_shape.size() - ss.size();
      for (size_t i = 0; i < ss.size(); ++i)
        if (ss[i] != 1 && ss[i] != norm_shape[lead + i])
          fail("scale " + math::to_string(ss) + " does not broadcast to the normalized axes " + math::to_string(norm_shape));
      scale_index.resize(static_cast<size_t>(n));
      for (int64_t e = 0; e < n; ++e) {
        int64_t rem = e, idx = 0, stride = 1;
        for (size_t i = norm_shape.size(); i-- > lead;) {
          const int64_t coord = rem % norm_shape[i];
          rem /= norm_shape[i];
          const int64_t sd = ss[i - lead];
          if (sd != 1) idx += coord * stride;
          stride *= sd;
        }
        scale_index[static_cast<size_t>(e)] = idx;
      }
    }
    expect_same_type(x, "X", scale, "scale");
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T *px = x.data<T>(), *ps = scale.data<T>();
      T* y = ctx.output<T>(0, xs);
      math::parallel_for(rows, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* in = px + r * n;
          T* out = y + r * n;
          double squares = 0;
          for (int64_t i = 0; i < n; ++i) squares += static_cast<double>(in[i]) * in[i];
          const T inv = static_cast<T>(1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon_));
          if (full_scale)
            for (int64_t i = 0; i < n; ++i) out[i] = in[i] * inv * ps[i];
          else
            for (int64_t i = 0; i < n; ++i) out[i] = in[i] * inv * ps[scale_index[static_cast<size_t>(i)]];
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void register_transformer_norm_kernels(KernelRegistry& r) {
  const std::initializer_list<int32_t> real = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE};
  r.add("GroupNormalization", 21, 21, inputs_of(real, {0, 1, 2}), make_factory<GroupNorm21Kernel>());
  r.add("RMSNormalization", 23, 23,
        [](const sdk::Node& n) {
          return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}) &&
                 n.input(0).elem_type() == n.input(1).elem_type();
        },
        make_factory<RmsNormKernel>());
}

}  // namespace ephost::cpu
