// Linear algebra: Det over the last two axes.
#include <algorithm>
#include <vector>

#include "kernel_registry.h"
#include "math/linalg.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

class DetKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const Shape xs = x.shape();
    const size_t r = xs.size();
    if (r < 2 || xs[r - 1] != xs[r - 2])
      fail("X must have shape [*, M, M], found " + math::to_string(xs));
    const int64_t n = xs[r - 1], batch = math::numel(xs, 0, r - 2);
    const Shape ys(xs.begin(), xs.end() - 2);
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      T* y = ctx.output<T>(0, ys);
      math::parallel_for(batch, threads, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(n * n * n, 1)),
                         [&](int64_t b0, int64_t b1) {
        std::vector<double> work;
        for (int64_t b = b0; b < b1; ++b) y[b] = static_cast<T>(math::determinant(px + b * n * n, n, work));
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }
};

}  // namespace

void register_linalg_kernels(KernelRegistry& r) {
  r.add("Det", 11, 17, inputs_of({EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE}), make_factory<DetKernel>());
}

}  // namespace ephost::cpu
