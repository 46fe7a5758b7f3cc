#include "conv.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace ephost::cpu::math {

namespace {

Shape or_default(const Shape& v, size_t n, int64_t def, const char* what) {
  if (v.empty()) return Shape(n, def);
  if (v.size() != n)
    invalid(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  return v;
}

void check_positive(const Shape& v, const char* what) {
  for (int64_t x : v)
    if (x <= 0) invalid(std::string(what) + " must be positive, found " + to_string(v));
}

void common_checks(const Shape& x, const Shape& w, size_t* k) {
  if (x.size() < 3 || x.size() > 5)
    invalid("input must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), found shape " + to_string(x));
  if (w.size() != x.size())
    invalid("weights must have the input's rank " + std::to_string(x.size()) + ", found shape " + to_string(w));
  *k = x.size() - 2;
}

}  // namespace

Shape ConvGeometry::output_shape() const {
  Shape s{batch, out_channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

ConvGeometry conv_geometry(const ConvParams& p, const Shape& x, const Shape& w) {
  size_t k = 0;
  common_checks(x, w, &k);
  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.out_channels = w[0];
  g.group = p.group;
  if (g.group <= 0) invalid("group must be positive, found " + std::to_string(g.group));
  if (g.in_channels != w[1] * g.group)
    invalid("input has " + std::to_string(g.in_channels) + " channels but weights " + to_string(w) + " with group " +
            std::to_string(g.group) + " expect " + std::to_string(w[1] * g.group));
  if (g.out_channels % g.group != 0)
    invalid("weights' output channels " + std::to_string(g.out_channels) + " are not divisible by group " +
            std::to_string(g.group));
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!p.kernel_shape.empty() && p.kernel_shape != g.kernel)
    invalid("kernel_shape " + to_string(p.kernel_shape) + " does not match the weights " + to_string(w));
  g.strides = or_default(p.strides, k, 1, "strides");
  g.dilations = or_default(p.dilations, k, 1, "dilations");
  check_positive(g.strides, "strides");
  check_positive(g.dilations, "dilations");
  const Shape pads = or_default(p.pads, 2 * k, 0, "pads");
  g.pad_begin.assign(k, 0);
  g.pad_end.assign(k, 0);
  g.out_spatial.assign(k, 0);
  for (size_t i = 0; i < k; ++i) {
    const int64_t in = g.in_spatial[i], s = g.strides[i];
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (p.auto_pad == "NOTSET" || p.auto_pad.empty()) {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + k];
      if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) invalid("pads must not be negative, found " + to_string(pads));
    } else if (p.auto_pad == "VALID") {
    } else if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      const int64_t small = total / 2, big = total - total / 2;
      g.pad_begin[i] = p.auto_pad == "SAME_UPPER" ? small : big;
      g.pad_end[i] = p.auto_pad == "SAME_UPPER" ? big : small;
    } else {
      invalid("unsupported auto_pad '" + p.auto_pad + "'");
    }
    const int64_t padded = in + g.pad_begin[i] + g.pad_end[i];
    if (padded < dk)
      invalid("padded input size " + std::to_string(padded) + " on spatial axis " + std::to_string(i) +
              " is smaller than the dilated kernel " + std::to_string(dk));
    g.out_spatial[i] = (padded - dk) / s + 1;
  }
  return g;
}

ConvGeometry conv_transpose_geometry(const ConvParams& p, const Shape& x, const Shape& w) {
  size_t k = 0;
  common_checks(x, w, &k);
  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = p.group;
  if (g.group <= 0) invalid("group must be positive, found " + std::to_string(g.group));
  if (w[0] != g.in_channels)
    invalid("input has " + std::to_string(g.in_channels) + " channels but weights " + to_string(w) + " expect " +
            std::to_string(w[0]));
  if (g.in_channels % g.group != 0)
    invalid("input channels " + std::to_string(g.in_channels) + " are not divisible by group " +
            std::to_string(g.group));
  g.out_channels = w[1] * g.group;
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!p.kernel_shape.empty() && p.kernel_shape != g.kernel)
    invalid("kernel_shape " + to_string(p.kernel_shape) + " does not match the weights " + to_string(w));
  g.strides = or_default(p.strides, k, 1, "strides");
  g.dilations = or_default(p.dilations, k, 1, "dilations");
  check_positive(g.strides, "strides");
  check_positive(g.dilations, "dilations");
  g.output_padding = or_default(p.output_padding, k, 0, "output_padding");
  Shape out_shape = p.output_shape;
  if (out_shape.size() == k + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != k)
    invalid("output_shape " + to_string(p.output_shape) + " does not have " + std::to_string(k) + " spatial dims");
  const bool same = p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER";
  const bool explicit_pads = p.auto_pad == "NOTSET" || p.auto_pad.empty();
  if (!same && !explicit_pads && p.auto_pad != "VALID") invalid("unsupported auto_pad '" + p.auto_pad + "'");
  const Shape pads = explicit_pads ? or_default(p.pads, 2 * k, 0, "pads") : Shape(2 * k, 0);
  g.pad_begin.assign(k, 0);
  g.pad_end.assign(k, 0);
  g.out_spatial.assign(k, 0);
  for (size_t i = 0; i < k; ++i) {
    const int64_t in = g.in_spatial[i], s = g.strides[i];
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (g.output_padding[i] < 0) invalid("output_padding must not be negative");
    const int64_t full = s * (in - 1) + g.output_padding[i] + dk;
    if (same) {
      // Spec and reference implementation: the odd unit of padding goes at the end for SAME_UPPER.
      const int64_t out = out_shape.empty() ? in * s : out_shape[i];
      const int64_t total = full - out;
      if (total >= 0) {
        g.pad_begin[i] = p.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      }
      g.pad_end[i] = total - g.pad_begin[i];
      g.out_spatial[i] = out;
    } else {
      // Explicit pads (zero for VALID); an explicit output_shape then only moves the end, as the
      // reference implementation does (a negative end pad extends the output with bias only).
      g.pad_begin[i] = pads[i];
      if (pads[i] < 0 || pads[i + k] < 0) invalid("pads must not be negative, found " + to_string(pads));
      g.out_spatial[i] = out_shape.empty() ? full - pads[i] - pads[i + k] : out_shape[i];
      g.pad_end[i] = full - g.pad_begin[i] - g.out_spatial[i];
    }
    if (g.out_spatial[i] < 0)
      invalid("computed output size " + std::to_string(g.out_spatial[i]) + " on spatial axis " + std::to_string(i) +
              " is negative");
  }
  return g;
}

}  // namespace ephost::cpu::math
