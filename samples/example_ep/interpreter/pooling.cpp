#include "pooling.h"

#include <algorithm>
#include <limits>

#include "simd.h"
#include "window.h"

namespace example_ep {
namespace {

// Op::ints of kMaxPool: kernel (h, w), pads (top, left, bottom, right), strides (h, w), dilations (h, w), ceil_mode.
Window2d pool_window(const Op& op) {
  const auto& v = op.ints;
  return Window2d{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
}

}  // namespace

Shape max_pool_output_shape(const Op& op, const Shape& x) {
  if (x.size() != 4) bad_input(op, "input of shape " + shape_text(x) + " is not NCHW");
  const Window2d win = pool_window(op);
  const bool ceil_mode = op.ints[10] != 0;
  const int64_t Ho = win.output_rows(x[2], ceil_mode), Wo = win.output_columns(x[3], ceil_mode);
  if (Ho < 1 || Wo < 1) bad_input(op, "input of shape " + shape_text(x) + " is smaller than the window");
  return {x[0], x[1], Ho, Wo};
}

void max_pool(const Op& op, const ConstTensor& x, float* y, const Shape& y_shape) {
  const Window2d win = pool_window(op);
  const int64_t planes = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t Ho = y_shape[2], Wo = y_shape[3];
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.data + p * H * W;
    float* yp = y + p * Ho * Wo;
    // Padding never wins a max: windows only look at the taps inside the image.
    std::fill(yp, yp + Ho * Wo, -std::numeric_limits<float>::infinity());
    for (int64_t oh = 0; oh < Ho; ++oh) {
      float* yrow = yp + oh * Wo;
      for (int64_t i = 0; i < win.kh; ++i) {
        const int64_t ih = win.input_row(oh, i);
        if (ih < 0 || ih >= H) continue;
        const float* xrow = xp + ih * W;
        for (int64_t j = 0; j < win.kw; ++j) {
          const ColumnRange r = win.valid_columns(j, W, Wo);
          const int64_t offset = j * win.dw - win.pad_left;
          for (int64_t ow = r.begin; ow < r.end; ++ow) yrow[ow] = std::max(yrow[ow], xrow[ow * win.sw + offset]);
        }
      }
    }
  }
}

Shape global_average_pool_output_shape(const Op& op, const Shape& x) {
  if (x.size() < 3) bad_input(op, "input of shape " + shape_text(x) + " has no spatial dimensions");
  Shape y(x.size(), 1);
  y[0] = x[0];
  y[1] = x[1];
  return y;
}

// Eight running sums per plane (vector lanes), added up in double at the end: fast, and the error of
// a long float sum stays small because each lane sums only an eighth of the plane.
EXAMPLE_EP_MULTIVERSION
void global_average_pool(const ConstTensor& x, float* y) {
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t size = planes == 0 ? 0 : numel(x.shape) / planes;
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.data + p * size;
    Vec8 lanes = {};
    int64_t i = 0;
    for (; i + 8 <= size; i += 8) {
      Vec8 v;
      EXAMPLE_EP_LOAD8(v, xp + i);
      lanes += v;
    }
    double sum = 0.0;
    for (int k = 0; k < 8; ++k) sum += lanes[k];
    for (; i < size; ++i) sum += xp[i];
    y[p] = size == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(size));
  }
}

}  // namespace example_ep
