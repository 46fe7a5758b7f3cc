// The sliding window shared by Conv and MaxPool: kernel, padding, stride and dilation over H and W.
#pragma once

#include <algorithm>
#include <cstdint>

namespace example_ep {

// Output columns [begin, end) whose input column lies inside the image.
struct ColumnRange {
  int64_t begin, end;
};

struct Window2d {
  int64_t kh, kw;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t sh, sw;
  int64_t dh, dw;

  // Output size along one axis; ceil_mode rounds up but never starts a window in the end padding.
  static int64_t output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
                             int64_t dilation, bool ceil_mode) {
    const int64_t span = in + pad_begin + pad_end - ((kernel - 1) * dilation + 1);
    if (span < 0) return 0;
    int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
    return out;
  }
  int64_t output_rows(int64_t H, bool ceil_mode = false) const {
    return output_size(H, pad_top, pad_bottom, kh, sh, dh, ceil_mode);
  }
  int64_t output_columns(int64_t W, bool ceil_mode = false) const {
    return output_size(W, pad_left, pad_right, kw, sw, dw, ceil_mode);
  }
  // The input row that kernel row i of output row oh reads (may lie in the padding).
  int64_t input_row(int64_t oh, int64_t i) const { return oh * sh - pad_top + i * dh; }
  // The output columns for which kernel column j reads inside [0, W): input column ow * sw + j * dw - pad_left.
  ColumnRange valid_columns(int64_t j, int64_t W, int64_t Wo) const {
    const int64_t offset = j * dw - pad_left;
    const int64_t begin = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
    const int64_t end = W - 1 - offset >= 0 ? std::min(Wo, (W - 1 - offset) / sw + 1) : 0;
    return {std::min(begin, end), end};
  }
};

}  // namespace example_ep
