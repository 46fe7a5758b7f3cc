#include "broadcast.h"

#include <cstring>

namespace ephost::cpu::math {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da < 0 || db < 0) invalid("negative dimension in shape " + to_string(da < 0 ? a : b));
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      invalid("shapes " + to_string(a) + " and " + to_string(b) + " do not broadcast (dimension " +
              std::to_string(i) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shapes(out, s);
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i]) return false;
  return true;
}

BroadcastPlan plan_broadcast(const std::vector<Shape>& inputs, const Shape& out) {
  const size_t r = out.size();
  const size_t k = inputs.size();
  // Per input: its dims left-padded to the output rank and their row-major strides.
  std::vector<std::vector<int64_t>> full_strides(k, std::vector<int64_t>(r, 0));
  for (size_t j = 0; j < k; ++j) {
    const Shape& s = inputs[j];
    if (s.size() > r) invalid("shape " + to_string(s) + " has a higher rank than the result " + to_string(out));
    const size_t off = r - s.size();
    int64_t stride = 1;
    for (size_t i = r; i-- > 0;) {
      const int64_t d = i < off ? 1 : s[i - off];
      if (d != 1 && d != out[i]) invalid("shape " + to_string(s) + " does not broadcast to " + to_string(out));
      full_strides[j][i] = d == 1 ? 0 : stride;
      stride *= d;
    }
  }
  BroadcastPlan plan;
  plan.strides.assign(k, {});
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 1) continue;
    bool merge = !plan.dims.empty();
    for (size_t j = 0; j < k && merge; ++j)
      merge = plan.strides[j].back() == full_strides[j][i] * out[i];
    if (merge) {
      plan.dims.back() *= out[i];
      for (size_t j = 0; j < k; ++j) plan.strides[j].back() = full_strides[j][i];
    } else {
      plan.dims.push_back(out[i]);
      for (size_t j = 0; j < k; ++j) plan.strides[j].push_back(full_strides[j][i]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (size_t j = 0; j < k; ++j) plan.strides[j].push_back(0);
  }
  return plan;
}

RowCursor::RowCursor(const BroadcastPlan& plan, int64_t row)
    : plan_(plan), index_(plan.dims.size() - 1, 0), offsets_(plan.strides.size(), 0) {
  for (size_t d = index_.size(); d-- > 0;) {
    index_[d] = row % plan.dims[d];
    row /= plan.dims[d];
  }
  for (size_t j = 0; j < offsets_.size(); ++j)
    for (size_t d = 0; d < index_.size(); ++d) offsets_[j] += index_[d] * plan.strides[j][d];
}

void RowCursor::next() {
  for (size_t d = index_.size(); d-- > 0;) {
    if (++index_[d] < plan_.dims[d]) {
      for (size_t j = 0; j < offsets_.size(); ++j) offsets_[j] += plan_.strides[j][d];
      return;
    }
    index_[d] = 0;
    for (size_t j = 0; j < offsets_.size(); ++j) offsets_[j] -= plan_.strides[j][d] * (plan_.dims[d] - 1);
  }
}

void broadcast_arith_f32(BinOp op, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape,
                         float* out, const Shape& out_shape, int threads) {
  const int64_t n = numel(out_shape);
  if (n == 0) return;
  const int64_t na = numel(a_shape), nb = numel(b_shape);
  if ((na == n || na == 1) && (nb == n || nb == 1) && (na == n || nb == n)) {
    // Same shape, or one side a single value.
    const bool av = na == n, bv = nb == n;
    parallel_for(n, threads, pass_grain(3 * sizeof(float)), [&](int64_t i0, int64_t i1) {
      binary_f32(op, av ? a + i0 : a, av, bv ? b + i0 : b, bv, out + i0, i1 - i0);
    });
    return;
  }
  const BroadcastPlan plan = plan_broadcast({a_shape, b_shape}, out_shape);
  const int64_t inner = plan.inner(), rows = plan.rows();
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back();
  const int64_t grain = pass_grain(3 * static_cast<int64_t>(sizeof(float)) * inner);
  if (sa > 1 || sb > 1 || (sa == 0 && sb == 0)) {
    // Strided inner rows (rare): the generic driver.
    switch (op) {
      case BinOp::kAdd: return broadcast_binary(a, a_shape, b, b_shape, out, out_shape, threads, [](float x, float y) { return x + y; });
      case BinOp::kSub: return broadcast_binary(a, a_shape, b, b_shape, out, out_shape, threads, [](float x, float y) { return x - y; });
      case BinOp::kMul: return broadcast_binary(a, a_shape, b, b_shape, out, out_shape, threads, [](float x, float y) { return x * y; });
      case BinOp::kDiv: return broadcast_binary(a, a_shape, b, b_shape, out, out_shape, threads, [](float x, float y) { return x / y; });
    }
    return;
  }
  if (plan.dims.size() == 2) {
    // One row dim: offsets are r * stride, no cursor.
    const int64_t ra = plan.strides[0][0], rb = plan.strides[1][0];
    parallel_for(rows, threads, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) binary_f32(op, a + r * ra, sa == 1, b + r * rb, sb == 1, out + r * inner, inner);
    });
    return;
  }
  parallel_for(rows, threads, grain, [&](int64_t r0, int64_t r1) {
    RowCursor cur(plan, r0);
    for (int64_t r = r0; r < r1; ++r, cur.next())
      binary_f32(op, a + cur.offset(0), sa == 1, b + cur.offset(1), sb == 1, out + r * inner, inner);
  });
}

namespace {

template <typename T>
void broadcast_copy_typed(const T* in, const Shape& in_shape, T* out, const Shape& out_shape, int threads) {
  const int64_t n = numel(out_shape);
  if (n == 0) return;
  const BroadcastPlan plan = plan_broadcast({in_shape}, out_shape);
  const int64_t inner = plan.inner(), rows = plan.rows();
  const int64_t s = plan.strides[0].back();
  parallel_for(rows, threads, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t r0, int64_t r1) {
    RowCursor cur(plan, r0);
    for (int64_t r = r0; r < r1; ++r, cur.next()) {
      const T* p = in + cur.offset(0);
      T* o = out + r * inner;
      if (s == 1) {
        std::memcpy(o, p, sizeof(T) * inner);
      } else {
        const T v = *p;
        for (int64_t i = 0; i < inner; ++i) o[i] = v;
      }
    }
  });
}

}  // namespace

void broadcast_copy(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, size_t elem_size,
                    int threads) {
  switch (elem_size) {
    case 1:
      return broadcast_copy_typed(static_cast<const uint8_t*>(in), in_shape, static_cast<uint8_t*>(out), out_shape,
                                  threads);
    case 2:
      return broadcast_copy_typed(static_cast<const uint16_t*>(in), in_shape, static_cast<uint16_t*>(out),
                                  out_shape, threads);
    case 4:
      return broadcast_copy_typed(static_cast<const uint32_t*>(in), in_shape, static_cast<uint32_t*>(out),
                                  out_shape, threads);
    case 8:
      return broadcast_copy_typed(static_cast<const uint64_t*>(in), in_shape, static_cast<uint64_t*>(out),
                                  out_shape, threads);
    default:
      invalid("unsupported element size " + std::to_string(elem_size));
  }
}

}  // namespace ephost::cpu::math
