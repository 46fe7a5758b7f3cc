// MaxUnpool: scatters pooled values back to the positions MaxPool's indices name, zeros elsewhere.
// Values are only copied, so any fixed-size element type works.
#include <cstring>

#include "kernel_registry.h"

namespace ephost::cpu {

namespace {

class MaxUnpoolKernel : public CpuKernel {
 public:
  MaxUnpoolKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c),
        kernel_(node.attr_ints("kernel_shape")),
        strides_(node.attr_ints("strides")),
        pads_(node.attr_ints("pads")) {
    const size_t k = kernel_.size();
    if (k == 0) fail_node(node, "attribute kernel_shape is required");
    if (strides_.empty()) strides_.assign(k, 1);
    if (pads_.empty()) pads_.assign(2 * k, 0);
    if (strides_.size() != k || pads_.size() != 2 * k)
      fail_node(node, "strides and pads must have one (strides) or two (pads) entries per kernel axis");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), idx = required(ctx, 1, "I");
    const Shape xs = x.shape();
    const size_t k = kernel_.size();
    if (xs.size() != k + 2) fail("X must have rank " + std::to_string(k + 2) + " (N, C and one axis per kernel axis)");
    if (idx.shape() != xs) fail("I must have X's shape " + math::to_string(xs) + ", found " + math::to_string(idx.shape()));
    // The input extent MaxPool would have had (without the padding it added). The indices are flat
    // positions in that shape (N and C included).
    Shape inferred = xs;
    for (size_t d = 0; d < k; ++d)
      inferred[d + 2] = (xs[d + 2] - 1) * strides_[d] + kernel_[d] - pads_[d] - pads_[d + k];
    for (int64_t d : inferred)
      if (d < 0) fail("kernel_shape, strides and pads give a negative output extent " + math::to_string(inferred));
    // A given output_shape may be larger: the inferred block then sits at its start, zeros after it.
    Shape ys = inferred;
    const sdk::Tensor given = ctx.input(2);
    if (given.present()) {
      ys = ints_of(given, "output_shape");
      if (ys.size() != xs.size()) fail("output_shape must have X's rank, found " + math::to_string(ys));
      for (size_t d = 0; d < ys.size(); ++d)
        if (ys[d] < inferred[d])
          fail("output_shape " + math::to_string(ys) + " is smaller than the unpooled extent " + math::to_string(inferred));
    }
    const std::vector<int64_t> where = ints_of(idx, "I");
    // The output first: the host refuses a shape whose size cannot be counted, before strides are made.
    char* y = static_cast<char*>(ctx.output_raw(0, x.elem_type(), ys));
    const int64_t total = math::numel(inferred);
    const Shape out_strides = math::strides_of(ys);
    const size_t es = sdk::element_size(x.elem_type());
    const int64_t out_total = math::numel(ys);
    if (out_total) std::memset(y, 0, static_cast<size_t>(out_total) * es);
    const char* src = static_cast<const char*>(x.raw());
    for (size_t i = 0; i < where.size(); ++i) {
      int64_t rem = where[i];
      if (rem < 0 || rem >= total)
        fail("index " + std::to_string(rem) + " is outside the unpooled extent " + math::to_string(inferred));
      int64_t at = 0;
      for (size_t d = inferred.size(); d-- > 0;) {
        at += (rem % inferred[d]) * out_strides[d];
        rem /= inferred[d];
      }
      std::memcpy(y + at * es, src + i * es, es);
    }
    (void)threads;
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

void register_unpool_kernels(KernelRegistry& r) {
  r.add("MaxUnpool", 9, 17, any_types(), make_factory<MaxUnpoolKernel>());
}

}  // namespace ephost::cpu
