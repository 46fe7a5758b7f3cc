// Operators new in opsets 19 and 20: DeformConv (19); AffineGrid, RegexFullMatch, StringConcat,
// StringSplit and ImageDecoder (20; decoding itself is in image/).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "ephost/sdk/scratch.hpp"
#include "image/image_decoding.h"
#include "kernel_registry.h"
#include "math/broadcast.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

int64_t product(const Shape& s, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= s[i];
  return p;
}

// ---- DeformConv -----------------------------------------------------------------------------------
// For each sample, the kernel taps are gathered into columns [C * prod(kernel), positions] at their
// offset positions (multilinear interpolation, zero outside X), weighted by the mask, and each group's
// weights [oC / group, C / group * prod(kernel)] multiply its columns.

class DeformConvKernel : public CpuKernel {
 public:
  DeformConvKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), dilations_(node.attr_ints("dilations")), kernel_(node.attr_ints("kernel_shape")),
        pads_(node.attr_ints("pads")), strides_(node.attr_ints("strides")), group_(node.attr_int("group", 1)),
        offset_group_(node.attr_int("offset_group", 1)) {
    if (group_ < 1 || offset_group_ < 1) fail_node(node, "group and offset_group must be positive");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X"), w = required(ctx, 1, "W"), off = required(ctx, 2, "offset");
    const sdk::Tensor b = ctx.input(3), mask = ctx.input(4);
    for (const sdk::Tensor* t : {&w, &off})
      if (t->elem_type() != x.elem_type()) fail("X, W, offset, B and mask must have one element type");
    const Shape xs = x.shape(), ws = w.shape(), os_in = off.shape();
    if (xs.size() < 3 || ws.size() != xs.size())
      fail("X must be [N, C, D1, ...] and W [oC, C / group, k1, ...] of the same rank, found " + math::to_string(xs) +
           " and " + math::to_string(ws));
    const size_t n = xs.size() - 2;
    const int64_t N = xs[0], C = xs[1], OC = ws[0];
    Shape kernel = kernel_.empty() ? Shape(ws.begin() + 2, ws.end()) : kernel_;
    Shape strides = strides_.empty() ? Shape(n, 1) : strides_, dilations = dilations_.empty() ? Shape(n, 1) : dilations_;
    Shape pads = pads_.empty() ? Shape(2 * n, 0) : pads_;
    if (kernel.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
      fail("kernel_shape, strides and dilations need one value per spatial axis and pads two");
    for (size_t i = 0; i < n; ++i) {
      if (kernel[i] != ws[i + 2]) fail("kernel_shape does not match W's spatial dimensions");
      if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + n] < 0)
        fail("strides and dilations must be positive and pads not negative");
    }
    if (C % group_ != 0 || OC % group_ != 0 || ws[1] * group_ != C)
      fail("X's channels (" + std::to_string(C) + ") must be W's dimension 1 times group, and W's dimension 0 a "
           "multiple of group");
    if (C % offset_group_ != 0) fail("X's channels must be a multiple of offset_group");
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t span = xs[i + 2] + pads[i] + pads[i + n] - ((kernel[i] - 1) * dilations[i] + 1);
      if (span < 0) fail("the kernel is larger than the padded input");
      out[i] = span / strides[i] + 1;
    }
    const int64_t K = product(kernel), P = product(out), S = product(xs, 2);
    Shape expect_off = {N, offset_group_ * K * static_cast<int64_t>(n)};
    expect_off.insert(expect_off.end(), out.begin(), out.end());
    if (os_in != expect_off) fail("offset must be " + math::to_string(expect_off) + ", found " + math::to_string(os_in));
    if (mask.present()) {
      if (mask.elem_type() != x.elem_type()) fail("X, W, offset, B and mask must have one element type");
      Shape expect_mask = {N, offset_group_ * K};
      expect_mask.insert(expect_mask.end(), out.begin(), out.end());
      if (mask.shape() != expect_mask)
        fail("mask must be " + math::to_string(expect_mask) + ", found " + math::to_string(mask.shape()));
    }
    if (b.present() && (b.elem_type() != x.elem_type() || b.shape() != Shape{OC}))
      fail("B must be [" + std::to_string(OC) + "] of X's type");
    Shape ys = {N, OC};
    ys.insert(ys.end(), out.begin(), out.end());
    const bool ok = dispatch(FloatTypes{}, x.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      T* y = ctx.output<T>(0, ys);
      if (product(ys) == 0) return;
      compute<T>(x.data<T>(), w.data<T>(), off.data<T>(), b.present() ? b.data<T>() : nullptr,
                 mask.present() ? mask.data<T>() : nullptr, y, xs, kernel, strides, dilations, pads, out, OC, K, P, S,
                 threads);
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(x.elem_type()));
  }

 private:
  template <typename T>
  void compute(const T* x, const T* w, const T* off, const T* bias, const T* mask, T* y, const Shape& xs,
               const Shape& kernel, const Shape& strides, const Shape& dilations, const Shape& pads, const Shape& out,
               int64_t OC, int64_t K, int64_t P, int64_t S, int threads) const {
    const size_t n = xs.size() - 2;
    const int64_t N = xs[0], C = xs[1], Cg = C / group_, OCg = OC / group_, Coff = C / offset_group_;
    std::vector<T> cols = sdk::scratch_vector<T>({C, K, P}, "DeformConv's column buffer");
    const int64_t corners = int64_t(1) << n;
    for (int64_t b = 0; b < N; ++b) {
      const T* xb = x + b * C * S;
      const T* ob = off + b * offset_group_ * K * static_cast<int64_t>(n) * P;
      const T* mb = mask ? mask + b * offset_group_ * K * P : nullptr;
      // Columns: row (c, k), column p.
      math::parallel_for(C * K, threads, 1, [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> kidx(n), pidx(n);
        std::vector<double> pos(n);
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t c = r / K, k = r % K, og = c / Coff;
          int64_t rem = k;
          for (size_t d = n; d-- > 0;) {
            kidx[d] = rem % kernel[d];
            rem /= kernel[d];
          }
          const T* plane = xb + c * S;
          T* col = cols.data() + r * P;
          std::fill(pidx.begin(), pidx.end(), 0);
          for (int64_t p = 0; p < P; ++p) {
            for (size_t d = 0; d < n; ++d) {
              const T o = ob[((og * K + k) * static_cast<int64_t>(n) + static_cast<int64_t>(d)) * P + p];
              pos[d] = static_cast<double>(pidx[d] * strides[d] - pads[d] + kidx[d] * dilations[d]) +
                       static_cast<double>(o);
            }
            double acc = 0;
            for (int64_t corner = 0; corner < corners; ++corner) {
              double weight = 1;
              int64_t at = 0;
              bool inside = true;
              for (size_t d = 0; d < n && inside; ++d) {
                const double lo = std::floor(pos[d]);
                const bool up = (corner >> d) & 1;
                const double q = up ? lo + 1 : lo;
                const double frac = pos[d] - lo;
                weight *= up ? frac : 1 - frac;
                if (!(q >= 0 && q < static_cast<double>(xs[d + 2]))) inside = false;
                else at = at * xs[d + 2] + static_cast<int64_t>(q);
              }
              if (inside && weight != 0) acc += weight * static_cast<double>(plane[at]);
            }
            if (mb) acc *= static_cast<double>(mb[(og * K + k) * P + p]);
            col[p] = static_cast<T>(acc);
            for (size_t d = n; d-- > 0;) {
              if (++pidx[d] < out[d]) break;
              pidx[d] = 0;
            }
          }
        }
      });
      // y[b, g * OCg + o, p] = sum over (c in group g, k) of w[g * OCg + o, c, k] * cols[(g * Cg + c) * K + k, p].
      T* yb = y + b * OC * P;
      math::parallel_for(OC, threads, 1, [&](int64_t o0, int64_t o1) {
        std::vector<double> acc(static_cast<size_t>(P));
        for (int64_t o = o0; o < o1; ++o) {
          const int64_t g = o / OCg;
          std::fill(acc.begin(), acc.end(), bias ? static_cast<double>(bias[o]) : 0.0);
          const T* wo = w + o * Cg * K;
          const T* cg = cols.data() + g * Cg * K * P;
          for (int64_t ck = 0; ck < Cg * K; ++ck) {
            const double wv = static_cast<double>(wo[ck]);
            if (wv == 0) continue;
            const T* row = cg + ck * P;
            for (int64_t p = 0; p < P; ++p) acc[p] += wv * static_cast<double>(row[p]);
          }
          for (int64_t p = 0; p < P; ++p) yb[o * P + p] = static_cast<T>(acc[p]);
        }
      });
    }
    (void)N;
  }

  Shape dilations_, kernel_, pads_, strides_;
  int64_t group_, offset_group_;
};

// ---- AffineGrid -----------------------------------------------------------------------------------

class AffineGridKernel : public CpuKernel {
 public:
  AffineGridKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), align_(node.attr_int("align_corners", 0) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor theta = required(ctx, 0, "theta"), size = required(ctx, 1, "size");
    const std::vector<int64_t> sz = ints_of(size, "size");
    if (sz.size() != 4 && sz.size() != 5) fail("size must be [N, C, H, W] or [N, C, D, H, W]");
    const int64_t n = static_cast<int64_t>(sz.size()) - 2, N = sz[0];
    for (int64_t v : sz)
      if (v < 0) fail("size must not hold negative values");
    const Shape ts = theta.shape();
    if (ts != Shape{N, n, n + 1})
      fail("theta must be " + math::to_string(Shape{N, n, n + 1}) + " for size " + math::to_string(Shape(sz.begin(), sz.end())) +
           ", found " + math::to_string(ts));
    Shape gs = {N};
    for (int64_t i = 0; i < n; ++i) gs.push_back(sz[2 + i]);
    gs.push_back(n);
    // Spatial sizes in x, y(, z) order: W first.
    std::vector<int64_t> dims(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) dims[i] = sz[2 + n - 1 - i];
    const int64_t points = product(Shape(sz.begin() + 2, sz.end()));
    const bool align = align_;
    // Normalized position of pixel i of `size`: corner pixel centres at -1 and 1 with align_corners (a
    // single pixel at -1, as numpy's linspace(-1, 1, 1) gives), else pixel centres within [-1, 1].
    auto coordinate = [align](int64_t i, int64_t size) {
      if (align && size == 1) return -1.0;
      const double s = static_cast<double>(size);
      return align ? -1.0 + 2.0 * static_cast<double>(i) / (s - 1) : (2.0 * static_cast<double>(i) + 1) / s - 1.0;
    };
    const bool ok = dispatch(FloatTypes{}, theta.elem_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* th = theta.data<T>();
      T* g = ctx.output<T>(0, gs);
      math::parallel_for(N * points, threads, 1024, [&](int64_t i0, int64_t i1) {
        std::vector<double> base(static_cast<size_t>(n) + 1);
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t b = i / points;
          int64_t rem = i % points;
          // rem runs over (D,) H, W with W fastest: base = (x, y(, z), 1).
          for (int64_t d = 0; d < n; ++d) {
            base[d] = coordinate(rem % dims[d], dims[d]);
            rem /= dims[d];
          }
          base[n] = 1.0;
          const T* m = th + b * n * (n + 1);
          for (int64_t r = 0; r < n; ++r) {
            double acc = 0;
            for (int64_t c = 0; c <= n; ++c) acc += static_cast<double>(m[r * (n + 1) + c]) * base[c];
            g[i * n + r] = static_cast<T>(acc);
          }
        }
      });
    });
    if (!ok) fail(std::string("unsupported type ") + type_name(theta.elem_type()));
  }

 private:
  bool align_;
};

// ---- strings --------------------------------------------------------------------------------------

// RegexFullMatch with std::regex (ECMAScript grammar), not RE2 as ONNX names: the common syntax
// (classes, quantifiers, groups, alternation, anchors, \d \w \s) means the same, but RE2-only forms
// ((?P<name>...), \pL and other Unicode classes, (?i) flags) are refused when the pattern is compiled,
// ECMAScript-only ones (backreferences, lookahead) are accepted, and matching is by byte, not by UTF-8
// character.
class RegexFullMatchKernel : public CpuKernel {
 public:
  RegexFullMatchKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c) {
    const std::string pattern = node.attr_string("pattern", "");
    try {
      regex_ = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail_node(node, "pattern '" + pattern + "' is not a regular expression this kernel understands (std::regex, "
                      "ECMAScript grammar, not RE2): " + e.what());
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_STRING}, "X");
    const char* const* in = x.data<const char*>();
    bool* y = ctx.output<bool>(0, x.shape());
    for (int64_t i = 0; i < x.size(); ++i) y[i] = std::regex_match(in[i], regex_);
  }

 private:
  std::regex regex_;
};

class StringConcatKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor a = required(ctx, 0, "X"), b = required(ctx, 1, "Y");
    expect_type(a, {EPHOST_ELEMENT_STRING}, "X");
    expect_type(b, {EPHOST_ELEMENT_STRING}, "Y");
    const Shape as = a.shape(), bs = b.shape(), os = math::broadcast_shapes(as, bs);
    const char* const* pa = a.data<const char*>();
    const char* const* pb = b.data<const char*>();
    const char** y = ctx.output<const char*>(0, os);
    const int64_t total = product(os);
    // Element i of the output reads the broadcast positions of X and Y.
    const size_t r = os.size();
    std::vector<int64_t> idx(r, 0);
    auto offset = [&](const Shape& s) {
      int64_t at = 0;
      const size_t lead = r - s.size();
      for (size_t d = 0; d < s.size(); ++d) at = at * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
      return at;
    };
    std::string joined;
    for (int64_t i = 0; i < total; ++i) {
      joined.assign(pa[offset(as)]);
      joined.append(pb[offset(bs)]);
      y[i] = ctx.output_string(0, joined);
      for (size_t d = r; d-- > 0;) {
        if (++idx[d] < os[d]) break;
        idx[d] = 0;
      }
    }
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's str.split semantics, which the ONNX spec follows.
std::vector<std::string> split(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (delimiter.empty()) {
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        parts.push_back(s.substr(i));  // the rest as it is, trailing whitespace included (as Python)
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) break;
    const size_t at = s.find(delimiter, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

class StringSplitKernel : public CpuKernel {
 public:
  StringSplitKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), delimiter_(node.attr_string("delimiter", "")),
        maxsplit_(node.has_attr("maxsplit") ? node.attr_int("maxsplit", -1) : -1) {
    if (node.has_attr("maxsplit") && maxsplit_ < 0) fail_node(node, "maxsplit must not be negative");
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_STRING}, "X");
    const char* const* in = x.data<const char*>();
    const int64_t count = x.size();
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(count));
    int64_t widest = 0;
    for (int64_t i = 0; i < count; ++i) {
      parts[i] = split(in[i], delimiter_, maxsplit_);
      widest = std::max<int64_t>(widest, static_cast<int64_t>(parts[i].size()));
    }
    Shape ys = x.shape();
    ys.push_back(widest);
    const char** y = ctx.output<const char*>(0, ys);
    const std::string empty;
    for (int64_t i = 0; i < count; ++i)
      for (int64_t j = 0; j < widest; ++j)
        y[i * widest + j] = ctx.output_string(0, j < static_cast<int64_t>(parts[i].size()) ? parts[i][j] : empty);
    if (output_wanted(1)) {
      int64_t* z = ctx.output<int64_t>(1, x.shape());
      for (int64_t i = 0; i < count; ++i) z[i] = static_cast<int64_t>(parts[i].size());
    }
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

// ---- ImageDecoder ---------------------------------------------------------------------------------

// One JPEG or PNG stream to [H, W, 3] (RGB or BGR) or [H, W, 1] (Grayscale, Pillow's 'L' conversion), as
// ONNX's reference (Pillow) decodes it.
class ImageDecoderKernel : public CpuKernel {
 public:
  ImageDecoderKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), format_(node.attr_string("pixel_format", "RGB")) {
    if (format_ != "RGB" && format_ != "BGR" && format_ != "Grayscale")
      sdk::fail(EPHOST_INVALID_ARGUMENT, "ImageDecoder '" + node.name() +
                                             "': pixel_format must be RGB, BGR or Grayscale, got '" + format_ + "'");
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor s = required(ctx, 0, "encoded_stream");
    expect_type(s, {EPHOST_ELEMENT_UINT8}, "encoded_stream");
    if (s.shape().size() != 1)
      sdk::fail(EPHOST_INVALID_ARGUMENT, "encoded_stream must be 1-D");
    image::RgbImage decoded;
    std::string error;
    if (!image::decode_rgb(s.data<uint8_t>(), static_cast<size_t>(s.size()), decoded, error))
      sdk::fail(EPHOST_INVALID_ARGUMENT, error);
    const int64_t pixels = decoded.height * decoded.width;
    const uint8_t* rgb = decoded.pixels.data();
    if (format_ == "Grayscale") {
      uint8_t* y = ctx.output<uint8_t>(0, {decoded.height, decoded.width, 1});
      for (int64_t i = 0; i < pixels; ++i) y[i] = image::luma_601(rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2]);
      return;
    }
    uint8_t* y = ctx.output<uint8_t>(0, {decoded.height, decoded.width, 3});
    if (format_ == "RGB") {
      std::memcpy(y, rgb, decoded.pixels.size());
      return;
    }
    for (int64_t i = 0; i < pixels; ++i) {
      y[i * 3] = rgb[i * 3 + 2];
      y[i * 3 + 1] = rgb[i * 3 + 1];
      y[i * 3 + 2] = rgb[i * 3];
    }
  }

 private:
  std::string format_;
};

}  // namespace

void register_opset19_20_kernels(KernelRegistry& r) {
  const std::initializer_list<int32_t> real = {EPHOST_ELEMENT_FLOAT, EPHOST_ELEMENT_DOUBLE};
  r.add("DeformConv", 19, 19, inputs_of(real, {0, 1, 2, 3, 4}), make_factory<DeformConvKernel>());
  r.add("AffineGrid", 20, 20, inputs_of(real), make_factory<AffineGridKernel>());
  r.add("RegexFullMatch", 20, 20, inputs_of({EPHOST_ELEMENT_STRING}), make_factory<RegexFullMatchKernel>());
  r.add("StringConcat", 20, 20, inputs_of({EPHOST_ELEMENT_STRING}, {0, 1}), make_factory<StringConcatKernel>());
  r.add("StringSplit", 20, 20, inputs_of({EPHOST_ELEMENT_STRING}), make_factory<StringSplitKernel>());
  r.add("ImageDecoder", 20, 20, inputs_of({EPHOST_ELEMENT_UINT8}), make_factory<ImageDecoderKernel>());
}

}  // namespace ephost::cpu
