#include "elementwise.h"

#include <algorithm>
#include <cmath>

namespace example_ep {
namespace {

// The output walked as an outer odometer and a contiguous inner run. Dimensions are merged wherever
// both operands step through them alike (both contiguous, or both broadcast), so the common cases
// (same shape, a scalar, a per-channel [C,1,1] or [N,C,1,1] operand) become one or two long runs.
struct BroadcastWalk {
  std::vector<int64_t> dims, a_strides, b_strides;  // outer to inner

  BroadcastWalk(const Shape& a, const Shape& b, const Shape& y) {
    const size_t r = y.size();
    int64_t sa = 1, sb = 1;
    // Element strides of a and b along each output dim (0 where broadcast), inner to outer.
    std::vector<int64_t> d, as, bs;
    for (size_t k = 0; k < r; ++k) {
      const size_t i = r - 1 - k;
      const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1, db = k < b.size() ? b[b.size() - 1 - k] : 1;
      if (y[i] != 1) {
        const int64_t stride_a = da == 1 ? 0 : sa, stride_b = db == 1 ? 0 : sb;
        if (!d.empty() && stride_a == as.back() * d.back() && stride_b == bs.back() * d.back()) {
          d.back() *= y[i];  // merges into the inner group: strides of the group stay those of its inner end
        } else {
          d.push_back(y[i]);
          as.push_back(stride_a);
          bs.push_back(stride_b);
        }
      }
      sa *= da;
      sb *= db;
    }
    if (d.empty()) {  // every dim is 1: one element
      d.push_back(1);
      as.push_back(0);
      bs.push_back(0);
    }
    dims.assign(d.rbegin(), d.rend());
    a_strides.assign(as.rbegin(), as.rend());
    b_strides.assign(bs.rbegin(), bs.rend());
  }
};

// The inner run: strides are 0 or 1, so each of the four cases is a plain vectorizable loop.
template <typename F>
void run_inner(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, F f) {
  if (n == 0) return;  // an empty operand has no a[0] / b[0] to read
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    const float bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sb == 1) {
    const float av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    std::fill(y, y + n, f(a[0], b[0]));
  }
}

template <typename F>
void broadcast(const ConstTensor& a, const ConstTensor& b, float* y, const Shape& y_shape, F f) {
  const BroadcastWalk walk(a.shape, b.shape, y_shape);
  const size_t outer_rank = walk.dims.size() - 1;
  const int64_t inner = walk.dims.back(), sa = walk.a_strides.back(), sb = walk.b_strides.back();
  std::vector<int64_t> index(outer_rank, 0);
  int64_t outer = 1;
  for (size_t i = 0; i < outer_rank; ++i) outer *= walk.dims[i];
  int64_t a_off = 0, b_off = 0;
  for (int64_t o = 0; o < outer; ++o, y += inner) {
    run_inner(a.data + a_off, sa, b.data + b_off, sb, y, inner, f);
    // Advance the odometer over the outer dims.
    for (size_t i = outer_rank; i-- > 0;) {
      a_off += walk.a_strides[i];
      b_off += walk.b_strides[i];
      if (++index[i] < walk.dims[i]) break;
      a_off -= walk.a_strides[i] * walk.dims[i];
      b_off -= walk.b_strides[i] * walk.dims[i];
      index[i] = 0;
    }
  }
}

template <typename F>
void map(const ConstTensor& x, float* y, F f) {
  const int64_t n = numel(x.shape);
  for (int64_t i = 0; i < n; ++i) y[i] = f(x.data[i]);
}

}  // namespace

Shape broadcast_output_shape(const Op& op, const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape y(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1, db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1)
      bad_input(op, "shapes " + shape_text(a) + " and " + shape_text(b) + " cannot be broadcast");
    y[r - 1 - k] = da == 1 ? db : da;
  }
  return y;
}

void binary(const Op& op, const ConstTensor& a, const ConstTensor& b, float* y, const Shape& y_shape) {
  switch (op.kind) {
    case OpKind::kAdd: return broadcast(a, b, y, y_shape, [](float p, float q) { return p + q; });
    case OpKind::kSub: return broadcast(a, b, y, y_shape, [](float p, float q) { return p - q; });
    case OpKind::kMul: return broadcast(a, b, y, y_shape, [](float p, float q) { return p * q; });
    case OpKind::kDiv: return broadcast(a, b, y, y_shape, [](float p, float q) { return p / q; });
    default: bad_input(op, "not a binary op");
  }
}

void unary(const Op& op, const ConstTensor& x, float* y) {
  switch (op.kind) {
    case OpKind::kRelu: return map(x, y, [](float v) { return v > 0.0f ? v : 0.0f; });
    case OpKind::kSigmoid: return map(x, y, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
    case OpKind::kClip: {
      const float lo = op.floats[0], hi = op.floats[1];
      return map(x, y, [lo, hi](float v) { return std::min(std::max(v, lo), hi); });
    }
    case OpKind::kHardSigmoid: {
      const float alpha = op.floats[0], beta = op.floats[1];
      return map(x, y, [alpha, beta](float v) { return std::min(std::max(alpha * v + beta, 0.0f), 1.0f); });
    }
    default: bad_input(op, "not a unary op");
  }
}

void channel_affine(const Op& op, const ConstTensor& x, const ConstTensor& scale, const ConstTensor& shift, float* y) {
  if (x.shape.size() < 2 || x.shape[1] != scale.shape[0])
    bad_input(op, "input of shape " + shape_text(x.shape) + " does not have " + std::to_string(scale.shape[0]) + " channels in dim 1");
  const int64_t C = x.shape[1], N = x.shape[0], inner = numel(x.shape) / std::max<int64_t>(1, N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float s = scale.data[c], t = shift.data[c];
      const float* xp = x.data + (n * C + c) * inner;
      float* yp = y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * s + t;
    }
}

}  // namespace example_ep
