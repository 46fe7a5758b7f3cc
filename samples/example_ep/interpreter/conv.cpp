#include "conv.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "gemm.h"
#include "simd.h"
#include "window.h"

namespace example_ep {
namespace {

// Op::ints of kConv: group, pads (top, left, bottom, right), strides (h, w), dilations (h, w).
struct ConvParams {
  int64_t group;
  Window2d window;
  explicit ConvParams(const Op& op, const Shape& w)
      : group(op.ints[0]), window{w[2], w[3], op.ints[1], op.ints[2], op.ints[3], op.ints[4],
                                  op.ints[5], op.ints[6], op.ints[7], op.ints[8]} {}
};

// A kernel row of a depthwise window on one output row: the input row it reads and its kw weights.
struct TapRow {
  const float* input;
  const float* weights;
};

// Channel c of every image: y = sum over the window of w[c] * x[c] (one filter per channel). Per
// output row, the columns whose taps all lie inside the image (nearly all of them) keep the sum in a
// register eight columns at a time; only the border columns check each tap.
EXAMPLE_EP_MULTIVERSION
void depthwise(const ConstTensor& x, const float* w, const float* bias, const Window2d& win, float* y, int64_t Ho,
               int64_t Wo) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], kw = win.kw;
  // Input column of kernel column j at output column ow: ow * sw + offsets[j].
  std::vector<int64_t> offsets(static_cast<size_t>(kw));
  int64_t inner_begin = 0, inner_end = Wo;
  for (int64_t j = 0; j < kw; ++j) {
    offsets[j] = j * win.dw - win.pad_left;
    const ColumnRange r = win.valid_columns(j, W, Wo);
    inner_begin = std::max(inner_begin, r.begin);
    inner_end = std::min(inner_end, r.end);
  }
  inner_end = std::max(inner_begin, inner_end);
  const int64_t* off = offsets.data();
  std::vector<TapRow> rows(static_cast<size_t>(win.kh));
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const int64_t c = nc % C;
    const float* xp = x.data + nc * H * W;
    const float* wc = w + c * win.kh * kw;
    const float b = bias ? bias[c] : 0.0f;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      size_t n = 0;  // kernel rows inside the image
      for (int64_t i = 0; i < win.kh; ++i) {
        const int64_t ih = win.input_row(oh, i);
        if (ih >= 0 && ih < H) rows[n++] = TapRow{xp + ih * W, wc + i * kw};
      }
      float* yrow = y + (nc * Ho + oh) * Wo;
      auto border_column = [&](int64_t ow) {
        float acc = b;
        for (size_t r = 0; r < n; ++r)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t iw = ow * win.sw + off[j];
            if (iw >= 0 && iw < W) acc += rows[r].weights[j] * rows[r].input[iw];
          }
        yrow[ow] = acc;
      };
      for (int64_t ow = 0; ow < inner_begin; ++ow) border_column(ow);
      int64_t ow = inner_begin;
      if (win.sw == 1) {
        for (; ow + 8 <= inner_end; ow += 8) {
          Vec8 acc = Vec8{} + b;
          for (size_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < kw; ++j) {
              Vec8 xv;
              EXAMPLE_EP_LOAD8(xv, rows[r].input + ow + off[j]);
              acc += rows[r].weights[j] * xv;
            }
          EXAMPLE_EP_STORE8(yrow + ow, acc);
        }
      }
      for (; ow < inner_end; ++ow) {
        float acc = b;
        for (size_t r = 0; r < n; ++r)
          for (int64_t j = 0; j < kw; ++j) acc += rows[r].weights[j] * rows[r].input[ow * win.sw + off[j]];
        yrow[ow] = acc;
      }
      for (int64_t o = inner_end; o < Wo; ++o) border_column(o);
    }
  }
}

// col[(c * kh + i) * kw + j][oh * Wo + ow] = x[c][input_row(oh, i)][input column] (0 in the padding).
void im2col(const float* x, int64_t C, int64_t H, int64_t W, const Window2d& win, int64_t Ho, int64_t Wo, float* col) {
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < win.kh; ++i)
      for (int64_t j = 0; j < win.kw; ++j) {
        float* dst = col + ((c * win.kh + i) * win.kw + j) * Ho * Wo;
        const ColumnRange r = win.valid_columns(j, W, Wo);
        const int64_t offset = j * win.dw - win.pad_left;
        for (int64_t oh = 0; oh < Ho; ++oh, dst += Wo) {
          const int64_t ih = win.input_row(oh, i);
          if (ih < 0 || ih >= H || r.begin >= r.end) {
            std::fill(dst, dst + Wo, 0.0f);
            continue;
          }
          const float* xrow = x + (c * H + ih) * W;
          std::fill(dst, dst + r.begin, 0.0f);
          if (win.sw == 1) {
            std::memcpy(dst + r.begin, xrow + r.begin + offset, (r.end - r.begin) * sizeof(float));
          } else {
            for (int64_t ow = r.begin; ow < r.end; ++ow) dst[ow] = xrow[ow * win.sw + offset];
          }
          std::fill(dst + r.end, dst + Wo, 0.0f);
        }
      }
}

}  // namespace

Shape conv_output_shape(const Op& op, const Shape& x, const Shape& w) {
  if (x.size() != 4) bad_input(op, "input of shape " + shape_text(x) + " is not NCHW");
  const ConvParams p(op, w);
  if (x[1] != w[1] * p.group)
    bad_input(op, "input has " + std::to_string(x[1]) + " channels, the weights expect " + std::to_string(w[1] * p.group));
  const int64_t Ho = p.window.output_rows(x[2]), Wo = p.window.output_columns(x[3]);
  if (Ho < 1 || Wo < 1) bad_input(op, "input of shape " + shape_text(x) + " is smaller than the kernel");
  return {x[0], w[0], Ho, Wo};
}

void conv(const Op& op, const ConstTensor& x, const ConstTensor& w, const float* bias, float* y, const Shape& y_shape) {
  const ConvParams p(op, w.shape);
  const Window2d& win = p.window;
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = w.shape[0], Ho = y_shape[2], Wo = y_shape[3];
  if (p.group == C && M == C && w.shape[1] == 1) {
    depthwise(x, w.data, bias, win, y, Ho, Wo);
    return;
  }
  const int64_t Cg = C / p.group, Mg = M / p.group, K = Cg * win.kh * win.kw, P = Ho * Wo;
  // A 1x1 kernel with unit stride and no padding reads x as it lies: it is its own im2col.
  const bool direct = win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 && win.pad_top == 0 &&
                      win.pad_left == 0 && win.pad_bottom == 0 && win.pad_right == 0;
  std::unique_ptr<float[]> col(direct ? nullptr : new float[static_cast<size_t>(K * P)]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      const float* xg = x.data + (n * C + g * Cg) * H * W;
      float* yg = y + (n * M + g * Mg) * P;
      if (bias)
        for (int64_t m = 0; m < Mg; ++m) std::fill(yg + m * P, yg + (m + 1) * P, bias[g * Mg + m]);
      const float* b = xg;
      if (!direct) {
        im2col(xg, Cg, H, W, win, Ho, Wo, col.get());
        b = col.get();
      }
      gemm(Mg, P, K, w.data + g * Mg * K, K, b, P, yg, P, bias != nullptr);
    }
}

}  // namespace example_ep
