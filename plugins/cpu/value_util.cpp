#include "value_util.h"

#include <cstring>

#include "math/axis_copy.h"

namespace ephost::cpu {

sdk::OwnedValue int64_scalar_value(int64_t v) {
  const EphostTensorView view{EPHOST_ELEMENT_INT64, 0, nullptr, &v};
  return sdk::OwnedValue::copy_of(sdk::Tensor(view));
}

sdk::OwnedValue bool_scalar_value(bool v) {
  const uint8_t b = v ? 1 : 0;
  const EphostTensorView view{EPHOST_ELEMENT_BOOL, 0, nullptr, &b};
  return sdk::OwnedValue::copy_of(sdk::Tensor(view));
}

bool bool_of(const sdk::Tensor& t, const char* what) {
  if (t.elem_type() != EPHOST_ELEMENT_BOOL || t.size() != 1)
    math::invalid(std::string(what) + " must be a bool tensor of one element, found " + type_name(t.elem_type()) +
                  " " + math::to_string(t.shape()));
  return t.data<uint8_t>()[0] != 0;
}

void write_sequence_element(sdk::KernelContext& ctx, size_t out, size_t k, const sdk::Tensor& t) {
  void* dst = ctx.output_sequence_element_raw(out, k, t.shape());
  if (t.elem_type() == EPHOST_ELEMENT_STRING) {
    const char* const* src = t.data<const char*>();
    const char** d = static_cast<const char**>(dst);
    for (int64_t i = 0; i < t.size(); ++i) d[i] = ctx.output_sequence_element_string(out, k, src[i] ? src[i] : "");
    return;
  }
  const size_t bytes = static_cast<size_t>(t.size()) * sdk::element_size(t.elem_type());
  if (bytes) std::memcpy(dst, t.raw(), bytes);
}

void write_stacked_output(sdk::KernelContext& ctx, size_t out, const std::vector<sdk::Tensor>& parts, int64_t axis,
                          bool reverse, int32_t empty_elem_type, const Shape& empty_shape, int threads) {
  if (parts.empty()) {
    ctx.output_raw(out, empty_elem_type, empty_shape);  // no elements: nothing to write
    return;
  }
  const int32_t type = parts[0].elem_type();
  const Shape part_shape = parts[0].shape();
  const int64_t r = static_cast<int64_t>(part_shape.size());
  const int64_t a = math::normalize_axis(axis, r + 1, "output axis");
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].elem_type() != type || parts[i].shape() != part_shape)
      math::invalid("iteration " + std::to_string(i) + " produced a " + type_name(parts[i].elem_type()) + " " +
                    math::to_string(parts[i].shape()) + " output where iteration 0 produced a " + type_name(type) +
                    " " + math::to_string(part_shape) + ": scan outputs must agree to be stacked");
  }
  const int64_t n = static_cast<int64_t>(parts.size());
  Shape shape = part_shape;
  shape.insert(shape.begin() + a, n);
  const int64_t outer = math::numel(part_shape, 0, static_cast<size_t>(a));
  const int64_t inner = math::numel(part_shape, static_cast<size_t>(a), part_shape.size());
  void* y = ctx.output_raw(out, type, shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t position = reverse ? n - 1 - i : i;
    const sdk::Tensor& p = parts[static_cast<size_t>(i)];
    if (type == EPHOST_ELEMENT_STRING) {
      const char* const* src = p.data<const char*>();
      const char** dst = static_cast<const char**>(y);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          const char* s = src[o * inner + j];
          dst[(o * n + position) * inner + j] = ctx.output_string(out, s ? s : "");
        }
      continue;
    }
    math::copy_into_axis_range(p.raw(), y, outer, n, position, 1,
                               inner * static_cast<int64_t>(sdk::element_size(type)), threads);
  }
}

Shape empty_stacked_shape(const sdk::Value& body_output, int64_t axis) {
  const Shape dims = body_output.valid() ? body_output.dims() : Shape{};
  const int64_t r = body_output.valid() ? body_output.rank() : -1;
  bool known = r >= 0;
  for (int64_t d : dims) known = known && d >= 0;
  if (!known) return {0};
  const int64_t a = math::normalize_axis(axis, r + 1, "output axis");
  Shape shape = dims;
  shape.insert(shape.begin() + a, 0);
  return shape;
}

}  // namespace ephost::cpu
